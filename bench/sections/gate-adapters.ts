/**
 * The adapters section of bench/gate: the added latency of each host-side adapter of the gate,
 * against calling the same tool directly in the same run, on the durable SQLite store (WAL,
 * synchronous=FULL, a real file): the Vercel AI SDK tool wrapper, the OpenAI Agents SDK function
 * tool wrapper, the Claude Agent SDK PreToolUse hook, the fetch wrapper (POST to a local server)
 * and the memory-write helper. Each gated call is a new act in a hot envelope (map → authorize →
 * enforce → journal → invoke). Payments are FINANCIAL, which is fail-closed and never in a hot
 * envelope: every payment waits for a person, so its latency is that person's. Target: added p50 ≤ 1.2 ms.
 *
 * The calls are interleaved — each round calls every adapter and its direct counterpart once, in
 * a random order — so every row sees the same machine load and the same store size; measuring one
 * side after the other let a neighbour's burst, or the store growing under the earlier rows, land
 * on one row or one side only. The order is random, not fixed, because the store has periodic
 * work (an audit checkpoint signed every 100 entries, five entries an act): with a fixed order it
 * fell on the same row every time. CPU per call (this process: the gate, the tool, the local HTTP
 * server) is reported too: on a shared machine it is what a code change moves.
 *
 * Not a benchmark of its own (bench/run.ts lists only the files directly in bench/): bench/gate runs it.
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
import { printTable } from '../lib.js';

const TARGET_ADDED_P50_MS = 1.2;
/** Measured rounds stop after this long (every round runs every row once on each side). */
const MEASURE_MS = 20_000;
const WARMUP_ROUNDS = 100;

interface Side {
  ms: number[];
  cpu_us: number;
}
interface Row {
  adapter: string;
  direct: (i: number) => Promise<unknown>;
  gated: (i: number) => Promise<unknown>;
  sides: { direct: Side; gated: Side };
}

function quantiles(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99) };
}

/** Fisher–Yates. */
function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

async function timed(fn: (i: number) => Promise<unknown>, i: number, side: Side | undefined): Promise<void> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await fn(i);
  const ms = performance.now() - t0;
  if (!side) return;
  const used = process.cpuUsage(cpu);
  side.ms.push(ms);
  side.cpu_us += used.user + used.system;
}

/** Measure every adapter against its direct call, print the table and write bench/results/gate-adapters.json. */
export async function measureAdapters(): Promise<void> {
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
  // Both sides send the same request: the gated one's Idempotency-Key (its act id) is its only addition.
  const post = (key: string) => ({
    method: 'POST',
    body: JSON.stringify(input),
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
  });

  const aiTools = gateAiSdkTools({ maps_search: { execute: search } }, context);
  const agentsPlain = agentsTool({ name: 'maps_search', description: 'search', parameters: z.object({ q: z.string() }), execute: search });
  const agentsGated = gateAgentsFunctionTool(agentsPlain, context);
  const runContext = new RunContext();
  const hook = claudePreToolUseHook(context);
  const fetchGated = gatedFetch({ context });
  const memory = new Map<string, unknown>();
  const store = { write: (k: string, v: unknown) => memory.set(k, v).size };

  const row = (adapter: string, direct: Row['direct'], gated: Row['gated']): Row => ({
    adapter,
    direct,
    gated,
    sides: { direct: { ms: [], cpu_us: 0 }, gated: { ms: [], cpu_us: 0 } },
  });
  const rows = [
    row(
      'Vercel AI SDK tool',
      () => search(input),
      (i) => (aiTools.maps_search.execute as (a: unknown, o: { toolCallId: string }) => Promise<unknown>)(input, { toolCallId: `ai-${i}` }),
    ),
    row(
      'OpenAI Agents function tool',
      () => agentsPlain.invoke(runContext, JSON.stringify({ q: 'x' })),
      (i) =>
        agentsGated.invoke(runContext, JSON.stringify({ q: 'x' }), {
          toolCall: { type: 'function_call', callId: `ag-${i}`, name: 'maps_search', arguments: '' },
        } as never),
    ),
    row(
      'Claude Agent PreToolUse hook',
      async () => undefined,
      (i) => hook({ hook_event_name: 'PreToolUse', tool_name: 'maps_search', tool_input: input, tool_use_id: `toolu-${i}` }, undefined),
    ),
    row(
      'fetch wrapper (POST, local server)',
      (i) => fetch(url, post(`d-${i}`)).then((r) => r.arrayBuffer()),
      (i) => fetchGated(url, post(`f-${i}`)).then((r) => r.arrayBuffer()),
    ),
    row(
      'memory write',
      (i) => Promise.resolve(store.write(`d${i}`, input)),
      (i) =>
        gateMemoryWrite(context, store, {
          memory: 'memory://bench',
          key: `k${i}`,
          value: input,
          provenance: { source_type: 'user' },
          id: `m-${i}`,
        }),
    ),
  ];

  // Warm-up rounds have negative numbers, so no measured call repeats an act id.
  for (let round = -WARMUP_ROUNDS, stop = Number.POSITIVE_INFINITY; round < 0 || performance.now() < stop; round++) {
    if (round === 0) stop = performance.now() + MEASURE_MS;
    const calls = rows.flatMap((r) => (['direct', 'gated'] as const).map((side) => ({ r, side })));
    for (const { r, side } of shuffled(calls)) await timed(r[side], round, round >= 0 ? r.sides[side] : undefined);
  }

  server.close();
  await gate.close();
  rmSync(dir, { recursive: true, force: true });

  const results = rows.map((r) => {
    const direct = quantiles(r.sides.direct.ms);
    const gated = quantiles(r.sides.gated.ms);
    return {
      adapter: r.adapter,
      direct,
      gated,
      added_p50_ms: gated.p50 - direct.p50,
      added_p99_ms: gated.p99 - direct.p99,
      added_cpu_us_per_call: (r.sides.gated.cpu_us - r.sides.direct.cpu_us) / gated.n,
    };
  });
  const fmt = (n: number) => n.toFixed(3);
  const table = [
    [
      'adapter',
      'calls',
      'direct p50 ms',
      'gated p50 ms',
      'added p50 ms',
      'added p99 ms',
      'added CPU µs/call',
      `added p50 ≤ ${TARGET_ADDED_P50_MS}`,
    ],
  ];
  for (const r of results)
    table.push([
      r.adapter,
      String(r.gated.n),
      fmt(r.direct.p50),
      fmt(r.gated.p50),
      fmt(r.added_p50_ms),
      fmt(r.added_p99_ms),
      r.added_cpu_us_per_call.toFixed(0),
      r.added_p50_ms <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met',
    ]);
  process.stdout.write('\nadapters (SQLite, every call a new act in a hot envelope; calls interleaved with their direct counterparts)\n');
  printTable(table);
  const out = new URL('../results/', import.meta.url);
  mkdirSync(out, { recursive: true });
  writeFileSync(new URL('gate-adapters.json', out), `${JSON.stringify({ measure_ms: MEASURE_MS, rows: results }, null, 2)}\n`);
}
