/**
 * The sealed continuation of a downstream's input request (approvals/request-state.ts, issue 32
 * item 5; MCP 2026-07-28 basic/patterns/mrtr, Server Requirements 4 and 5): it opens only for the
 * call it was minted for (server, tool, arguments digest, principal), not after its expiry, not
 * tampered with, not from another gate, and an approval's state and a continuation are never taken
 * for one another.
 */
import type { Clock } from '@vrpkit/core';
import { describe, expect, it } from 'vitest';
import { type ContinuationState, requestStateKey, requestStateSealer } from '../src/approvals/request-state.js';

let now = 1_790_000_000_000;
const clock: Clock = { now: () => now };
const sealer = requestStateSealer(requestStateKey('continuation test'), { clock, ttlMs: 60_000 });

const STATE: ContinuationState = {
  candidate_act_id: 'act:mcp:test:1',
  server: 'http://127.0.0.1:1/mcp',
  tool: 'ask_note',
  arguments_digest: 'digest-a',
  principal: 'alice',
  round: 1,
  downstream_state: 'opaque state of the server',
  forwarded: ['name'],
  declined: ['link'],
};
const EXPECTED = { server: STATE.server, tool: STATE.tool, arguments_digest: STATE.arguments_digest, principal: STATE.principal };

describe('a sealed continuation', () => {
  it('opens for its own call, with everything it carries', async () => {
    const opened = await sealer.openContinuation(await sealer.sealContinuation(STATE), EXPECTED);
    expect(opened).toEqual({ ok: true, state: STATE });
  });

  it("is another call's for other arguments, another tool, server or principal", async () => {
    const sealed = await sealer.sealContinuation(STATE);
    for (const other of [{ arguments_digest: 'digest-b' }, { tool: 'open_link' }, { server: 'stdio:x#y' }, { principal: 'bob' }])
      expect(await sealer.openContinuation(sealed, { ...EXPECTED, ...other })).toEqual({ ok: false, reason: 'foreign' });
  });

  it('is refused tampered, from another gate, or expired', async () => {
    const sealed = await sealer.sealContinuation(STATE);
    const flipped = `${sealed.slice(0, 40)}${sealed[40] === 'A' ? 'B' : 'A'}${sealed.slice(41)}`;
    expect(await sealer.openContinuation(flipped, EXPECTED)).toMatchObject({ ok: false, reason: 'malformed' });
    const other = requestStateSealer(requestStateKey('another gate'), { clock });
    expect(await other.openContinuation(sealed, EXPECTED)).toMatchObject({ ok: false, reason: 'malformed' });
    now += 61_000;
    expect(await sealer.openContinuation(sealed, EXPECTED)).toEqual({ ok: false, reason: 'expired' });
  });

  it("an approval's state is not a continuation, and a continuation does not open as an approval's", async () => {
    const approval = await sealer.seal({
      candidate_act_id: STATE.candidate_act_id,
      binding_digest: 'binding',
      tool: STATE.tool,
      arguments_digest: STATE.arguments_digest,
      principal: STATE.principal,
      round: 1,
    });
    expect(await sealer.openContinuation(approval, EXPECTED)).toEqual({ ok: false, reason: 'not_continuation' });
    const continuation = await sealer.sealContinuation(STATE);
    expect(
      await sealer.open(continuation, {
        candidate_act_id: STATE.candidate_act_id,
        binding_digest: 'binding',
        tool: STATE.tool,
        arguments_digest: STATE.arguments_digest,
        principal: STATE.principal,
      }),
    ).toEqual({ ok: false, reason: 'malformed' });
  });
});
