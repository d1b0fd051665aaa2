/**
 * Signature-verification memo: "these exact signing-input and signature bytes verified under the
 * key with this RFC 7638 thumbprint". Ed25519 verification (RFC 8032 §5.1.7) is a deterministic
 * function of (message, signature, public key), so a hit answers exactly what recomputing the
 * check would: same bytes, same key, same answer. Only successes are kept. Every other check
 * (alg, kid lookup, key type, payload = offer, freshness against the clock, safe to quote) still
 * runs on every verification; only the Ed25519 computation is skipped. Internal to the package.
 *
 * An entry is found by (thumbprint, signature) and holds the signing input it verified; a hit
 * needs the received signing input to equal it exactly. Comparing the kilobytes of
 * `header.payload` costs a fraction of hashing them (an online offer's: a hit ≈ 0.8 µs against ≈ 4 µs
 * with a SHA-256 key) and assumes nothing of a hash: the bytes themselves are compared.
 *
 * The memo belongs to a `JwksCache`: thumbprints are computed (through jose) when the cache loads
 * a key set, and a key's entries are forgotten as soon as the cache drops or replaces that key,
 * so a revoked key verifies nothing from the memo (Core VRP v0.1 §3.1 rotation and revocation).
 */
import { LRUCache } from 'lru-cache';

/** Default bound on remembered verifications (one entry ≈ its signing input, a few kilobytes for an offer). */
export const SIGNATURE_MEMO_ENTRIES = 1000;
/** Bound on the characters the memo holds, whatever the entry count: a few large JWSs cannot pin much memory. */
const SIGNATURE_MEMO_MAX_CHARS = 16 * 1024 * 1024;

/** A memo look-up: the entry's key (thumbprint and signature) and the signing input it must hold. */
export interface MemoKey {
  readonly key: string;
  readonly signingInput: string;
}

interface Thumbprinted {
  /** The JWK `x` the thumbprint was computed over: a JWK object mutated since then is not recognised. */
  x: string;
  thumbprint: string;
}

export class SignatureMemo {
  /** `thumbprint.signature` → the signing input that verified under them. */
  readonly #verified: LRUCache<string, string>;
  /** Thumbprint → its memo keys, so forgetting a key does not scan the whole memo. */
  readonly #byThumbprint = new Map<string, Set<string>>();
  /** JWK objects of the key sets the owning cache loaded → their RFC 7638 thumbprint. */
  readonly #thumbprints = new WeakMap<object, Thumbprinted>();

  constructor(maxEntries: number) {
    this.#verified = new LRUCache<string, string>({
      max: maxEntries,
      maxSize: SIGNATURE_MEMO_MAX_CHARS,
      sizeCalculation: (signingInput, memoKey) => signingInput.length + memoKey.length,
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
  keyFor(jwk: Record<string, unknown>, signingInput: string, signature: Uint8Array): MemoKey | undefined {
    const known = this.#thumbprints.get(jwk);
    if (known === undefined || known.x !== jwk.x) return undefined;
    // Thumbprints are base64url (no `.`): the first `.` splits the two halves.
    const sig = Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString('base64url');
    return { key: `${known.thumbprint}.${sig}`, signingInput };
  }

  /** Whether this check already succeeded: the same key and signature, over exactly the same signing input. */
  has(memoKey: MemoKey): boolean {
    return this.#verified.get(memoKey.key) === memoKey.signingInput;
  }

  /** Remember a successful check (never a failure). */
  remember(memoKey: MemoKey): void {
    const { key, signingInput } = memoKey;
    // A copy of its own: the received string may be a slice of a larger text (the whole envelope)
    // that the memo would otherwise keep alive without counting it. Only a miss pays for it.
    this.#verified.set(key, Buffer.from(signingInput, 'latin1').toString('latin1'));
    // An entry larger than the whole bound is not kept: nothing to index.
    if (!this.#verified.has(key)) return;
    const thumbprint = key.slice(0, key.indexOf('.'));
    let keys = this.#byThumbprint.get(thumbprint);
    if (keys === undefined) {
      keys = new Set();
      this.#byThumbprint.set(thumbprint, keys);
    }
    keys.add(key);
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
