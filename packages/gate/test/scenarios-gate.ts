/**
 * Shared setup for the adapter and scenario tests: a REAL Gate on a real SQLite file in a
 * temporary directory (never a fake gate), the tool-binding policy used by the examples, and
 * host tools that count their invocations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Clock, type Ed25519PublicJwk, generateEd25519Jwk } from '@vrpkit/core';
import { type AgentCandidateAct, Gate, loadPolicy, type MapContext, openSqliteStore, type PolicyDocument } from '@vrpkit/gate';

export const TEST_POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'acts-tests-v1',
  tools: [
    { tool: 'search', consequence_class: 'INFORMATIONAL' },
    { tool: 'email_send', consequence_class: 'COMMUNICATION' },
    { tool: 'payout_create', consequence_class: 'FINANCIAL' },
    { tool: 'repo_deploy', consequence_class: 'PERSISTENT_STATE_CHANGE' },
  ],
  // Seed §Pilot: "Leave maps.search on a hot envelope"; everything else goes to a person.
  hot_envelopes: [{ name: 'hot-search', consequence_classes: ['INFORMATIONAL'], tools: ['search'] }],
  otherwise: 'escalate',
};

export interface TestGate {
  gate: Gate;
  dir: string;
  /** The gate's public key (kid `acts-test-key`), as a cooperating sink gets it from the gate's JWKS. */
  publicJwk: Ed25519PublicJwk;
  close(): Promise<void>;
}

export async function openTestGate(
  opts: { sinkId?: string; approve?: (act: AgentCandidateAct) => Promise<boolean>; policy?: PolicyDocument; clock?: Clock } = {},
): Promise<TestGate> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-acts-'));
  const store = await openSqliteStore(join(dir, 'authority.sqlite'));
  const { privateJwk, publicJwk } = await generateEd25519Jwk();
  const gate = new Gate({
    store,
    policy: loadPolicy(opts.policy ?? TEST_POLICY),
    sinkId: opts.sinkId ?? 'host-dispatch-1',
    signingKey: { privateJwk, kid: 'acts-test-key' },
    ...(opts.approve ? { approve: opts.approve } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  return {
    gate,
    dir,
    publicJwk: { ...publicJwk, kid: 'acts-test-key' },
    async close() {
      await gate.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function hostContext(gate: Gate, over: Partial<MapContext> = {}): MapContext {
  return {
    gate,
    session_id: 'sess55',
    principal: { principal_id: 'org-acme', principal_type: 'workspace' },
    agent: { agent_id: 'seat-12', runtime_id: 'acts-test-loop', model_id: 'test-model', delegation_depth: 0 },
    purpose: { purpose_id: 'user-turn', declared_purpose: 'answer the user' },
    instruction_provenance: { source_type: 'user' },
    ...over,
  };
}

/** Host tools that record every invocation (name + arguments), so a test can prove what ran. */
export function countingTools() {
  const calls: Array<{ name: string; args: unknown }> = [];
  const tool =
    (name: string, result: (args: Record<string, unknown>) => unknown) =>
    async (args: Record<string, unknown>): Promise<unknown> => {
      calls.push({ name, args });
      return result(args);
    };
  return {
    calls,
    tools: {
      search: tool('search', (a) => ({ hits: [`result for ${String(a.q ?? a.query)}`] })),
      email_send: tool('email_send', () => ({ sent: true })),
      payout_create: tool('payout_create', () => ({ payout_id: 'po_1', status: 'created' })),
    },
  };
}
