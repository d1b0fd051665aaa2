/**
 * bench/gate-adapters — the added latency of each host-side adapter of the gate, against calling the
 * same tool directly in the same run, on the durable SQLite store (WAL, synchronous=FULL, a real
 * file): the Vercel AI SDK tool wrapper, the OpenAI Agents SDK function tool wrapper, the Claude
 * Agent SDK PreToolUse hook, the fetch wrapper (POST to a local server) and the memory-write
 * helper. Each call is a new act in a hot envelope (map → authorize → enforce → journal → invoke).
 * Payments are FINANCIAL, which is fail-closed and never in a hot envelope: every payment waits for
 * a person, so its latency is that person's. Target: added p50 ≤ 1.2 ms.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/gate-adapters.ts [--ms 4000]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tool as agentsTool, RunContext } from '@openai/agents';
import { ed25519PrivateJwkFromSeed } from '@vrpkit/core';
import {
  claudePreToolUseHook,
  Gate,
  gateAgentsFunctionTool,
  gateAiSdkTools,
  gatedFetch,
  gateMemoryWrite,
  loadPolicy,
  type MapContext,
  openSqliteStore,
} from '@vrpkit/gate';
import { z } from 'zod';
import { numberFlag, printTable } from './lib.js';

const MS = numberFlag('--ms', 4000);
const WARMUP = 100;

function quantiles(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99) };
}

/** Time `fn(i)` repeatedly for MS milliseconds (after a warm-up), in milliseconds per call. */
async function time(fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn(-1 - i);
  const out: number[] = [];
  const end = performance.now() + MS;
  for (let i = 0; performance.now() < end; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-gate-adapters-'));
const gate = new Gate({
  store: await openSqliteStore(join(dir, 'gate.sqlite')),
  policy: loadPolicy({
    version: 1,
    policy_id: 'bench-adapters',
    tools: [
      { tool: 'maps_search', consequence_class: 'INFORMATIONAL' },
      { tool: 'http_request', consequence_class: 'PERSISTENT_STATE_CHANGE' },
      { tool: 'memory_write', consequence_class: 'PERSISTENT_STATE_CHANGE' },
    ],
    hot_envelopes: [
      { name: 'reads', consequence_classes: ['INFORMATIONAL'], tools: ['maps_search'] },
      { name: 'writes', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['http_request', 'memory_write'] },
    ],
  }),
  sinkId: 'bench-sink',
  signingKey: { privateJwk: ed25519PrivateJwkFromSeed(new Uint8Array(32).fill(5)), kid: 'bench' },
});
const context: MapContext = {
  gate,
  session_id: `bench-${process.pid}`,
  principal: { principal_id: 'bench' },
  agent: { agent_id: 'bench' },
  purpose: { purpose_id: 'bench' },
  instruction_provenance: { source_type: 'user' },
};
const input = { q: 'apartments near Alfama', limit: 5, filters: { guests: 2, pets: false } };
const search = async (_: unknown) => ({ hits: 5 });

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(201).end());
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`;
const post = { method: 'POST', body: JSON.stringify(input), headers: { 'content-type': 'application/json' } };

const aiTools = gateAiSdkTools({ maps_search: { execute: search } }, context);
const agentsPlain = agentsTool({ name: 'maps_search', description: 'search', parameters: z.object({ q: z.string() }), execute: search });
const agentsGated = gateAgentsFunctionTool(agentsPlain, context);
const runContext = new RunContext();
const hook = claudePreToolUseHook(context);
const fetchGated = gatedFetch({ context });
const memory = new Map<string, unknown>();
const store = { write: (k: string, v: unknown) => memory.set(k, v).size };

const rows: Array<{ adapter: string; direct: ReturnType<typeof quantiles>; gated: ReturnType<typeof quantiles> }> = [];
async function measure(adapter: string, direct: (i: number) => Promise<unknown>, gated: (i: number) => Promise<unknown>) {
  const d = quantiles(await time(direct));
  const g = quantiles(await time(gated));
  rows.push({ adapter, direct: d, gated: g });
}

await measure(
  'Vercel AI SDK tool',
  () => search(input),
  (i) => (aiTools.maps_search.execute as (a: unknown, o: { toolCallId: string }) => Promise<unknown>)(input, { toolCallId: `ai-${i}` }),
);
await measure(
  'OpenAI Agents function tool',
  () => agentsPlain.invoke(runContext, JSON.stringify({ q: 'x' })),
  (i) =>
    agentsGated.invoke(runContext, JSON.stringify({ q: 'x' }), {
      toolCall: { type: 'function_call', callId: `ag-${i}`, name: 'maps_search', arguments: '' },
    } as never),
);
await measure(
  'Claude Agent PreToolUse hook',
  async () => undefined,
  (i) => hook({ hook_event_name: 'PreToolUse', tool_name: 'maps_search', tool_input: input, tool_use_id: `toolu-${i}` }, undefined),
);
await measure(
  'fetch wrapper (POST, local server)',
  () => fetch(url, post).then((r) => r.arrayBuffer()),
  (i) => fetchGated(url, { ...post, headers: { ...post.headers, 'idempotency-key': `f-${i}` } }).then((r) => r.arrayBuffer()),
);
await measure(
  'memory write',
  async () => store.write('k', input),
  (i) =>
    gateMemoryWrite(context, store, {
      memory: 'memory://bench',
      key: `k${i}`,
      value: input,
      provenance: { source_type: 'user' },
      id: `m-${i}`,
    }),
);

server.close();
await gate.close();
rmSync(dir, { recursive: true, force: true });

const fmt = (n: number) => n.toFixed(3);
const table = [['adapter', 'calls', 'direct p50 ms', 'gated p50 ms', 'added p50 ms', 'added p99 ms', 'target p50 ≤ 1.2']];
for (const r of rows) {
  const added50 = r.gated.p50 - r.direct.p50;
  table.push([
    r.adapter,
    String(r.gated.n),
    fmt(r.direct.p50),
    fmt(r.gated.p50),
    fmt(added50),
    fmt(r.gated.p99 - r.direct.p99),
    added50 <= 1.2 ? 'met' : 'NOT met',
  ]);
}
printTable(table);
const out = new URL('./results/', import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(new URL('gate-adapters.json', out), `${JSON.stringify({ ms_per_side: MS, rows }, null, 2)}\n`);
