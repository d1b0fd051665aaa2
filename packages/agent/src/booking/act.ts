/**
 * The booking act: the one consequential step of the direct-booking flow (asking the host's node
 * to hold a stay, the vrpkit booking-request extension; Core VRP v0.1 stops at
 * `direct_booking_url`) as a Tool-Use Binding candidate act bound to a VERIFIED offer.
 *
 * `bookingActFromVerifiedOffer` builds the act a person approves: tool `request_booking`, class
 * FINANCIAL, destination and tool endpoint = the origin of the signed `direct_booking_url` (Core VRP
 * v0.1 §5.1; the authority binds both), and an argument digest over the offer JWS SHA-256, total,
 * currency, stay, guests, domain and guest.
 * `liveBookingRequest` builds, from the request the host is about to send, the act and arguments
 * enforce() compares with that authority (Tool-Use Binding draft, enforce() contract MUSTs 1–3): another
 * host fails the destination match, another offer, total, stay or guest fails the digest.
 * Neither authorizes anything; the Gate does.
 */
import { asRecord, jwsPayloadJson, parseCompactJws, sha256Hex } from '@vrpkit/core';
import { type ActContext, type AgentCandidateAct, buildAct, candidateActId, digestArguments } from '@vrpkit/gate';
import { BOOKING_REQUESTS_PATH, type BookingGuest, type BookingRequest, readOfferPayload } from '@vrpkit/protocol';
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
  /** Lowercase hex SHA-256 of the offer JWS ASCII bytes (the receipt's `offer_jws_sha256`). */
  offer_jws_sha256: string;
  check_in: string;
  check_out: string;
  guests: number;
  total: number;
  currency: string;
  guest: BookingGuest;
}

/** What the approval shows beside the arguments (the verified offer's host domain, stay, total and currency). */
export interface BookingApprovalView {
  canonical_domain: string;
  booking_origin: string;
  check_in: string;
  check_out: string;
  guests: number;
  total: number;
  currency: string;
  /** One line for a person: "example.test: 2026-06-01 → 2026-06-04, 2 guests, EUR 1234.00". */
  summary: string;
}

export type BookingActResult =
  | { ok: true; act: AgentCandidateAct; args: BookingArguments; approval: BookingApprovalView; endpoint: string }
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

/** Why an offer that is not safe to quote may not be booked, most specific first. */
function refusalOf(v: VerifiedOfferInput, offerJws: string): { code: BookingRefusalCode; message: string } | null {
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

/** The booking-request endpoint on an origin (the extension's `POST /api/booking-requests`). */
export function bookingEndpoint(origin: string): string {
  return new URL(BOOKING_REQUESTS_PATH, origin).href;
}

function actFor(args: BookingArguments, origin: string, id: string, ctx: ActContext): AgentCandidateAct {
  return buildAct(
    {
      candidate_act_id: id,
      act_type: 'API_REQUEST',
      tool: { tool_id: BOOKING_TOOL, function_id: BOOKING_TOOL, tool_endpoint: origin, tool_protocol: 'HTTP_API' },
      arguments_digest: digestArguments(args),
      sink_type: 'TOOL_DISPATCH',
      // A booking commits the guest to a price: FINANCIAL whatever the host's policy file says;
      // a policy that classes the tool otherwise is refused by the Gate (act class ≠ policy class).
      consequence_class: 'FINANCIAL',
      // Tool-Use Binding draft, mapping: the destination a swapped sink must fail to match.
      destination: { destination_id: origin, destination_url: bookingEndpoint(origin) },
    },
    ctx,
  );
}

function argumentsOf(terms: BookingTerms, offerJws: string, guest: BookingGuest): BookingArguments {
  return {
    canonical_domain: terms.canonical_domain,
    offer_jws_sha256: offerJwsSha256(offerJws),
    check_in: terms.check_in,
    check_out: terms.check_out,
    guests: terms.guests,
    total: terms.total,
    currency: terms.currency,
    guest,
  };
}

/** "EUR 1234.00" for minor units (ISO 4217 two-decimal currencies; others shown in minor units). */
function money(total: number, currency: string): string {
  return `${currency} ${(total / 100).toFixed(2)}`;
}

/**
 * The candidate act for booking exactly this verified offer, or a refusal with a stable code for
 * an offer that is not safe to quote (a signed negative, a stale calendar, an operator tool's
 * offer, an unverified offer or receipt). The act's class is FINANCIAL: policy must assign the
 * same to `request_booking` (a mismatch is refused by the Gate), and FINANCIAL is never issued by
 * a hot envelope, so a person approves it.
 */
export function bookingActFromVerifiedOffer(
  verification: VerifiedOfferInput,
  offerJws: string,
  guest: BookingGuest,
  opts: BookingActOptions,
): BookingActResult {
  const refusal = refusalOf(verification, offerJws);
  if (refusal) return { ok: false, ...refusal };
  const terms = termsOfPayload(verification.verification?.payload);
  if (!terms) return { ok: false, code: 'booking_offer_not_quotable', message: 'the signed offer lacks a booking term' };
  const args = argumentsOf(terms, offerJws, guest);
  const id = candidateActId(opts.vendor, opts.context.session_id, opts.blockId);
  const act = actFor(args, terms.booking_origin, id, opts.context);
  act.purpose = {
    ...act.purpose,
    declared_purpose: `${BOOKING_TOOL} at ${terms.canonical_domain}: ${terms.check_in} → ${terms.check_out}, ${terms.guests} guests, ${money(terms.total, terms.currency)}`,
  };
  return {
    ok: true,
    act,
    args,
    endpoint: bookingEndpoint(terms.booking_origin),
    approval: {
      canonical_domain: terms.canonical_domain,
      booking_origin: terms.booking_origin,
      check_in: terms.check_in,
      check_out: terms.check_out,
      guests: terms.guests,
      total: terms.total,
      currency: terms.currency,
      summary: act.purpose.declared_purpose ?? '',
    },
  };
}

/** The request a host is about to send, as it will send it. */
export interface LiveBookingInput {
  /** The URL the POST goes to. */
  endpoint: string;
  offer_jws: string;
  guest: BookingGuest;
  idempotency_key: string;
}

/**
 * The act and arguments enforce() compares with the approved authority, built from the live
 * request (never from the approved act): the act keeps the approved act's identity and takes
 * the live destination, the arguments are read from the offer JWS actually sent. Enforce then
 * refuses another host (EF_DESTINATION_MISMATCH) and another offer, stay, total or guest
 * (EF_SCOPE_MISMATCH). `body` is the exact request body to send after an allow.
 */
export function liveBookingRequest(
  approved: AgentCandidateAct,
  live: LiveBookingInput,
): { act: AgentCandidateAct; args: BookingArguments | { offer_jws_sha256: string; unreadable: true }; body: BookingRequest } {
  let origin: string;
  try {
    origin = new URL(live.endpoint).origin;
  } catch {
    origin = 'invalid:';
  }
  const terms = bookingTermsOf(live.offer_jws);
  // An offer whose terms cannot be read can never match the approved digest; it is still sent to enforce to be refused.
  const args = terms
    ? argumentsOf(terms, live.offer_jws, live.guest)
    : { offer_jws_sha256: offerJwsSha256(live.offer_jws), unreadable: true as const };
  const act: AgentCandidateAct = {
    ...approved,
    tool: { ...approved.tool, tool_endpoint: origin },
    destination: { destination_id: origin, destination_url: live.endpoint },
  };
  return { act, args, body: { offer_jws: live.offer_jws, guest: live.guest, idempotency_key: live.idempotency_key } };
}
