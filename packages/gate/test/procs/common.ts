/**
 * Shared by the ENFORCE tests and their child-process scripts: build candidate acts the
 * way a mapper does (real digests), a fixed test key, and the test policy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateJwkFromSeed, publicJwkOf } from '@vrpkit/core';
import {
  type AgentCandidateAct,
  type ConsequenceClass,
  digestArguments,
  Gate,
  type GateOptions,
  type GateStore,
  loadPolicy,
  openPostgresStore,
  openSqliteStore,
  type PolicyDocument,
  type PolicyState,
  type ProvenanceSource,
} from '@vrpkit/gate';

export const SINK = 'host-dispatch-1';
export const KID = 'gate-test-1';
export const PRIVATE_JWK = ed25519PrivateJwkFromSeed(new Uint8Array(32).fill(7));
export const PUBLIC_JWK = publicJwkOf(PRIVATE_JWK, KID);
export const SIGNING_KEY = { privateJwk: PRIVATE_JWK, kid: KID };

/** The test policy: searches are hot, sends/payouts/deploys escalate, retrieval + send is refused. */
export const TEST_POLICY: PolicyDocument = {
  version: 1,
  policy_id: 'gate-tests',
  tools: [
    { tool: 'search', consequence_class: 'INFORMATIONAL' },
    { tool: 'side_effect', consequence_class: 'PERSISTENT_STATE_CHANGE' },
  ],
  hot_envelopes: [
    { name: 'reads', consequence_classes: ['INFORMATIONAL'], authority_ttl_seconds: 60 },
    { name: 'crash-test-writes', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['side_effect'] },
  ],
};

/**
 * The direct paths' differential tests (proxy-direct-call, proxy-stdio-call): server-everything's
 * tools, get-sum waiting for a person (none comes, so it is denied) and every other one informational
 * in a hot envelope; and a 2026-07-28 per-request envelope naming the test as its client.
 */
export function directPathPolicy(policyId: string): PolicyDocument {
  return {
    version: 1,
    policy_id: policyId,
    informative_defaults: false,
    tools: [
      { tool: 'get-sum', consequence_class: 'PERSISTENT_STATE_CHANGE' },
      { tool: '*', consequence_class: 'INFORMATIONAL' },
    ],
    hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }],
  };
}

export function modernEnvelope(clientName: string): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1.0.0' },
  };
}

export interface ActSpec {
  id: string;
  tool?: string;
  args?: unknown;
  consequence_class?: ConsequenceClass;
  policy_state: PolicyState;
  sinkId?: string;
  endpoint?: string;
  destination?: string;
  provenance?: ProvenanceSource;
  now?: number;
  ttlMs?: number;
}

export function makeAct(s: ActSpec): AgentCandidateAct {
  const now = s.now ?? Date.now();
  const tool = s.tool ?? 'search';
  const act: AgentCandidateAct = {
    version: '1.0',
    object_type: 'agent_candidate_act',
    candidate_act_id: s.id,
    act_type: 'TOOL_CALL',
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + (s.ttlMs ?? 600_000)).toISOString(),
    initiating_principal: { principal_id: 'org-1' },
    agent: { agent_id: 'agent-1', model_id: 'test-model', delegation_depth: 0 },
    tool: { tool_id: tool, function_id: tool, tool_protocol: 'LOCAL_FUNCTION', ...(s.endpoint ? { tool_endpoint: s.endpoint } : {}) },
    purpose: { purpose_id: 'user-turn' },
    arguments_digest: digestArguments(s.args ?? { q: 'lisbon' }),
    consequence_class: s.consequence_class ?? (tool === 'search' ? 'INFORMATIONAL' : 'PERSISTENT_STATE_CHANGE'),
    policy_state: s.policy_state,
    freshness: { nonce: 'C0FFEE11DEADBEEF', session_id: 'sess-1' },
    finality_sink: { sink_id: s.sinkId ?? SINK, sink_type: 'TOOL_DISPATCH' },
    instruction_provenance: { source_type: s.provenance ?? 'user' },
  };
  if (s.destination) act.destination = { destination_id: s.destination };
  return act;
}

/** The store a child process opens (test/store-backends.ts `config`). */
export type ChildStoreConfig = { sqlite: string } | { postgres: string; schema: string };

/**
 * A child process's own store connection and a Gate on it with the test policy and key, started
 * up (connected, migrated) before it returns.
 */
export async function childGate(
  config: ChildStoreConfig,
  instance: string,
  opts: { poolSize: number; onGroupCommit?: (members: number) => void; gate?: Partial<GateOptions> },
): Promise<Gate> {
  const grouped = opts.onGroupCommit ? { onGroupCommit: opts.onGroupCommit } : {};
  const store: GateStore =
    'sqlite' in config
      ? await openSqliteStore(config.sqlite, grouped)
      : await openPostgresStore(config.postgres, { schema: config.schema, poolSize: opts.poolSize, ...grouped });
  const gate = new Gate({
    store,
    policy: loadPolicy(TEST_POLICY),
    sinkId: SINK,
    signingKey: SIGNING_KEY,
    instanceId: instance,
    policyTimeoutMs: 10_000,
    ...opts.gate,
  });
  await gate.policyState();
  return gate;
}

const created: string[] = [];

export function tmpDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `vrpkit-gate-${prefix}-`));
  created.push(dir);
  return dir;
}

/** Remove every directory tmpDir() made in this process (call from a test file's afterAll). */
export function removeTmpDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}
