/**
 * The booking act: the one consequential step of the direct-booking flow, completing a UCP Lodging
 * booking session (`dev.ucp.lodging.booking`, REST binding, Complete Booking Session) made from a
 * VERIFIED offer, as a Tool-Use Binding candidate act.
 *
 * `bookingActFromVerifiedOffer` builds the act a person approves: tool `request_booking`, class
 * FINANCIAL, destination = the node's origin (`https://{canonical_domain}`, the origin the UCP
 * client pinned the lodging REST endpoint to) and that endpoint; the argument digest covers the
 * session id, the offer JWS SHA-256, the `total` and currency, the stay and the guest count.
 * `liveUcpComplete` builds, from the Complete request the host is about to send (its URL) and the
 * session it completes as the node answered it just before, the act and arguments enforce()
 * compares with that authority (Tool-Use Binding draft, enforce() contract MUSTs 1–3): another host
 * fails the destination match; another session, offer, total, stay or party fails the digest.
 * Neither authorizes anything; the Gate does.
 *
 * Why the gate sits on Complete, not on Create: Create Booking Session commits nothing and blocks no
 * night (UCP Booking: a session is `incomplete` / `requires_escalation` until the buyer finishes on
 * the business's `continue_url`; this node holds dates only once the guest confirmed there), while
 * Complete Booking Session is the call that places the reservation. The Tool-Use Binding draft puts
 * enforcement "at the dispatch sink", on the live arguments of the act that takes effect: that is
 * Complete. And an act bound to a session id needs the session to exist before the person approves.
 */
import { asRecord, jwsPayloadJson, parseCompactJws, sha256Hex } from '@vrpkit/core';
import { type ActContext, type AgentCandidateAct, buildAct, candidateActId, digestArguments } from '@vrpkit/gate';
import { readOfferPayload, UCP_BOOKING_SESSIONS, UCP_LODGING_KEY, type UcpSessionView } from '@vrpkit/protocol';
import type { StayQuoteFailureCode } from '../offer/quote.js';
import type { OfferVerificationResult } from '../offer/verify.js';
import type { SurfaceClassification } from '../surfaces/types.js';

/** The tool name the host declares for the booking step; policy classes it FINANCIAL before the model names it. */
export const BOOKING_TOOL = 'request_booking';

/** Why no booking act is built for an offer (stable codes; the host answers the model with a deny). */
export type BookingRefusalCode =
  /** The offer's signature did not verify against its node's JWKS (or was not checked). */
  | 'booking_offer_unverified'
  /** The offer JWS given is not the JWS that was verified. */
  | 'booking_offer_mismatch'
  /** A signed negative: the node signed that the stay is not available (Core VRP v0.1 §7 condition 8). */
  | 'booking_offer_not_bookable'
  /** The node declared its calendar stale (`calendar_freshness.safe === false`): not bookable. */
  | 'booking_calendar_stale'
  /** The offer arrived through another domain's surface (Node Tool Binding v0.1 §6, §7): not the node's own voice. */
  | 'booking_operator_tool'
  /** The MCP receipt that carried the offer did not verify or was not bound to the call (MCP composition profile). */
  | 'booking_receipt_unverified'
  /** The UCP session is not the verified offer's (another JWS, stay or total), or its REST endpoint is not the node's origin. */
  | 'booking_session_mismatch'
  /** Any other failed safe-to-quote condition (Core VRP v0.1 §7). */
  | 'booking_offer_not_quotable';

/** What the verifier established about one offer: `getOfferVia` (a `SurfaceReport`) and `fetchVerifiedStayOffer` both fit. */
export interface VerifiedOfferInput {
  /** The envelope as received; its `signature.jws` must be the offer JWS being booked. */
  envelope: unknown;
  verification: OfferVerificationResult | null;
  safe_to_quote: boolean;
  failures: readonly StayQuoteFailureCode[];
  /** Who answered (tool surfaces only); `operator_tool` is refused. */
  classification?: SurfaceClassification;
  /** The MCP receipt check, when the offer came over MCP: it must be fully verified. */
  receipt?: { receipt_present: boolean; verified: boolean };
}

/** The signed terms of an offer a booking binds: read from the signed payload only. */
export interface BookingTerms {
  canonical_domain: string;
  check_in: string;
  check_out: string;
  guests: number;
  /** `price.agent_total`, in the offer's minor units (the booking-request extension's `total`). */
  total: number;
  currency: string;
  /** The origin of the signed `direct_booking_url`. */
  booking_origin: string;
}

/** The digested arguments of a booking act: what a person approves and what enforce() compares. */
export interface BookingArguments {
  canonical_domain: string;
  /** The UCP booking session the Complete request names (its URL's `{id}`). */
  session_id: string;
  /** Lowercase hex SHA-256 of the offer JWS ASCII bytes the session is bound to (the receipt's `offer_jws_sha256`). */
  offer_jws_sha256: string;
  check_in: string;
  check_out: string;
  guests: number;
  /** The session's one `totals[]` entry of type `total` (the signed `agent_total`, minor units). */
  total: number;
  currency: string;
}

/** What the approval shows beside the arguments (the verified offer's host domain, stay, total and currency, the session). */
export interface BookingApprovalView {
  canonical_domain: string;
  /** The node's origin: where the Complete request goes (the act's destination). */
  booking_origin: string;
  session_id: string;
  /** The guest's page on the host's origin (UCP Booking, `continue_url`), where the guest confirms. */
  continue_url: string | null;
  check_in: string;
  check_out: string;
  guests: number;
  total: number;
  currency: string;
  /** One line for a person: "example.test: 2026-06-01 → 2026-06-04, 2 guests, EUR 1234.00". */
  summary: string;
}

export type BookingActResult =
  | { ok: true; act: AgentCandidateAct; args: BookingArguments; approval: BookingApprovalView }
  | { ok: false; code: BookingRefusalCode; message: string };

export interface BookingActOptions {
  /** The host loop's resolved act context (`resolveActContext`): epochs, sink, session, clock. */
  context: ActContext;
  /** The model block this act answers (tool_use id, call id): part of the candidate act id. */
  blockId: string;
  vendor: 'anthropic' | 'openai' | 'responses' | 'mcp';
}

/** Lowercase hex SHA-256 of the offer JWS's ASCII bytes, as the booking-request receipt carries it. */
export function offerJwsSha256(offerJws: string): string {
  return sha256Hex(Buffer.from(offerJws, 'ascii'));
}

/**
 * The signed terms of an offer JWS (decoded, not verified: call it on a JWS that was verified,
 * or where a wrong value can only make a digest differ). Null when a term is missing.
 */
export function bookingTermsOf(offerJws: string): BookingTerms | null {
  const parsed = parseCompactJws(offerJws);
  return parsed.ok ? termsOfPayload(jwsPayloadJson(parsed.jws)) : null;
}

/** The booking terms of a decoded offer payload, read through protocol's `OfferPayloadSchema`; null when a term is missing. */
function termsOfPayload(payload: unknown): BookingTerms | null {
  const offer = readOfferPayload(payload);
  const total = offer?.price.agent_total;
  if (!offer?.request || typeof total !== 'number') return null;
  let booking_origin: string;
  try {
    booking_origin = new URL(offer.booking.direct_booking_url).origin;
  } catch {
    return null;
  }
  const { check_in, check_out, guests } = offer.request;
  return { canonical_domain: offer.canonical_domain, check_in, check_out, guests, total, currency: offer.price.currency, booking_origin };
}

/** Why an offer that is not safe to quote may not be booked, most specific first (null: it may be). */
export function bookingRefusalOf(v: VerifiedOfferInput, offerJws: string): { code: BookingRefusalCode; message: string } | null {
  if (v.verification?.status !== 'verified' || !v.verification.payload)
    return { code: 'booking_offer_unverified', message: 'the offer did not verify against its node’s keys' };
  const signedJws = asRecord(asRecord(v.envelope)?.signature)?.jws;
  if (typeof signedJws !== 'string' || signedJws !== offerJws)
    return { code: 'booking_offer_mismatch', message: 'the offer JWS is not the one that was verified' };
  if (v.classification !== undefined && v.classification !== 'node_tool')
    return { code: 'booking_operator_tool', message: 'the offer came through another domain’s tool, not the node’s own' };
  if (v.receipt?.receipt_present && !v.receipt.verified)
    return { code: 'booking_receipt_unverified', message: 'the MCP receipt that carried the offer did not verify' };
  const availability = asRecord(v.verification.payload.availability);
  // A node signs a stale calendar as not available as well: name the more specific cause.
  if (asRecord(availability?.calendar_freshness)?.safe === false)
    return { code: 'booking_calendar_stale', message: 'the node declared its calendar stale' };
  if (availability?.available !== true)
    return { code: 'booking_offer_not_bookable', message: 'the node signed that the stay is not available' };
  if (!v.safe_to_quote || v.failures.length > 0)
    return { code: 'booking_offer_not_quotable', message: `the offer is not safe to quote (${v.failures.join(', ') || 'unknown'})` };
  return null;
}

/** The Complete Booking Session URL under a lodging REST endpoint (UCP REST binding, `POST /booking-sessions/{id}/complete`). */
export function ucpCompleteUrl(endpoint: string, sessionId: string): string {
  return `${endpoint.replace(/\/$/, '')}${UCP_BOOKING_SESSIONS}/${encodeURIComponent(sessionId)}/complete`;
}

function actFor(args: BookingArguments, origin: string, endpoint: string, id: string, ctx: ActContext): AgentCandidateAct {
  return buildAct(
    {
      candidate_act_id: id,
      act_type: 'API_REQUEST',
      tool: { tool_id: BOOKING_TOOL, function_id: BOOKING_TOOL, tool_endpoint: endpoint, tool_protocol: 'HTTP_API' },
      arguments_digest: digestArguments(args),
      sink_type: 'TOOL_DISPATCH',
      // A booking commits the guest to a price: FINANCIAL whatever the host's policy file says;
      // a policy that classes the tool otherwise is refused by the Gate (act class ≠ policy class).
      consequence_class: 'FINANCIAL',
      // Tool-Use Binding draft, mapping: "Server identity MUST enter destination or tool.tool_endpoint"
      // so that a swapped sink fails the destination match: the node's origin, and (tool_endpoint) its lodging REST endpoint.
      destination: { destination_id: origin, destination_url: endpoint },
    },
    ctx,
  );
}

/** The arguments a Complete of `sessionId` commits, read from the session as the node answered it; null when a term is missing. */
function argumentsOfSession(sessionId: string, session: UcpSessionView): BookingArguments | null {
  const offerJws = session[UCP_LODGING_KEY].offer_jws;
  const terms = bookingTermsOf(offerJws);
  const totals = session.totals.filter((t) => t.type === 'total');
  const stay = session.stays.length === 1 ? session.stays[0] : undefined;
  if (!terms || totals.length !== 1 || !stay?.occupancy) return null;
  return {
    canonical_domain: terms.canonical_domain,
    session_id: sessionId,
    offer_jws_sha256: offerJwsSha256(offerJws),
    check_in: stay.stay_dates.start_date,
    check_out: stay.stay_dates.end_date,
    guests: stay.occupancy.total,
    total: (totals[0] as { amount: number }).amount,
    currency: session.currency,
  };
}

const sameArguments = (a: BookingArguments, b: BookingArguments) => digestArguments(a).value === digestArguments(b).value;

/** "EUR 1234.00" for minor units (ISO 4217 two-decimal currencies; others shown in minor units). */
function money(total: number, currency: string): string {
  return `${currency} ${(total / 100).toFixed(2)}`;
}

/**
 * The candidate act for completing `session`, the UCP booking session made from exactly this verified
 * offer on the node's lodging REST `endpoint`, or a refusal with a stable code: for an offer that is
 * not safe to quote (a signed negative, a stale calendar, an operator tool's offer, an unverified offer
 * or receipt), or a session or endpoint that is not that offer's. The act's class is FINANCIAL: policy
 * must assign the same to `request_booking` (a mismatch is refused by the Gate), and FINANCIAL is
 * never issued by a hot envelope, so a person approves it.
 */
export function bookingActFromVerifiedOffer(
  verification: VerifiedOfferInput,
  offerJws: string,
  ucp: { endpoint: string; session: UcpSessionView },
  opts: BookingActOptions,
): BookingActResult {
  const refusal = bookingRefusalOf(verification, offerJws);
  if (refusal) return { ok: false, ...refusal };
  const terms = termsOfPayload(verification.verification?.payload);
  if (!terms) return { ok: false, code: 'booking_offer_not_quotable', message: 'the signed offer lacks a booking term' };
  const origin = `https://${terms.canonical_domain}`;
  const args = argumentsOfSession(ucp.session.id, ucp.session);
  // The session must carry exactly the verified offer's terms, on the endpoint of the offer's own origin.
  const expected: BookingArguments = {
    canonical_domain: terms.canonical_domain,
    session_id: ucp.session.id,
    offer_jws_sha256: offerJwsSha256(offerJws),
    check_in: terms.check_in,
    check_out: terms.check_out,
    guests: terms.guests,
    total: terms.total,
    currency: terms.currency,
  };
  if (!args || !sameArguments(args, expected) || originOf(ucp.endpoint) !== origin)
    return { ok: false, code: 'booking_session_mismatch', message: 'the booking session is not the verified offer’s, on its own origin' };
  const id = candidateActId(opts.vendor, opts.context.session_id, opts.blockId);
  const act = actFor(expected, origin, ucp.endpoint, id, opts.context);
  act.purpose = {
    ...act.purpose,
    declared_purpose: `${BOOKING_TOOL} at ${terms.canonical_domain}: ${terms.check_in} → ${terms.check_out}, ${terms.guests} guests, ${money(terms.total, terms.currency)}`,
  };
  return {
    ok: true,
    act,
    args: expected,
    approval: {
      canonical_domain: terms.canonical_domain,
      booking_origin: origin,
      session_id: ucp.session.id,
      continue_url: ucp.session.continue_url ?? null,
      check_in: terms.check_in,
      check_out: terms.check_out,
      guests: terms.guests,
      total: terms.total,
      currency: terms.currency,
      summary: act.purpose.declared_purpose ?? '',
    },
  };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid:';
  }
}

/** The Complete request a host is about to send, and the session it completes as the node answered it just before. */
export interface LiveUcpCompleteInput {
  /** The lodging REST endpoint the request goes to (`ucpCompleteUrl(endpoint, session_id)`). */
  endpoint: string;
  /** The `{id}` the request URL names. */
  session_id: string;
  /** Get Booking Session's answer for that id (or null: the terms cannot be read, and the digest cannot match). */
  session: UcpSessionView | null;
}

/**
 * The act and arguments enforce() compares with the approved authority, built from the live
 * Complete request (never from the approved act): the act keeps the approved act's identity and
 * takes the live destination; the arguments are the session id the URL names and the terms of that
 * session. Enforce then refuses another host (EF_DESTINATION_MISMATCH) and another session, offer,
 * stay, total or party (EF_SCOPE_MISMATCH).
 */
export function liveUcpComplete(
  approved: AgentCandidateAct,
  live: LiveUcpCompleteInput,
): { act: AgentCandidateAct; args: BookingArguments | { session_id: string; unreadable: true }; url: string } {
  const origin = originOf(live.endpoint);
  const read = live.session && live.session.id === live.session_id ? argumentsOfSession(live.session_id, live.session) : null;
  // A session whose terms cannot be read can never match the approved digest; it is still sent to enforce to be refused.
  const args = read ?? { session_id: live.session_id, unreadable: true as const };
  const act: AgentCandidateAct = {
    ...approved,
    tool: { ...approved.tool, tool_endpoint: live.endpoint },
    destination: { destination_id: origin, destination_url: live.endpoint },
  };
  return { act, args, url: ucpCompleteUrl(live.endpoint, live.session_id) };
}
