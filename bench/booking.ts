/**
 * bench/booking: the node's one booking path, UCP Lodging booking sessions, over https on loopback
 * with concurrent clients, on SQLite and (when `VRPKIT_TEST_PG_URL` names a server) PostgreSQL, as a
 * ratio to a baseline served by the same node in the same run: a fresh signed offer
 * (`GET /api/verified-stay-offer` with the offer cache off), which is the re-quote a session's
 * creation and the guest's confirmation make.
 *
 * Rows (per store):
 * - fresh offer (baseline): one signed offer per request;
 * - UCP session create / whole flow (bench/sections/ucp-sessions.ts): booking sessions bound to a
 *   signed offer, and the whole flow with the guest's mailed code (a local SMTP server), the hold and complete;
 * - agent flow, ungated / gated (SQLite only): the whole guest-side flow per stay, one at a time:
 *   the offer over MCP (verified, MCP receipt bound), the session from it (`UcpLodgingClient`), the
 *   guest's confirmation with the mailed code, Complete and the booking receipt verified; the gated
 *   row runs it through `BookingHost` and a Gate on a SQLite file (the tool blocks a recorded model
 *   would send, no model call; the approval is a callback). Its ratio is to the ungated flow in the
 *   same run, and `added ms` is the p50 difference.
 * Offers are fetched before the clock starts (an agent has its offer before it books). A row is a
 * fixed number of requests, not a duration: each hold consumes calendar nights.
 *
 * To add rows, push onto `rowsFor` below; each row returns a `Run`.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/booking.ts [--requests 300] [--concurrency 16] [--flows 40] [--sessions 40]
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BOOKING_TOOL, BookingHost, createHardenedFetch, getOfferVia, JwksCache, OFFER_TOOL, UcpLodgingClient } from '@vrpkit/agent';
import { generateEd25519Jwk } from '@vrpkit/core';
import { Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { confirmOnGuestPage, initNode, propertyDocument, sampleProperty, serveNode } from '@vrpkit/node';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { TEST_UCP_AGENT_PROFILE } from '@vrpkit/testkit/ucp';
import pg from 'pg';
import { Agent, buildConnector } from 'undici';
import { cpuSeconds, numberFlag, percentile, printTable, startChild } from './lib.js';
import { type SessionRun, ucpSessionRows } from './sections/ucp-sessions.js';

const DOMAIN = 'bench-booking.example';
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const booker = { first_name: 'Bench', last_name: 'Guest', email: 'bench@example.org' };

interface Run extends SessionRun {
  /** The row this row's ratio is to (default: the store's first row). */
  baseline_row?: string;
}

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Send `calls` in order through `concurrency` clients; returns latencies and status counts. */
async function drive(agent: Agent, calls: Call[], concurrency: number, pids: number[]) {
  const cpuBefore = cpuSeconds(pids);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  const client = async () => {
    for (let i = next++; i < calls.length; i = next++) {
      const c = calls[i]!;
      const t = performance.now();
      const res = await agent.request({
        origin: `https://${DOMAIN}`,
        path: c.path,
        method: c.method,
        ...(c.body ? { body: c.body, headers: { 'content-type': 'application/json' } } : {}),
      });
      await res.body.text();
      latencies.push(performance.now() - t);
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(pids);
  latencies.sort((a, b) => a - b);
  return {
    statuses,
    rps: calls.length / elapsed,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    server_cpu_us_per_request: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / calls.length,
  };
}

const offerPath = (fromDay: number, nights: number) => {
  const d = Date.now() + fromDay * DAY;
  return `/api/verified-stay-offer?check_in=${iso(d)}&check_out=${iso(d + nights * DAY)}&guests=2`;
};

/** The signed offers for `paths`, fetched before the clock starts. */
async function offersFor(agent: Agent, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const res = await agent.request({ origin: `https://${DOMAIN}`, path, method: 'GET' });
    out.push((JSON.parse(await res.body.text()) as { signature: { jws: string } }).signature.jws);
  }
  return out;
}

type Row = { name: string; run: () => Promise<Run> };

/** The rows for one store; `firstDay` keeps each row on nights no other row touches. */
function rowsFor(agent: Agent, pids: number[], requests: number, concurrency: number): Row[] {
  return [
    {
      name: 'fresh offer (baseline)',
      run: async () => {
        const calls = Array.from({ length: requests }, (_, i): Call => ({ method: 'GET', path: offerPath(1 + (i % 300), 1) }));
        const r = await drive(agent, calls, concurrency, pids);
        return { requests, errors: requests - (r.statuses.get(200) ?? 0), ...r };
      },
    },
  ];
}

/**
 * The whole guest-side flow, `flows` times on distinct 1-night stays from day 750 on, one at a
 * time (latency, not throughput): ungated (the agent's calls only) and gated (the same calls as
 * tool blocks through `BookingHost` and a Gate). Both verify the offer and its MCP receipt, have the
 * guest confirm the session with the code from `smtp`, complete it and verify the booking receipt; a
 * flow that does not end in a verified booking counts as an error.
 */
function gatedFlowRows(hello: Record<string, unknown>, flows: number, mailbox: TestSmtp): Row[] {
  const network = { connectTo: [`${DOMAIN}:443:127.0.0.1:${hello.port}`], ca: [hello.caPem as string] };
  const stay = (i: number) => ({
    check_in: iso(Date.now() + (750 + 2 * i) * DAY),
    check_out: iso(Date.now() + (751 + 2 * i) * DAY),
    guests: 2,
  });
  const timed = async (run: (i: number) => Promise<boolean>, offset: number): Promise<Run> => {
    const latencies: number[] = [];
    let errors = 0;
    const t0 = performance.now();
    for (let i = 0; i < flows; i++) {
      const t = performance.now();
      if (!(await run(offset + i))) errors++;
      latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      requests: flows,
      errors,
      rps: flows / seconds,
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      server_cpu_us_per_request: null,
    };
  };
  const UNGATED = 'agent flow, ungated';
  return [
    {
      name: UNGATED,
      run: async () => {
        const fetch = createHardenedFetch(network);
        const jwksCache = new JwksCache({ fetch });
        // The host's profile is read once, as an agent does per host.
        const found = await UcpLodgingClient.discover(DOMAIN, { fetch, agentProfile: TEST_UCP_AGENT_PROFILE });
        if (!found.ok) throw new Error(`the bench node's UCP profile: ${found.code}`);
        const { client } = found;
        try {
          return await timed(async (i) => {
            const report = await getOfferVia('mcp', `https://${DOMAIN}`, stay(i), { fetch, jwksCache });
            const jws = (report.envelope as { signature?: { jws?: string } } | null)?.signature?.jws;
            if (!report.safe_to_quote || report.receipt?.verified !== true || typeof jws !== 'string') return false;
            const created = await client.createSession(jws, { booker });
            if (!created.ok || !created.session.continue_url) return false;
            await confirmOnGuestPage(fetch, mailbox, created.session.continue_url, booker.email, () => {});
            return (await client.complete(created.session.id, jws)).ok;
          }, 0);
        } finally {
          await fetch.close();
        }
      },
    },
    {
      name: 'agent flow, gated',
      run: async () => {
        const fetch = createHardenedFetch(network);
        const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-gate-'));
        const { privateJwk } = await generateEd25519Jwk();
        let host: BookingHost | undefined;
        const gate = new Gate({
          store: await openSqliteStore(join(dir, 'gate.sqlite')),
          policy: loadPolicy(fileURLToPath(new URL('../examples/booking-policy.yaml', import.meta.url))),
          sinkId: 'bench-booking-host',
          signingKey: { privateJwk, kid: 'bench-gate' },
          // The person approves what the approval view shows: the booking act built from the verified offer.
          approve: async (act) => host?.approvalFor(act.candidate_act_id) !== undefined,
        });
        host = new BookingHost({
          gate,
          nodeUrl: `https://${DOMAIN}`,
          booker,
          fetch,
          agentProfile: TEST_UCP_AGENT_PROFILE,
          session_id: 'bench',
          model: 'recorded',
          handOff: (h) => confirmOnGuestPage(fetch, mailbox, h.continue_url, booker.email, () => {}),
          guestWait: { timeoutMs: 10_000, pollMs: 20 },
        });
        try {
          const r = await timed(async (i) => {
            const offer = JSON.parse(
              (await host!.handle('anthropic', { id: `toolu_offer_${i}`, name: OFFER_TOOL, input: stay(i) })).text,
            ) as {
              offer_id?: string;
            };
            const booked = await host!.handle('anthropic', {
              id: `toolu_book_${i}`,
              name: BOOKING_TOOL,
              input: { offer_id: offer.offer_id },
            });
            return booked.outcome.invoked && (JSON.parse(booked.text) as { receipt?: string }).receipt === 'verified';
          }, flows);
          return { ...r, baseline_row: UNGATED };
        } finally {
          await gate.close();
          await fetch.close();
          rmSync(dir, { recursive: true, force: true });
        }
      },
    },
  ];
}

/** The UCP session rows (bench/sections/ucp-sessions.ts) on nights 640 on, which no other row touches. */
function sessionRows(agent: Agent, pids: number[], smtp: TestSmtp, concurrency: number, n: number): Row[] {
  return ucpSessionRows(
    { agent, domain: DOMAIN, smtp, concurrency, offersFor: (paths) => offersFor(agent, paths), offerPath, cpu: () => cpuSeconds(pids) },
    n,
    640,
  );
}

async function main() {
  const requests = numberFlag('requests', 300);
  const concurrency = numberFlag('concurrency', 16);
  const flows = numberFlag('flows', 40);
  const sessions = numberFlag('sessions', 40);
  if (sessions > 54) {
    process.stderr.write('error[usage]: --sessions is at most 54 (each session row holds its own nights)\n');
    process.exit(64);
  }
  const smtp = await startTestSmtp();
  if (flows > 170) {
    process.stderr.write('error[usage]: --flows is at most 170 (each flow holds its own night)\n');
    process.exit(64);
  }
  const dialects = ['sqlite', ...(process.env.VRPKIT_TEST_PG_URL ? ['postgres'] : [])];
  if (dialects.length === 1) process.stderr.write('VRPKIT_TEST_PG_URL is unset: PostgreSQL rows skipped\n');
  const table: string[][] = [
    ['store', 'row', 'requests', 'req/s', '× baseline', 'p50 ms', 'p99 ms', 'CPU µs/req', 'holds created/expected', 'unexpected'],
  ];
  const out: Record<string, unknown>[] = [];
  const children: ChildProcess[] = [];
  try {
    for (const dialect of dialects) {
      const { child, hello } = await startChild(import.meta.url, ['--serve', dialect, '--smtp', smtp.url]);
      children.push(child);
      const connector = buildConnector({ ca: hello.caPem as string });
      const agent = new Agent({
        connections: concurrency,
        connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(hello.port), servername: DOMAIN }, cb),
      });
      let baseline: number | undefined;
      const byName = new Map<string, Run>();
      const rows = [
        ...rowsFor(agent, hello.pids as number[], requests, concurrency),
        ...(dialect === 'sqlite' ? gatedFlowRows(hello, flows, smtp) : []),
        ...sessionRows(agent, hello.pids as number[], smtp, concurrency, sessions),
      ];
      for (const row of rows) {
        const r = await row.run();
        baseline ??= r.rps;
        byName.set(row.name, r);
        const base = r.baseline_row ? byName.get(r.baseline_row) : undefined;
        const ratio = r.rps / (base?.rps ?? baseline);
        const added = base ? { added_p50_ms: r.p50_ms - base.p50_ms } : {};
        out.push({ store: dialect, row: row.name, ...r, ratio_to_baseline: ratio, ...added });
        table.push([
          dialect,
          base ? `${row.name} (+${(r.p50_ms - base.p50_ms).toFixed(1)} ms p50)` : row.name,
          String(r.requests),
          r.rps.toFixed(0),
          ratio.toFixed(2),
          r.p50_ms.toFixed(1),
          r.p99_ms.toFixed(1),
          r.server_cpu_us_per_request === null ? '-' : r.server_cpu_us_per_request.toFixed(0),
          r.holds_expected === undefined
            ? '-'
            : `${r.holds_created}/${r.holds_expected}${r.holds_created === r.holds_expected ? '' : ' MISMATCH'}`,
          String(r.errors),
        ]);
      }
      await agent.close();
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await smtp.close();
  }
  printTable(table);
  process.stdout.write(`\nconcurrency ${concurrency}; ${cpus().length} CPUs, Node ${process.version}\n`);
  const results = new URL('./results/', import.meta.url);
  mkdirSync(results, { recursive: true });
  writeFileSync(
    new URL('booking.json', results),
    `${JSON.stringify({ bench: 'booking', at: new Date().toISOString(), node: process.version, cpus: cpus().length, concurrency, rows: out }, null, 2)}\n`,
  );
  if (out.some((r) => r.holds_expected !== undefined && r.holds_created !== r.holds_expected)) process.exitCode = 1;
}

// ── child: one node on the store named by argv, cache off, rate limit out of the way ─────────
async function serveChild(): Promise<void> {
  const dialect = process.argv[process.argv.indexOf('--serve') + 1];
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-booking-'));
  const propertyFile = join(dir, 'property.json');
  // 1-night stays up to three years ahead: enough distinct nights for every row.
  writeFileSync(
    propertyFile,
    JSON.stringify({ ...propertyDocument(sampleProperty(Date.now())), min_nights: 1, booking_horizon_days: 1095 }),
  );
  let databaseUrl: string | undefined;
  let schema: string | undefined;
  if (dialect === 'postgres') {
    schema = `bench_booking_${randomBytes(5).toString('hex')}`;
    const base = process.env.VRPKIT_TEST_PG_URL!;
    databaseUrl = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
  }
  const dataDir = join(dir, 'node');
  await initNode({ domain: DOMAIN, dataDir, propertyFile, ...(databaseUrl ? { databaseUrl } : {}) });
  const smtpUrl = process.argv[process.argv.indexOf('--smtp') + 1]!;
  const node = await serveNode({
    dataDir,
    dev: true,
    guestMail: { url: smtpUrl },
    offerCacheMaxAgeSeconds: 0,
    bookingRateLimit: 1_000_000,
    bookingHoldsPerDay: 0,
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  process.stdout.write(`${JSON.stringify({ port: node.port, caPem: node.caPem, pids: [process.pid] })}\n`);
  const stop = async () => {
    await node.close();
    if (schema) {
      const c = new pg.Client({ connectionString: process.env.VRPKIT_TEST_PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
    }
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv.includes('--serve')) await serveChild();
else await main();
