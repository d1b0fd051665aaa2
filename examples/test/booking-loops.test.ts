/**
 * The gated booking loops on recorded model responses (Anthropic Messages, OpenAI Responses)
 * against a real node: the offer is fetched over MCP and verified, a UCP booking session is made from
 * it, a person approves exactly that offer and session, the guest confirms on the host's page with
 * the mailed code (the node holds the dates then), one Complete reaches the node and its receipt verifies.
 */
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { AgentCandidateAct } from '@vrpkit/gate';
import { testClock } from '@vrpkit/testkit/node';
import type { Response } from 'openai/resources/responses/responses';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_BOOKING_RECORDING,
  BOOKING_PROMPT,
  RECORDED_AT,
  RESPONSES_BOOKING_RECORDING,
  readRecording,
  replayAnthropicBooking,
  replayResponsesBooking,
  runAnthropicBookingLoop,
  runResponsesBookingLoop,
} from '../src/booking-loop.js';
import { type BookingWorld, NODE_DOMAIN, openBookingHost, startBookingWorld } from './booking-support.js';

const clock = testClock(RECORDED_AT);
// One node per run: both recordings book the same stay, and a hold blocks its dates.
let world: BookingWorld;

beforeEach(async () => {
  world = await startBookingWorld(clock);
}, 60_000);

afterEach(async () => {
  await world?.close();
});

/** The person approves only the stay the user asked for, at the host the user named, as the approval view shows it. */
async function openDeskHost(name: string) {
  const seen: AgentCandidateAct[] = [];
  let view: () => unknown = () => undefined;
  const opened = await openBookingHost(world, {
    clock,
    name,
    approve: async (act) => {
      seen.push(act);
      const v = view() as { canonical_domain: string; check_in: string; check_out: string; guests: number } | undefined;
      return (
        v !== undefined &&
        v.canonical_domain === NODE_DOMAIN &&
        BOOKING_PROMPT.includes(`from ${v.check_in} to ${v.check_out}`) &&
        BOOKING_PROMPT.includes(`${v.guests} guests`)
      );
    },
  });
  view = () => opened.host.approvalFor(seen.at(-1)?.candidate_act_id ?? '')?.view;
  return { ...opened, seen };
}

function expectBooked(
  host: Awaited<ReturnType<typeof openDeskHost>>,
  outcomes: { name: string; decision: { allow: boolean }; invoked: boolean }[],
) {
  expect(outcomes.map((o) => [o.name, o.decision.allow, o.invoked])).toEqual([
    ['get_verified_stay_offer', true, true],
    ['request_booking', true, true],
  ]);
  expect(host.seen).toHaveLength(1);
  expect(host.seen[0]?.consequence_class).toBe('FINANCIAL');
  expect(host.host.steps.find((s) => s.step === 'offer')).toMatchObject({ safe_to_quote: true, receipt_verified: true });
  // One UCP session, made from the verified offer, confirmed by the guest on the host's page, completed once.
  const session = host.host.steps.find((s) => s.step === 'session');
  expect(session).toMatchObject({
    status: 'requires_escalation',
    continue_url: expect.stringContaining(`https://${NODE_DOMAIN}/ucp/continue/`),
  });
  expect(host.host.steps.find((s) => s.step === 'guest')).toMatchObject({ status: 'ready_for_complete' });
  expect(host.host.steps.find((s) => s.step === 'booked')).toMatchObject({
    session_id: (session as { session_id: string }).session_id,
    receipt: 'verified',
    booking_id: expect.stringMatching(/^br_/),
  });
}

describe('the gated booking loop on recorded responses', () => {
  it('Anthropic Messages: verified offer → UCP session → approval → guest confirms → one Complete with a verified receipt', async () => {
    const before = world.completes();
    const desk = await openDeskHost('anthropic');
    const recording = readRecording<Message>(ANTHROPIC_BOOKING_RECORDING);
    const run = await runAnthropicBookingLoop({
      createMessage: replayAnthropicBooking(recording),
      host: desk.host,
      model: recording[0]!.model,
    });
    expectBooked(desk, run.outcomes);
    expect(run.final).toContain('holding');
    expect(world.completes()).toBe(before + 1);
  });

  it('OpenAI Responses: the same flow, the same single hold', async () => {
    const before = world.completes();
    const desk = await openDeskHost('responses');
    const recording = readRecording<Response>(RESPONSES_BOOKING_RECORDING);
    const run = await runResponsesBookingLoop({
      createResponse: replayResponsesBooking(recording),
      host: desk.host,
      model: recording[0]!.model,
    });
    expectBooked(desk, run.outcomes);
    expect(world.completes()).toBe(before + 1);
  });
});
