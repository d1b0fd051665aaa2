/**
 * The agent's UCP Lodging client against a real node over https (dev CA, hardened fetch): it
 * discovers the profile, creates a booking session from an offer it verified, adds the booker by
 * Update, gets a continue_url on the host's origin, waits while the guest confirms on that page with the code from a real local SMTP
 * server, completes, and verifies the booking receipt. It refuses a session that is not bound to
 * the offer it sent, and a profile whose endpoint is on another origin.
 */
import { type HardenedFetch, UcpLodgingClient, verifyOffer } from '@vrpkit/agent';
import type { FetchLike } from '@vrpkit/core';
import type { ServedNode } from '@vrpkit/node';
import { JWKS_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, UCP_PROFILE_PATH } from '@vrpkit/protocol';
import type { TestSmtp } from '@vrpkit/testkit/mail';
import { dayAfter, type NodeClient, testClock } from '@vrpkit/testkit/node';
import {
  guestStep,
  mailedCode,
  serveUcpTestNode,
  UCP_BOOKING_SCHEMA,
  type UcpRequestOp,
  type UcpTestNode,
  ucpRequestErrors,
  ucpSchemaErrors,
} from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DOMAIN = 'ucp-agent.example';
/** The platform's profile the client names in UCP-Agent (the node parses it, never fetches it). */
const AGENT_PROFILE = 'https://platform.example/.well-known/ucp';
const START = Date.parse('2027-02-01T09:00:00Z');
let served: { node: ServedNode; client: NodeClient };
let world: UcpTestNode;
let smtp: TestSmtp;
let fetch: HardenedFetch;
const clock = testClock(START);

beforeAll(async () => {
  world = await serveUcpTestNode(DOMAIN, 'ucp-agent', clock);
  ({ smtp, fetch } = world);
  served = world;
});
afterAll(() => world?.close());

/** An offer the agent verified (Core VRP v0.1 §9) for `nights` from day `from`. */
async function verifiedOffer(from: number, nights: number): Promise<string> {
  const url = `https://${DOMAIN}${OFFER_ENDPOINT_PATH}?check_in=${dayAfter(START, from)}&check_out=${dayAfter(START, from + nights)}&guests=2`;
  const envelope = (await (await fetch(url)).json()) as OfferEnvelope;
  const jwks = await (await fetch(`https://${DOMAIN}${JWKS_PATH}`)).json();
  expect(verifyOffer({ envelope, jwks, now: clock.now() }).status).toBe('verified');
  return envelope.signature.jws;
}

describe('UcpLodgingClient', () => {
  it('books a verified offer through a session the guest confirms on the host’s page, and verifies the receipt', async () => {
    // Every session request the client sends, and every session it is answered with, checked against UCP's schemas.
    const sent: string[] = [];
    const checked: FetchLike = async (input, init) => {
      const url = String(input);
      const op: UcpRequestOp | undefined =
        init?.method === 'PUT'
          ? 'update'
          : init?.method !== 'POST'
            ? undefined
            : url.endsWith('/booking-sessions')
              ? 'create'
              : url.endsWith('/complete')
                ? 'complete'
                : undefined;
      if (op) {
        expect(ucpRequestErrors(op, UCP_BOOKING_SCHEMA, JSON.parse(String(init?.body)))).toEqual([]);
        sent.push(op);
      }
      const res = await fetch(input, init);
      if (!url.includes('/booking-sessions')) return res;
      const body = await res.text();
      expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, JSON.parse(body))).toEqual([]);
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const found = await UcpLodgingClient.discover(DOMAIN, { fetch: checked, clock, agentProfile: AGENT_PROFILE });
    if (!found.ok) throw new Error(found.message);
    const { client } = found;
    const jws = await verifiedOffer(20, 3);
    const email = 'agent-guest@example.org';
    // The stay first; the person's details by Update (Booking: progressive enrichment).
    const created = await client.createSession(jws);
    if (!created.ok) throw new Error(created.message);
    expect(created.session.status).toBe('incomplete');
    const updated = await client.updateSession(created.session.id, jws, { booker: { email, first_name: 'Ada', last_name: 'Guest' } });
    if (!updated.ok) throw new Error(updated.message);
    const { session } = updated;
    expect(session.status).toBe('requires_escalation');
    expect(new URL(session.continue_url!).host).toBe(DOMAIN);
    // Not confirmed yet: the wait ends without a booking.
    const early = await client.waitForGuest(session.id, { timeoutMs: 0 });
    expect(early).toMatchObject({ ok: false, code: 'ucp_guest_timeout' });
    // The person opens continue_url and confirms with the mailed code.
    const code = await mailedCode(served.client, DOMAIN, smtp, session.id, email);
    expect((await guestStep(served.client, DOMAIN, session.id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
    const ready = await client.waitForGuest(session.id, { timeoutMs: 5_000, pollMs: 50 });
    expect(ready).toMatchObject({ ok: true, session: { status: 'ready_for_complete' } });
    const done = await client.complete(session.id, jws);
    if (!done.ok) throw new Error(done.message);
    expect(done.receipt.status).toBe('verified');
    expect(done.session.confirmation!.id).toBe(done.receipt.receipt?.booking_id);
    expect(sent).toEqual(['create', 'update', 'complete']);
  });

  it('refuses a session that is not bound to the offer it sent, and reports the host’s refusal codes', async () => {
    const found = await UcpLodgingClient.discover(DOMAIN, { fetch, clock, agentProfile: AGENT_PROFILE });
    if (!found.ok) throw new Error(found.message);
    const jws = await verifiedOffer(30, 2);
    const other = await verifiedOffer(40, 2);
    // A relay that answers with a session for another offer (and its stay) than the one sent.
    const relay: FetchLike = async (input, init) => {
      if (init?.method === 'POST' && typeof init.body === 'string') {
        const body = JSON.parse(init.body) as {
          stays: { stay_dates: { start_date: string; end_date: string } }[];
          'dev.vrpkit.lodging': { offer_jws: string };
        };
        body['dev.vrpkit.lodging'].offer_jws = other;
        body.stays[0]!.stay_dates = { start_date: dayAfter(START, 40), end_date: dayAfter(START, 42) };
        return fetch(input, { ...init, body: JSON.stringify(body) });
      }
      return fetch(input, init);
    };
    const swapped = await UcpLodgingClient.discover(DOMAIN, { fetch: relay, clock, agentProfile: AGENT_PROFILE });
    if (!swapped.ok) throw new Error(swapped.message);
    expect(await swapped.client.createSession(jws)).toMatchObject({ ok: false, code: 'ucp_session_mismatch' });
    const refused = await found.client.createSession(`${jws.slice(0, -4)}AAAA`);
    expect(refused).toMatchObject({ ok: false, code: 'ucp_refused', messages: [{ code: 'offer_invalid' }] });
  });

  it('refuses a profile whose REST endpoint is on another origin', async () => {
    const moved: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith(UCP_PROFILE_PATH)) return res;
      const profile = (await res.json()) as { ucp: { services: Record<string, { endpoint: string }[]> } };
      profile.ucp.services['dev.ucp.lodging']![0]!.endpoint = 'https://elsewhere.example/ucp/v1';
      return new Response(JSON.stringify(profile), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    expect(await UcpLodgingClient.discover(DOMAIN, { fetch: moved, clock, agentProfile: AGENT_PROFILE })).toMatchObject({
      ok: false,
      code: 'ucp_endpoint_off_domain',
    });
  });
});
