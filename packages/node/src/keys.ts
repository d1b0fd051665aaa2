/**
 * The node's key ring (Core VRP v0.1 §3, §3.1). One Ed25519 key signs at any instant; rotation is
 * additive (the new key is published beside the old one, the old one stays in the JWKS until
 * every offer it signed has passed `valid_until`, then drops out by itself); revocation removes
 * a key at once, which makes every offer signed with it unverifiable.
 *
 * A rotation may publish the new key ahead of signing with it (`activates_at` later than now):
 * agents whose JWKS cache was filled in between already hold the new key when the first offer
 * signed with it reaches them. Which key signs is decided by time, from the store's records.
 *
 * Private keys are files under `<dataDir>/keys/` (0600, directory 0700), one per kid; the
 * store holds only public JWKs and lifecycle times. A retired or revoked key's private file
 * is deleted once it has stopped signing: it never signs again.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Clock, createJwsSigner, type Ed25519PrivateJwk, generateEd25519Jwk, type JwsSigner, publicJwkOf } from '@vrpkit/core';
import type { VrpJwk, VrpJwks } from '@vrpkit/protocol';
import { NodeError } from './errors.js';
import type { NodeStore, SigningKeyRecord } from './store/store.js';

const KID_SAFE = /^[a-z0-9.-]+-\d{4}-\d{2}-\d{2}-\d{2,}$/;

function keyFile(keysDir: string, kid: string): string {
  if (!KID_SAFE.test(kid)) throw new NodeError('invalid_kid');
  return join(keysDir, `${kid}.jwk`);
}

/** kid `{domain}-{YYYY-MM-DD}-{NN}` (the convention of Core VRP v0.1 §3 and the spec's key-rotation guide; verifiers treat kid as opaque), NN the next free sequence number of that UTC day. */
async function nextKid(store: NodeStore, domain: string, now: number): Promise<string> {
  const prefix = `${domain}-${new Date(now).toISOString().slice(0, 10)}-`;
  const used = (await store.kidsWithPrefix(prefix)).map((r) => Number(r.kid.slice(prefix.length))).filter(Number.isInteger);
  return `${prefix}${String(Math.max(0, ...used) + 1).padStart(2, '0')}`;
}

/** A key's state at `now`, from its lifecycle times: published ahead and not yet signing, signing, retired, or revoked. */
export type KeyState = 'pending' | 'active' | 'retired' | 'revoked';

export function keyStateAt(k: SigningKeyRecord, now: number): KeyState {
  if (k.status === 'revoked') return 'revoked';
  if (k.retired_at !== null && Date.parse(k.retired_at) <= now) return 'retired';
  // Only a key published ahead waits for its activation. A key that signed from its creation does
  // not turn pending when the node's clock steps back before that moment: the node keeps signing.
  const activatesAt = Date.parse(k.activates_at);
  return activatesAt > Date.parse(k.created_at) && activatesAt > now ? 'pending' : 'active';
}

/**
 * The span `[from, until)` around `now` in which time alone changes no key's state among `keys`:
 * between the nearest activation or retirement instants (`keyStateAt`'s only time inputs) on
 * either side. The key signing at `now` signs throughout it.
 */
function stateSpanAt(keys: SigningKeyRecord[], now: number): { from: number; until: number } {
  let from = Number.NEGATIVE_INFINITY;
  let until = Number.POSITIVE_INFINITY;
  for (const k of keys) {
    for (const at of [k.activates_at, k.retired_at]) {
      if (at === null) continue;
      const t = Date.parse(at);
      if (t <= now) from = Math.max(from, t);
      else until = Math.min(until, t);
    }
  }
  return { from, until };
}

/** The key that signs at `now`: the active one (if two ever overlapped, the later activation wins). */
export function signingKeyAt(keys: SigningKeyRecord[], now: number): SigningKeyRecord | undefined {
  let signing: SigningKeyRecord | undefined;
  for (const k of keys) {
    if (keyStateAt(k, now) === 'active' && (!signing || k.activates_at > signing.activates_at)) signing = k;
  }
  return signing;
}

/** Delete the private files of keys that no longer sign (retired by now, or revoked). */
async function deleteRetiredKeyFiles(store: NodeStore, keysDir: string, now: number): Promise<void> {
  for (const k of await store.keys()) {
    const state = keyStateAt(k, now);
    if (state === 'retired' || state === 'revoked') rmSync(keyFile(keysDir, k.kid), { force: true });
  }
}

/**
 * Generate a key, write its private half (0600), and publish it; it signs from
 * `now + publishAheadMs` on (at once by default). The key signing until then is retired at that
 * instant and kept published for `retentionMs` more; its private file is deleted once it has
 * stopped signing (at once, or by the next key operation after the new key took over).
 */
export async function activateNewKey(
  store: NodeStore,
  keysDir: string,
  domain: string,
  retentionMs: number,
  now: number,
  publishAheadMs = 0,
) {
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  chmodSync(keysDir, 0o700);
  const kid = await nextKid(store, domain, now);
  const { privateJwk } = await generateEd25519Jwk();
  const file = keyFile(keysDir, kid);
  writeFileSync(file, `${JSON.stringify(privateJwk)}\n`, { mode: 0o600, flag: 'wx' });
  const activatesAt = now + publishAheadMs;
  let retired: string[];
  try {
    retired = await store.activateKey(
      { kid, public_jwk: JSON.stringify(publicJwkOf(privateJwk, kid)) },
      activatesAt + retentionMs,
      now,
      activatesAt,
    );
  } catch (e) {
    rmSync(file, { force: true });
    throw e;
  }
  await deleteRetiredKeyFiles(store, keysDir, now);
  return {
    kid,
    activates_at: new Date(activatesAt).toISOString(),
    retired,
    retain_until: retired.length > 0 ? new Date(activatesAt + retentionMs).toISOString() : null,
  };
}

/**
 * Revoke a key at once (compromise). Revoking the signing key, or a key published ahead to sign
 * later, first activates a fresh key at once, so the node keeps signing.
 */
export async function revokeKeyIn(store: NodeStore, keysDir: string, domain: string, kid: string, retentionMs: number, now: number) {
  const key = (await store.keys()).find((k) => k.kid === kid);
  if (!key) throw new NodeError('unknown_kid', { kid });
  const state = keyStateAt(key, now);
  if (state === 'revoked') throw new NodeError('already_revoked', { kid });
  const replacement = state !== 'retired' ? await activateNewKey(store, keysDir, domain, retentionMs, now) : null;
  await store.setKeyStatus(kid, 'revoked', now);
  rmSync(keyFile(keysDir, kid), { force: true });
  return { kid, revoked_at: new Date(now).toISOString(), new_active_kid: replacement?.kid ?? null };
}

/** Core VRP v0.1 §3.1: the JWKS serves the active key (and one published ahead) and retired keys until `retain_until`; a revoked key never. */
export function isPublished(k: SigningKeyRecord, now: number): boolean {
  return k.status === 'active' || (k.status === 'retired' && k.retain_until !== null && Date.parse(k.retain_until) > now);
}

/** The JWKS document at `now`: every published key, public halves only. */
export function jwksAt(keys: SigningKeyRecord[], now: number): VrpJwks {
  return { keys: keys.filter((k) => isPublished(k, now)).map((k) => JSON.parse(k.public_jwk) as VrpJwk) };
}

/** Where a key ring finds a kid's private JWK: a file under the data directory, or (platform mode) the tenant's encrypted key row. */
export type PrivateKeySource = (kid: string) => Ed25519PrivateJwk;

/** The private key source of a node's `keys/` directory. */
export function keyFileSource(keysDir: string): PrivateKeySource {
  return (kid) => {
    try {
      return JSON.parse(readFileSync(keyFile(keysDir, kid), 'utf8')) as Ed25519PrivateJwk;
    } catch (cause) {
      throw new NodeError('private_key_missing', { kid }, { cause });
    }
  };
}

/** The running node's signer: its private key loaded once per kid. */
export class KeyRing {
  private active: JwsSigner | undefined;
  /** The key records `active` was chosen from, and the span of time in which it stays their signing key. */
  private chosen: { keys: SigningKeyRecord[]; from: number; until: number } | undefined;

  /** `clock` is the node's clock: which key signs is decided by time (a key published ahead starts signing at its `activates_at`). */
  /**
   * `onSign` runs before every signature the ring's signers make, with the signing kid: platform
   * metrics count them, and a platform tenant refuses (throws) a signature its state no longer allows.
   */
  constructor(
    private readonly privateKey: PrivateKeySource,
    private readonly clock: Clock,
    private readonly onSign?: (kid: string) => void,
  ) {}

  /** The signer of the key signing now among `keys` (read from the store for each offer, so rotations by another process take effect at once). */
  signerFor(keys: SigningKeyRecord[]): JwsSigner {
    const now = this.clock.now();
    // Called for every offer: while the store's key records are the same array (a snapshot is
    // reused until the revision moves) and no activation or retirement instant has passed, the
    // choice stands without parsing every key's times again.
    const c = this.chosen;
    if (this.active && c?.keys === keys && now >= c.from && now < c.until) return this.active;
    const rec = signingKeyAt(keys, now);
    if (!rec) throw new NodeError('no_active_key');
    if (this.active?.kid !== rec.kid) {
      const signer = createJwsSigner(this.privateKey(rec.kid), rec.kid);
      const { onSign } = this;
      this.active = onSign
        ? {
            kid: signer.kid,
            layout: signer.layout,
            sign(payload, extraHeader) {
              onSign(signer.kid);
              return signer.sign(payload, extraHeader);
            },
            signInto(layout, payload, target, offset) {
              onSign(signer.kid);
              return signer.signInto(layout, payload, target, offset);
            },
          }
        : signer;
    }
    this.chosen = { keys, ...stateSpanAt(keys, now) };
    return this.active;
  }

  /** The signer last seen active (sync, for the service contract). */
  current(): JwsSigner {
    if (!this.active) throw new NodeError('no_active_key');
    return this.active;
  }
}
