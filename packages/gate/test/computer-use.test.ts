/**
 * Computer use on a real Gate (SQLite file): an origin change MUST invalidate prior authority
 * (Tool-Use Binding draft, computer use). The live browser state is what a controller reads
 * right before the click; here the host hands it over directly.
 */
import { join } from 'node:path';
import {
  candidateActId,
  computerUseLiveArgs,
  type GateStore,
  handleAnthropicMessage,
  type LiveBrowserState,
  mapComputerUseAction,
  openSqliteStore,
  resolveActContext,
} from '@vrpkit/gate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostContext, openTestGate, type TestGate } from './scenarios-gate.js';

const AUTHORIZED = 'https://pay.example/checkout';
const MOVED = 'https://pay.example-evil/checkout';
const form = (origin: string) => ({ action_url: `${new URL(origin).origin}/pay`, fields: { amount: '150.00', beneficiary: 'vendor-441' } });
const stateOn = (url: string): LiveBrowserState => ({ url, form: form(url) });

let t: TestGate;
let store: GateStore;
beforeEach(async () => {
  t = await openTestGate();
  // A second handle on the gate's own file, to read what it recorded.
  store = await openSqliteStore(join(t.dir, 'authority.sqlite'));
});
afterEach(async () => {
  await store.close();
  await t.close();
});

describe('a denied origin change leaves the authority usable', () => {
  it('the origin-change deny invalidates the authority (consumed as refused, journaled); the original origin cannot use it afterwards', async () => {
    const clicks: unknown[] = [];
    const tools = { computer: async (input: unknown) => clicks.push(input) };
    let page = stateOn(AUTHORIZED);
    const opts = { liveState: async () => page };
    const msg = {
      content: [{ type: 'tool_use', id: 'toolu_pay1', name: 'computer', input: { action: 'left_click', coordinate: [160, 220] } }],
    };
    const ctx = hostContext(t.gate);
    const id = candidateActId('computer', 'sess55', 'toolu_pay1');

    expect((await handleAnthropicMessage(msg, tools, ctx, opts)).outcomes[0]!.decision.code).toBe('EF_APPROVAL_REQUIRED');
    const approved = await t.gate.approve(id, 'alice@acme');
    expect(approved.status).toBe('issued');

    page = stateOn(MOVED);
    const moved = await handleAnthropicMessage(msg, tools, ctx, opts);
    expect(moved.outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_DESTINATION_MISMATCH' } });
    // The deny spent the authority and the journal says why.
    expect(await store.ledger.getAuthority(id)).toMatchObject({ authority_id: approved.authority_id, state: 'CONSUMED' });
    expect(await store.journal.get(id)).toMatchObject({
      authority_id: approved.authority_id,
      state: 'REFUSED',
      error_code: 'EF_DESTINATION_MISMATCH',
      invoked_at: null,
    });

    // Back on the approved origin, with the approved values: the authority is gone, nothing runs.
    page = stateOn(AUTHORIZED);
    const back = await handleAnthropicMessage(msg, tools, ctx, opts);
    expect(back.outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_005' } });
    expect(clicks).toEqual([]);
  });

  it('gate.enforce with the approved act and live arguments read on another origin invalidates it too', async () => {
    const actCtx = await resolveActContext(hostContext(t.gate));
    if ('allow' in actCtx) throw new Error('no act context');
    const block = { id: 'toolu_pay2', name: 'computer', input: { action: 'left_click', coordinate: [160, 220] } };
    const act = mapComputerUseAction(block, stateOn(AUTHORIZED), actCtx);
    expect((await t.gate.authorize(act)).status).toBe('escalated');
    expect((await t.gate.approve(act.candidate_act_id, 'alice@acme')).status).toBe('issued');

    const moved = await t.gate.enforce(act, computerUseLiveArgs(block.input, stateOn(MOVED)));
    expect(moved).toMatchObject({ allow: false, code: 'EF_DESTINATION_MISMATCH' });
    expect(await store.journal.get(act.candidate_act_id)).toMatchObject({ state: 'REFUSED', error_code: 'EF_DESTINATION_MISMATCH' });
    expect(await t.gate.enforce(act, computerUseLiveArgs(block.input, stateOn(AUTHORIZED)))).toMatchObject({
      allow: false,
      code: 'EF_005',
    });
  });

  it('a changed field on the same origin is a scope mismatch that leaves the authority for the exact approved state', async () => {
    const actCtx = await resolveActContext(hostContext(t.gate));
    if ('allow' in actCtx) throw new Error('no act context');
    const block = { id: 'toolu_pay3', name: 'computer', input: { action: 'left_click', coordinate: [160, 220] } };
    const act = mapComputerUseAction(block, stateOn(AUTHORIZED), actCtx);
    await t.gate.authorize(act);
    await t.gate.approve(act.candidate_act_id, 'alice@acme');
    const edited: LiveBrowserState = {
      url: AUTHORIZED,
      form: { ...form(AUTHORIZED), fields: { amount: '150.00', beneficiary: 'vendor-666' } },
    };
    expect(await t.gate.enforce(act, computerUseLiveArgs(block.input, edited))).toMatchObject({ allow: false, code: 'EF_SCOPE_MISMATCH' });
    expect(await t.gate.enforce(act, computerUseLiveArgs(block.input, stateOn(AUTHORIZED)))).toMatchObject({ allow: true });
  });
});
