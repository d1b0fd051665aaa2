/**
 * `UcpLodgingClient`: an agent books a stay it verified through the host's UCP Lodging booking
 * sessions (`dev.ucp.lodging.booking`, REST binding; the signed offer under `dev.vrpkit.lodging`).
 * In order, fail-closed:
 * - discover the host's UCP profile at `https://{domain}/.well-known/ucp` and take the lodging
 *   service's REST endpoint only when it is on that same origin (a profile cannot send the
 *   booking elsewhere) and the Booking capability is declared;
 * - create the session from the verified offer JWS (the property, the stay's dates and party read
 *   from that signed offer), and check the answer is bound to it: the same JWS, the stay it signed, one
 *   `total` equal to its signed `agent_total`, a `continue_url` on the host's origin
 *   (`ucp_session_mismatch` otherwise); the party (booker, guests) may follow by Update;
 * - hand `continue_url` to the person (the guest confirms on the host's page), wait until the session
 *   leaves `requires_escalation`, complete it, and verify the booking receipt it carries
 *   (`verifyBookingReceipt`: the node's JWKS, the offer's SHA-256, the stay and the total).
 * A refusal is data: the UCP message codes the node answered with, never a throw.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, FetchLike } from '@vrpkit/core';
import { jwsPayloadJson, parseCompactJws } from '@vrpkit/core';
import {
  type OfferPayload,
  readOfferPayload,
  UCP_BOOKING_CAPABILITY,
  UCP_BOOKING_SESSIONS,
  UCP_LODGING_KEY,
  UCP_LODGING_SERVICE,
  UCP_PROFILE_PATH,
  UcpErrorResponseSchema,
  type UcpParty,
  UcpProfileSchema,
  type UcpSessionView,
  UcpSessionViewSchema,
  ucpBookingRequest,
} from '@vrpkit/protocol';
import { serializeDictionary } from 'structured-headers';
import { type BookingReceiptVerification, verifyBookingReceipt } from '../booking/receipt.js';
import { normalizeHost } from '../canonical-domain.js';

export type UcpClientCode =
  /** The profile could not be read, or is not JSON. */
  | 'ucp_profile_unreachable'
  /** The profile declares no lodging REST service with the Booking capability. */
  | 'ucp_profile_invalid'
  /** The REST endpoint is not on the host's own origin. */
  | 'ucp_endpoint_off_domain'
  /** A session request failed to reach the host, or its answer is not a session. */
  | 'ucp_unreachable'
  /** The host refused; `messages` holds its codes. */
  | 'ucp_refused'
  /** The session is not bound to the offer sent (another JWS, stay or total), or its continue_url is off the host's origin. */
  | 'ucp_session_mismatch'
  /** The guest did not confirm before the wait ended. */
  | 'ucp_guest_timeout'
  /** The completed session's booking receipt does not verify. */
  | 'ucp_receipt_unverified';

export type UcpClientResult<T> =
  | ({ ok: true } & T)
  | { ok: false; code: UcpClientCode; message: string; messages?: { code: string; content: string }[] };

const fail = <T>(code: UcpClientCode, message: string, messages?: { code: string; content: string }[]): UcpClientResult<T> => ({
  ok: false,
  code,
  message,
  ...(messages ? { messages } : {}),
});

export interface UcpLodgingClientOptions {
  fetch: FetchLike;
  clock?: Clock;
  /**
   * The platform's own UCP profile URL, sent as `UCP-Agent: profile="…"` (an RFC 8941 Dictionary) on
   * every request: the REST binding requires it (rest.openapi.json, `UCP-Agent`).
   */
  agentProfile: string;
}

export class UcpLodgingClient {
  private constructor(
    readonly domain: string,
    readonly endpoint: string,
    private readonly o: UcpLodgingClientOptions,
  ) {}

  /** Read the host's UCP profile and take its REST endpoint, on the host's own origin only. */
  static async discover(domainInput: string, o: UcpLodgingClientOptions): Promise<UcpClientResult<{ client: UcpLodgingClient }>> {
    const domain = normalizeHost(domainInput);
    if (!domain) return fail('ucp_profile_unreachable', 'not a host name');
    let profile: unknown;
    try {
      const res = await o.fetch(`https://${domain}${UCP_PROFILE_PATH}`, { headers: { accept: 'application/json' } });
      if (!res.ok) return fail('ucp_profile_unreachable', `the profile answered HTTP ${res.status}`);
      profile = await res.json();
    } catch (e) {
      return fail('ucp_profile_unreachable', `the profile could not be read: ${(e as Error).message}`);
    }
    const parsed = UcpProfileSchema.safeParse(profile);
    const rest = parsed.success ? parsed.data.ucp.services[UCP_LODGING_SERVICE]?.find((s) => s.transport === 'rest') : undefined;
    if (!parsed.success || !rest?.endpoint || !parsed.data.ucp.capabilities?.[UCP_BOOKING_CAPABILITY])
      return fail('ucp_profile_invalid', 'the profile declares no lodging REST service with the Booking capability');
    // The booking goes to the host whose offer was verified, never to an endpoint its profile names elsewhere.
    if (!sameOrigin(rest.endpoint, domain)) return fail('ucp_endpoint_off_domain', 'the REST endpoint is not on the host’s own origin');
    return { ok: true, client: new UcpLodgingClient(domain, rest.endpoint.replace(/\/$/, ''), o) };
  }

  /**
   * Create a session from a verified offer JWS (and the party, when the person gave it), checked bound
   * to that offer. The request names what the offer signed: its property, its stay dates, its party size.
   */
  async createSession(offerJws: string, party: UcpParty = {}): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    const body = ucpBookingRequest(offerJws, party);
    if (!body) return fail('ucp_session_mismatch', 'the offer JWS does not parse as a signed stay offer');
    const r = await this.send('POST', '', body);
    return r.ok ? this.bound(r.session, offerJws) : r;
  }

  /** Update Booking Session (a full replacement): the same stay and offer, the party as it now is. */
  async updateSession(id: string, offerJws: string, party: UcpParty): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    const body = ucpBookingRequest(offerJws, party);
    if (!body) return fail('ucp_session_mismatch', 'the offer JWS does not parse as a signed stay offer');
    const r = await this.send('PUT', `/${encodeURIComponent(id)}`, body);
    return r.ok ? this.bound(r.session, offerJws) : r;
  }

  getSession(id: string): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    return this.send('GET', `/${encodeURIComponent(id)}`);
  }

  cancel(id: string): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    return this.send('POST', `/${encodeURIComponent(id)}/cancel`, {});
  }

  /**
   * Poll until the guest has acted on the host's page (the session left `incomplete` / `requires_escalation`).
   * The wait is counted in polls of `pollMs` of real time, not read from the clock: a host on a
   * fixed clock (the demo, recordings) still stops waiting.
   */
  async waitForGuest(id: string, w: { timeoutMs: number; pollMs?: number }): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    const pollMs = w.pollMs ?? 1000;
    for (let polls = Math.ceil(w.timeoutMs / pollMs); ; polls--) {
      const r = await this.getSession(id);
      if (!r.ok || (r.session.status !== 'requires_escalation' && r.session.status !== 'incomplete')) return r;
      if (polls <= 0) return fail('ucp_guest_timeout', 'the guest has not confirmed on the host’s page yet');
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** Complete the session (idempotent at the host) and verify its booking receipt against the offer it was made from. */
  async complete(id: string, offerJws: string): Promise<UcpClientResult<{ session: UcpSessionView; receipt: BookingReceiptVerification }>> {
    // Booking, Payments: `payment` is required at completion; `{}` when no instrument is needed (the host is paid at the property).
    const r = await this.send('POST', `/${encodeURIComponent(id)}/complete`, { payment: {} });
    if (!r.ok) return r;
    const bound = this.bound(r.session, offerJws);
    if (!bound.ok) return bound;
    const { session } = bound;
    if (session.status !== 'completed') return fail('ucp_refused', `the session is ${session.status}`, session.messages);
    const receipt = await verifyBookingReceipt(session[UCP_LODGING_KEY].booking_receipt_jws, {
      fetch: this.o.fetch,
      domain: this.domain,
      offerJws,
      ...(this.o.clock ? { clock: this.o.clock } : {}),
    });
    if (receipt.status !== 'verified') return fail('ucp_receipt_unverified', `${receipt.code}: ${receipt.message}`);
    return { ok: true, session, receipt };
  }

  /** The session is the one for `offerJws`: its JWS, its signed total, a continue_url on the host's origin. */
  private bound(session: UcpSessionView, offerJws: string): UcpClientResult<{ session: UcpSessionView }> {
    const offer = signedOffer(offerJws);
    const lodging = session[UCP_LODGING_KEY];
    const total = session.totals.filter((t) => t.type === 'total');
    const stay = session.stays.length === 1 ? session.stays[0] : undefined;
    const matches =
      offer !== null &&
      lodging.offer_jws === offerJws &&
      stay?.stay_dates.start_date === offer.request?.check_in &&
      stay?.stay_dates.end_date === offer.request?.check_out &&
      total.length === 1 &&
      total[0]?.amount === offer.price.agent_total &&
      session.currency === offer.price.currency &&
      (session.continue_url === undefined || sameOrigin(session.continue_url, this.domain));
    return matches ? { ok: true, session } : fail('ucp_session_mismatch', 'the session is not bound to the offer sent');
  }

  private async send(method: string, path: string, body?: unknown): Promise<UcpClientResult<{ session: UcpSessionView }>> {
    // The REST binding's required headers (rest.openapi.json): UCP-Agent and Request-Id on every
    // operation, a fresh Idempotency-Key on every one that changes state (each call is a new request).
    const headers: Record<string, string> = {
      accept: 'application/json',
      'ucp-agent': serializeDictionary({ profile: this.o.agentProfile }),
      'request-id': randomUUID(),
    };
    if (method !== 'GET') headers['idempotency-key'] = randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    let json: unknown;
    try {
      const res = await this.o.fetch(`${this.endpoint}${UCP_BOOKING_SESSIONS}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      json = await res.json();
    } catch (e) {
      return fail('ucp_unreachable', `the session request failed: ${(e as Error).message}`);
    }
    const session = UcpSessionViewSchema.safeParse(json);
    if (session.success) return { ok: true, session: session.data };
    const messages = UcpErrorResponseSchema.safeParse(json);
    if (messages.success) return fail('ucp_refused', messages.data.messages.map((m) => m.code).join(', '), messages.data.messages);
    return fail('ucp_unreachable', 'the answer is neither a session nor a UCP error response');
  }
}

function signedOffer(offerJws: string): OfferPayload | null {
  const parsed = parseCompactJws(offerJws);
  return parsed.ok ? readOfferPayload(jwsPayloadJson(parsed.jws)) : null;
}

function sameOrigin(url: string, domain: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && u.host === domain;
  } catch {
    return false;
  }
}
