/**
 * Signing with the cache (Core VRP v0.1 §5–§6): a judged stay built into its payload and signed,
 * and the offer as served to agents, reused from the signed-offer cache while nothing that could
 * change it has changed (offer-cache.ts) and otherwise signed in this turn's signing batch
 * (signing-turn.ts), one signature per stay and store state however many requests ask in the turn.
 */
import { randomUUID } from 'node:crypto';
import type { ParsedOfferRequest } from '@vrpkit/protocol';
import { buildOfferPayload, type SignedOffer, signOffer } from '../offer.js';
import { OfferCache, type ServedOffer } from '../offer-cache.js';
import { inSigningTurn } from '../signing-turn.js';
import { alternativesFor, judgeStay, type StayJudgement } from './calendar.js';
import type { OfferState } from './state.js';

export interface OfferSigning {
  /** Build and sign the offer for a judged stay, now (no cache). */
  sign(j: StayJudgement, s: OfferState): SignedOffer;
  /**
   * The offer served for `r` at `t` from `s`: a cached response at once, otherwise the promise of
   * one judged and signed in this turn's signing batch (and cached). A request for a stay whose
   * signature is already in the batch waits for that signature.
   */
  serve(r: ParsedOfferRequest, t: number, s: OfferState, today: string): ServedOffer | Promise<ServedOffer>;
}

export interface OfferSigningOptions {
  /** The signed-offer cache, or null for none (every served offer signed afresh). */
  cache: OfferCache | null;
  domain: string;
  /** The node's `created_at`: which node of the domain signed (part of every cache key). */
  createdAt: string;
  jwksUrl: string;
}

export function createOfferSigning(o: OfferSigningOptions): OfferSigning {
  const { cache, domain, createdAt: created_at, jwksUrl } = o;
  /** Served offers being signed in this turn's signing batch, by cache key. */
  const signing = new Map<string, Promise<ServedOffer>>();

  function sign(j: StayJudgement, s: OfferState): SignedOffer {
    const offer = buildOfferPayload({
      template: s.template,
      request: j.request,
      now: j.t,
      outcome: j.outcome,
      freshness: j.freshness,
      // Unguessable per-offer id (UUID v4 from Node's pooled CSPRNG: cheaper than a fresh randomBytes per offer).
      offerId: randomUUID(),
    });
    return signOffer(offer, s.signer, jwksUrl, alternativesFor(j, s));
  }

  const signServed = (r: ParsedOfferRequest, t: number, s: OfferState, today: string): ServedOffer => ({
    ok: true,
    ...sign(judgeStay(r, t, s, today), s),
  });

  function serve(r: ParsedOfferRequest, t: number, s: OfferState, today: string): ServedOffer | Promise<ServedOffer> {
    if (!cache) return inSigningTurn(() => signServed(r, t, s, today));
    // Members named one by one (no spread), so the key's argument object can stay unallocated once inlined.
    const { check_in, check_out, guests, language } = r;
    const key = OfferCache.key({
      domain,
      created_at,
      check_in,
      check_out,
      guests,
      language,
      revision: s.revision,
      kid: s.signer.kid,
      today,
    });
    // The cache keeps the outcome object itself: a hit hands it out as it is.
    const hit = cache.get(key, t);
    if (hit) return hit;
    let pending = signing.get(key);
    if (!pending) {
      pending = inSigningTurn(() => {
        const served = signServed(r, t, s, today);
        cache.set(key, served, t, s.freshness(t).changesAt);
        return served;
      }).finally(() => signing.delete(key));
      signing.set(key, pending);
    }
    return pending;
  }

  return { sign, serve };
}
