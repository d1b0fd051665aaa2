/**
 * The gated booking over UCP Lodging booking sessions, end to end against a real node over https
 * (dev CA, hardened fetch), a real local SMTP server and a real Gate on a SQLite file: the host
 * creates a session from the offer it verified, the person approves that act, the guest confirms on
 * the host's page with the mailed code, and the host completes once and verifies the booking
 * receipt. At dispatch, another session, another stay or an altered total is denied and nothing is
 * completed; a replayed authority is denied (Tool-Use Binding draft, enforce() contract).
 */
import { join } from 'node:path';
import { BookingHost, type HardenedFetch, liveUcpComplete } from '@vrpkit/agent';
import { type FetchLike, generateEd25519Jwk } from '@vrpkit/core';
import { actBindingDigest, Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import type { ServedNode } from '@vrpkit/node';
import type { TestSmtp } from '@vrpkit/testkit/mail';
import { dayAfter, type NodeClient, testClock } from '@vrpkit/testkit/node';
import { guestStep, mailedCode, serveUcpTestNode, TEST_UCP_AGENT_PROFILE, type UcpTestNode, ucpRestHeaders } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const DOMAIN = 'ucp-gated.example';
const START = Date.parse('2027-02-01T09:00:00Z');
const SINK = 'ucp-gated-host';
const BOOKER = { first_name: 'Ada', last_name: 'Guest', email: 'ada@example.org' };
/** The booking host's policy: the offer tool is a hot envelope, the booking FINANCIAL (a person approves). */
const POLICY = loadPolicy({
  version: 1,
  policy_id: 'ucp-gated-test',
  tools: [
    { tool: 'get_verified_stay_offer', consequence_class: 'INFORMATIONAL' },
    { tool: 'request_booking', consequence_class: 'FINANCIAL' },
  ],
  hot_envelopes: [{ name: 'hot-offer', consequence_classes: ['INFORMATIONAL'], tools: ['get_verified_stay_offer'] }],
  otherwise: 'escalate',
  authority_ttl_seconds: 300,
});
const clock = testClock(START);
let served: { node: ServedNode; client: NodeClient };
let world: UcpTestNode;
let smtp: TestSmtp;
let fetch: HardenedFetch;
/** Complete requests that left a host (every host's fetch goes through `counted`). */
let completes = 0;
const counted: FetchLike = (input, init) => {
  if (init?.method === 'POST' && String(input).endsWith('/complete')) completes++;
  return fetch(input, init);
};

beforeAll(async () => {
  world = await serveUcpTestNode(DOMAIN, 'ucp-gated', clock);
  ({ smtp, fetch } = world);
  served = world;
});
afterAll(() => world?.close());

/** A booking host with its own Gate; the person confirms every session handed to them with the mailed code. */
async function openHost(name: string, network: FetchLike = counted) {
  const { privateJwk } = await generateEd25519Jwk();
  const gate = new Gate({
    store: await openSqliteStore(join(world.dir, `${name}.sqlite`)),
    policy: POLICY,
    sinkId: SINK,
    signingKey: { privateJwk, kid: `${name}-key` },
    clock,
  });
  const handedOff: string[] = [];
  const host = new BookingHost({
    gate,
    nodeUrl: `https://${DOMAIN}`,
    booker: BOOKER,
    fetch: network,
    agentProfile: TEST_UCP_AGENT_PROFILE,
    session_id: name,
    model: 'test',
    clock,
    guestWait: { timeoutMs: 5_000, pollMs: 50 },
    async handOff(h) {
      handedOff.push(h.session_id);
      expect(new URL(h.continue_url).host).toBe(DOMAIN);
      const code = await mailedCode(served.client, DOMAIN, smtp, h.session_id, BOOKER.email);
      expect((await guestStep(served.client, DOMAIN, h.session_id, 'confirm', code)).sessionStatus).toBe('ready_for_complete');
    },
  });
  let n = 0;
  const block = (toolName: string, input: unknown) => ({ id: `toolu_${name}_${++n}`, name: toolName, input });
  const offer = async (from: number, nights: number) => {
    const r = await host.handle(
      'anthropic',
      block('get_verified_stay_offer', { check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights), guests: 2 }),
    );
    const body = JSON.parse(r.text) as { offer_id: string; safe_to_quote: boolean };
    expect(body.safe_to_quote).toBe(true);
    return body.offer_id;
  };
  /** request_booking without approval: the session is created and the act escalates to the person. */
  const ask = async (offer_id: string) => {
    const r = await host.handle('anthropic', block('request_booking', { offer_id }));
    expect(r.outcome.decision.code).toBe('EF_APPROVAL_REQUIRED');
    const approvalId = (JSON.parse(r.text) as { approval_id: string }).approval_id;
    const held = host.approvalFor(approvalId)!;
    // The person approves exactly the binding they reviewed.
    expect((await gate.approve(approvalId, 'ada@example.org', actBindingDigest(held.act, SINK))).status).toBe('issued');
    return { approvalId, view: held.view };
  };
  return { host, gate, handedOff, block, offer, ask, close: () => gate.close() };
}

describe('BookingHost over UCP booking sessions', () => {
  it('approve → the guest confirms on the host’s page → one Complete, the booking receipt verified; a replay is denied', async () => {
    const h = await openHost('approved');
    try {
      const offerId = await h.offer(10, 3);
      const { approvalId, view } = await h.ask(offerId);
      expect(view).toMatchObject({
        canonical_domain: DOMAIN,
        booking_origin: `https://${DOMAIN}`,
        check_in: dayAfter(START, 10),
        guests: 2,
      });
      expect(h.host.steps.find((s) => s.step === 'session')).toMatchObject({ status: 'requires_escalation', session_id: view.session_id });
      // The session blocks nothing yet and nothing was completed.
      const before = completes;
      const r = await h.host.handle('anthropic', h.block('request_booking', { offer_id: offerId, approval_id: approvalId }));
      expect(r.outcome).toMatchObject({ invoked: true, decision: { allow: true } });
      expect(JSON.parse(r.text)).toMatchObject({ booked: true, session_id: view.session_id, status: 'completed', receipt: 'verified' });
      expect(h.handedOff).toEqual([view.session_id]);
      expect(h.host.steps.at(-1)).toMatchObject({ step: 'booked', session_id: view.session_id, booking_id: expect.stringMatching(/^br_/) });
      expect(completes).toBe(before + 1);
      // The same authority again: EF_005 (consumed), no second Complete.
      const replay = await h.host.handle('anthropic', h.block('request_booking', { offer_id: offerId, approval_id: approvalId }));
      expect(replay.outcome).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_005' } });
      expect(completes).toBe(before + 1);
    } finally {
      await h.close();
    }
  });

  it('a Complete of another session (the model named it) is denied EF_SCOPE_MISMATCH, nothing completed', async () => {
    const h = await openHost('swapped');
    try {
      const { approvalId, view } = await h.ask(await h.offer(20, 2));
      const otherOffer = await h.offer(30, 2);
      // Another session the host made (for another offer): its id is what the model now names.
      await h.host.handle('anthropic', h.block('request_booking', { offer_id: otherOffer }));
      const other = h.host.steps.filter((s) => s.step === 'session').at(-1) as { session_id: string };
      expect(other.session_id).not.toBe(view.session_id);
      const before = completes;
      const r = await h.host.handle(
        'anthropic',
        h.block('request_booking', { offer_id: otherOffer, approval_id: approvalId, session_id: other.session_id }),
      );
      expect(r.outcome).toMatchObject({ invoked: false, decision: { code: 'EF_SCOPE_MISMATCH' } });
      expect(completes).toBe(before);
      // The other session was never handed to the person, so nothing was confirmed for it either.
      expect(h.handedOff).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('another stay after approval (another offer named with the approval) is denied EF_SCOPE_MISMATCH, nothing completed', async () => {
    const h = await openHost('stay');
    try {
      const { approvalId } = await h.ask(await h.offer(40, 2));
      const longer = await h.offer(40, 3);
      const before = completes;
      const r = await h.host.handle('anthropic', h.block('request_booking', { offer_id: longer, approval_id: approvalId }));
      expect(r.outcome).toMatchObject({ invoked: false, decision: { code: 'EF_SCOPE_MISMATCH' } });
      expect(completes).toBe(before);
    } finally {
      await h.close();
    }
  });

  it('an altered total at dispatch (the session as read before Complete) is denied EF_SCOPE_MISMATCH, nothing completed', async () => {
    // The host's network path alters the session's total once the person has approved.
    let alter = false;
    const altering: FetchLike = async (input, init) => {
      const res = await counted(input, init);
      if (!alter || (init?.method ?? 'GET') !== 'GET' || !String(input).includes('/booking-sessions/')) return res;
      const session = (await res.json()) as { totals: { type: string; amount: number }[] };
      for (const t of session.totals) if (t.type === 'total') t.amount -= 100;
      return new Response(JSON.stringify(session), { status: res.status, headers: { 'content-type': 'application/json' } });
    };
    const h = await openHost('total', altering);
    try {
      const offerId = await h.offer(50, 2);
      const { approvalId, view } = await h.ask(offerId);
      alter = true;
      const before = completes;
      const r = await h.host.handle('anthropic', h.block('request_booking', { offer_id: offerId, approval_id: approvalId }));
      expect(r.outcome).toMatchObject({ invoked: false, decision: { code: 'EF_SCOPE_MISMATCH' } });
      expect(completes).toBe(before);
      // The session the person confirmed stays uncompleted.
      expect(
        (
          JSON.parse(
            (await served.client.request('GET', `/ucp/v1/booking-sessions/${view.session_id}`, { headers: ucpRestHeaders('GET') })).text,
          ) as { status: string }
        ).status,
      ).toBe('ready_for_complete');
    } finally {
      await h.close();
    }
  });

  it('a Complete sent to another endpoint than the approved one is denied EF_DESTINATION_MISMATCH', async () => {
    const h = await openHost('moved');
    try {
      const { approvalId, view } = await h.ask(await h.offer(60, 2));
      const approved = h.host.approvalFor(approvalId)!;
      const session = JSON.parse(
        (await served.client.request('GET', `/ucp/v1/booking-sessions/${view.session_id}`, { headers: ucpRestHeaders('GET') })).text,
      );
      const live = liveUcpComplete(approved.act, { endpoint: 'https://elsewhere.example/ucp/v1', session_id: view.session_id, session });
      let invoked = false;
      const r = await h.gate.dispatch(live.act, live.args, async () => {
        invoked = true;
      });
      expect(r.decision).toMatchObject({ allow: false, code: 'EF_DESTINATION_MISMATCH' });
      expect(invoked).toBe(false);
    } finally {
      await h.close();
    }
  });
});
