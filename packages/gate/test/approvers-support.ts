/**
 * Shared by the approvers tests (approvers-oidc, approvers-browser): a free loopback port (the
 * OpenID provider must know the page's redirect URI before the page starts), and an escalated
 * payout by one principal's agent, made by the real Gate, with its arguments kept for the page.
 */
import { createServer } from 'node:net';
import { canonicalJson } from '@vrpkit/core';
import type { AgentCandidateAct, Gate, GateStore } from '@vrpkit/gate';
import { expect } from 'vitest';
import { makeAct } from './procs/common.js';

export async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => s.once('listening', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

let n = 0;

/** An escalated payout (FINANCIAL: the test policy sends it to a person) by `principal`'s agent. */
export async function escalatedPayout(gate: Gate, store: GateStore, now: number, principal = 'org-1'): Promise<AgentCandidateAct> {
  const args = { amount: `${++n}.00`, to: 'PT50 0002 0123 1234 5678 9015 4' };
  const act = makeAct({
    id: `approvers-pay-${process.pid}-${n}`,
    tool: 'payout_create',
    consequence_class: 'FINANCIAL',
    args,
    policy_state: await gate.policyState(),
    now,
    ttlMs: 30 * 60_000,
  });
  act.initiating_principal = { principal_id: principal, principal_type: 'user' };
  expect((await gate.authorize(act)).status).toBe('escalated');
  await store.pendingArguments.record({
    candidate_act_id: act.candidate_act_id,
    arguments_json: canonicalJson(args),
    arguments_digest: act.arguments_digest.value,
    recorded_at: now,
  });
  return act;
}
