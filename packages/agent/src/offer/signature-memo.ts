/**
 * Signature-verification memo: "these exact signing-input and signature bytes verified under the
 * key with this RFC 7638 thumbprint". Ed25519 verification (RFC 8032 §5.1.7) is a deterministic
 * function of (message, signature, public key), so a hit answers exactly what recomputing the
 * check would: same bytes, same key, same answer. Only successes are kept. Every other check
 * (alg, kid lookup, key type, payload = offer, freshness against the clock, safe to quote) still
 * runs on every verification; only the Ed25519 computation is skipped. Internal to the package.
 *
 * The memo belongs to a `JwksCache`: thumbprints are computed (through jose) when the cache loads
 * a key set, and a key's entries are forgotten as soon as the cache drops or replaces that key,
 * so a revoked key verifies nothing from the memo (Core VRP v0.1 §3.1 rotation and revocation).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Default bound on remembered verifications (one entry ≈ 100 bytes of key plus the LRU's bookkeeping). */
export const SIGNATURE_MEMO_ENTRIES = 1000;

interface Thumbprinted {
  /** The JWK `x` the thumbprint was computed over: a JWK object mutated since then is not recognised. */
  x: string;
  thumbprint: string;
}

export class SignatureMemo {
  readonly #verified: LRUCache<string, true>;
  /** Thumbprint → its memo keys, so forgetting a key does not scan the whole memo. */
  readonly #byThumbprint = new Map<string, Set<string>>();
  /** JWK objects of the key sets the owning cache loaded → their RFC 7638 thumbprint. */
  readonly #thumbprints = new WeakMap<object, Thumbprinted>();

  constructor(maxEntries: number) {
    this.#verified = new LRUCache<string, true>({
      max: maxEntries,
      // Re-remembering a key is not a removal: its index entry must stay.
      noDisposeOnSet: true,
      // An entry evicted by the bound leaves its thumbprint's index too.
      dispose: (_value, memoKey) => {
        const thumbprint = memoKey.slice(0, memoKey.indexOf('.'));
        const keys = this.#byThumbprint.get(thumbprint);
        keys?.delete(memoKey);
        if (keys?.size === 0) this.#byThumbprint.delete(thumbprint);
      },
    });
  }

  /** Record the thumbprint of a JWK object of a key set the owning cache loaded. */
  setThumbprint(jwk: object & { x: string }, thumbprint: string): void {
    this.#thumbprints.set(jwk, { x: jwk.x, thumbprint });
  }

  /** The JWK object no longer belongs to a key set the owning cache holds. */
  unsetThumbprint(jwk: object): void {
    this.#thumbprints.delete(jwk);
  }

  /**
   * The memo key for a signature check under `jwk`, or undefined when `jwk` is not a key the
   * owning cache loaded (a caller-supplied key set is always verified in full).
   */
  keyFor(jwk: Record<string, unknown>, signingInput: string, signature: Uint8Array): string | undefined {
    const known = this.#thumbprints.get(jwk);
    if (known === undefined || known.x !== jwk.x) return undefined;
    // The signature is exactly 64 bytes whenever a check can succeed, so the concatenation is unambiguous.
    const digest = createHash('sha256').update(signingInput, 'latin1').update(signature).digest('base64url');
    // Thumbprints are base64url (no `.`): the first `.` splits the two halves.
    return `${known.thumbprint}.${digest}`;
  }

  /** Whether this check already succeeded. */
  has(memoKey: string): boolean {
    return this.#verified.get(memoKey) === true;
  }

  /** Remember a successful check (never a failure). */
  remember(memoKey: string): void {
    const thumbprint = memoKey.slice(0, memoKey.indexOf('.'));
    let keys = this.#byThumbprint.get(thumbprint);
    if (keys === undefined) {
      keys = new Set();
      this.#byThumbprint.set(thumbprint, keys);
    }
    keys.add(memoKey);
    this.#verified.set(memoKey, true);
  }

  /** Forget every check made under the key with this thumbprint (the cache dropped or replaced it). */
  forget(thumbprint: string): void {
    const keys = this.#byThumbprint.get(thumbprint);
    if (keys === undefined) return;
    // Copied: each delete runs `dispose`, which edits the set.
    for (const memoKey of [...keys]) this.#verified.delete(memoKey);
    this.#byThumbprint.delete(thumbprint);
  }

  clear(): void {
    this.#verified.clear();
    this.#byThumbprint.clear();
  }

  get size(): number {
    return this.#verified.size;
  }
}
