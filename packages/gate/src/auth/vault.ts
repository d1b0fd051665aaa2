/**
 * Sealing at rest for the credentials the gateway holds: a compact JWE (`dir`, A256GCM — `jose`,
 * never hand-rolled) under the gateway's 256-bit master key. Each value is bound to where it
 * belongs through the protected header (authenticated by GCM): a sealed token copied onto another
 * user's or another server's row does not open.
 */
import { hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';

export class VaultError extends Error {
  readonly code = 'credential_unsealable';
}

const BINDING_HEADER = 'vrp_bind';
const VAULT_KEY_INFO = 'vrpkit gate downstream credentials v1';

export class CredentialVault {
  readonly #key: Uint8Array;

  /** `key`: the 32-byte master key (never logged; only the vault holds it). */
  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new RangeError('the master key must be 32 bytes');
    this.#key = key;
  }

  async seal(binding: readonly string[], value: unknown): Promise<string> {
    return await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(value)))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', [BINDING_HEADER]: binding.join('\u0000') })
      .encrypt(this.#key);
  }

  /**
   * The vault under an operator's 256-bit master key (the one `vrp platform master-key generate`
   * writes): its own key is derived from it by HKDF-SHA256 (RFC 5869) with a label of its own, so
   * one master key can serve the platform's tenant keys and the gateway's credentials without the
   * two ever sharing an AES key.
   */
  static fromMasterKey(masterKey: Uint8Array): CredentialVault {
    if (masterKey.length !== 32) throw new RangeError('the master key must be 32 bytes');
    return new CredentialVault(new Uint8Array(hkdfSync('sha256', masterKey, new Uint8Array(), VAULT_KEY_INFO, 32)));
  }

  /** Open a sealed value; a wrong key, a tampered value or another binding is `credential_unsealable`. */
  async open<T>(binding: readonly string[], sealed: string): Promise<T> {
    let opened: Awaited<ReturnType<typeof compactDecrypt>>;
    try {
      opened = await compactDecrypt(sealed, this.#key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    } catch {
      throw new VaultError('a held credential could not be opened (another master key, or a damaged row)');
    }
    if (opened.protectedHeader[BINDING_HEADER] !== binding.join('\u0000')) {
      throw new VaultError('a held credential belongs to another server or user');
    }
    return JSON.parse(new TextDecoder().decode(opened.plaintext)) as T;
  }
}
