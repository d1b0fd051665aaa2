/**
 * Key custody for platform mode: every tenant's private signing keys are stored in the database
 * sealed with AES-256-GCM under one master key, so every server process can sign for every
 * tenant without key files. The master key comes from a file or `VRPKIT_MASTER_KEY`; it is never
 * logged, never stored, and only its id (a digest) is recorded, to tell a wrong key from a
 * corrupt row. Each sealed key is bound (GCM additional data) to its tenant domain and kid, so a
 * ciphertext copied onto another tenant's row does not open.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Ed25519PrivateJwk } from '@vrpkit/core';
import { PlatformError } from './errors.js';

export const MASTER_KEY_ENV = 'VRPKIT_MASTER_KEY';
const SEALED_FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 256-bit master key and its public id (never the key itself). */
export interface MasterKey {
  readonly id: string;
  /** Held in a closure-free object; never serialise it. */
  readonly bytes: Buffer;
}

/** Parse a master key: 32 bytes as 64 hex digits or base64/base64url (surrounding whitespace ignored). */
export function parseMasterKey(text: string): MasterKey {
  const t = text.trim();
  let bytes: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) bytes = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes?.length !== 32) throw new PlatformError('invalid_master_key');
  const id = createHash('sha256').update('vrpkit-platform-master-key\0').update(bytes).digest('hex').slice(0, 16);
  const key = { id, bytes };
  // Keep the bytes out of JSON and util.inspect output (a log line with the object prints the id only).
  Object.defineProperty(key, 'bytes', { enumerable: false });
  Object.defineProperty(key, Symbol.for('nodejs.util.inspect.custom'), { value: () => `MasterKey(${id})`, enumerable: false });
  return key;
}

/** A fresh master key in the hex form `parseMasterKey` reads (`vrp platform master-key generate`). */
export function generateMasterKeyText(): string {
  return `${randomBytes(32).toString('hex')}\n`;
}

/** The master key from `--master-key-file`, else `VRPKIT_MASTER_KEY`. */
export function loadMasterKey(file?: string, env: NodeJS.ProcessEnv = process.env): MasterKey {
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new PlatformError('master_key_unreadable', { file, reason: (e as NodeJS.ErrnoException).code ?? 'error' });
    }
    return parseMasterKey(text);
  }
  const text = env[MASTER_KEY_ENV];
  if (!text) throw new PlatformError('master_key_required', { env: MASTER_KEY_ENV });
  return parseMasterKey(text);
}

const aad = (domain: string, kid: string) => Buffer.from(`${domain}\0${kid}`, 'utf8');

/** Seal a tenant's private JWK: `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to domain and kid. */
export function sealPrivateKey(master: MasterKey, domain: string, kid: string, jwk: Ed25519PrivateJwk): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master.bytes, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(domain, kid));
  const ct = Buffer.concat([cipher.update(JSON.stringify(jwk), 'utf8'), cipher.final()]);
  return [SEALED_FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** Open a sealed private JWK; a wrong master key, another tenant's row or a tampered value fails with `key_unseal_failed`. */
export function openPrivateKey(master: MasterKey, domain: string, kid: string, sealed: string): Ed25519PrivateJwk {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== SEALED_FORMAT)
    throw new PlatformError('key_unseal_failed', { kid, problem: 'has an unknown format' });
  try {
    const decipher = createDecipheriv('aes-256-gcm', master.bytes, Buffer.from(parts[1]!, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(domain, kid));
    decipher.setAuthTag(Buffer.from(parts[2]!, 'base64url'));
    const pt = Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]);
    return JSON.parse(pt.toString('utf8')) as Ed25519PrivateJwk;
  } catch (cause) {
    throw new PlatformError('key_unseal_failed', { kid, problem: 'does not open with this master key' }, { cause });
  }
}

/**
 * The secret the tenants' form tokens (the UCP guest page's, node http/forms.ts) are made with:
 * derived from the master key (HKDF-SHA256, its own label), so every serving process of the
 * platform shares it and none stores it. During a master-key rotation a process serving with the
 * new key first refuses a token made under the old one: the guest reloads the page.
 */
export function formSecretOf(m: MasterKey): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', m.bytes, new Uint8Array(0), 'vrpkit-platform-form-tokens', 32));
}
