/**
 * The UCP section of bench/booking: booking sessions on the same node, as a ratio to the same
 * fresh-offer baseline as the booking-request rows.
 * - UCP session create: `POST /ucp/v1/booking-sessions` (UCP Lodging) from one of the node's signed offers, each
 *   a different stay (the offer checked, the live quote compared, one session row; no hold);
 * - UCP session, whole flow: create, the guest page's "email me a code" (a real local SMTP server
 *   receives it), the confirmation with that code (the hold, in the booking desk's transaction) and
 *   complete (the booking receipt signed): one flow per stay, `concurrency` at a time; every flow
 *   must end `completed` (expected = flows).
 * Offers are fetched before the clock starts, as in the booking rows.
 *
 * Not a benchmark of its own (bench/run.ts lists only the files directly in bench/): bench/booking runs it.
 */
import { ucpBookingRequest } from '@vrpkit/protocol';
import type { TestSmtp } from '@vrpkit/testkit/mail';
import { mailedCodeOf, ucpRestHeaders } from '@vrpkit/testkit/ucp';
import type { Agent } from 'undici';
import { type LoadRun, percentile } from '../lib.js';

/** What a row of bench/booking reports: a load row and, for the concurrency row, the holds it made. */
export interface SessionRun extends LoadRun {
  holds_created?: number;
  holds_expected?: number;
}

export interface SessionBench {
  agent: Agent;
  domain: string;
  smtp: TestSmtp;
  concurrency: number;
  /** The node's signed offers for `paths`, fetched before the clock starts. */
  offersFor(paths: string[]): Promise<string[]>;
  offerPath(fromDay: number, nights: number): string;
  cpu(): number | null;
}

const SESSIONS = '/ucp/v1/booking-sessions';

async function call(b: SessionBench, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await b.agent.request({
    origin: `https://${b.domain}`,
    path,
    method: method as 'GET',
    ...(body !== undefined ? { body } : {}),
    headers: {
      ...(body !== undefined && !headers['content-type'] ? { 'content-type': 'application/json' } : {}),
      // The Booking REST binding's required headers (UCP-Agent, Request-Id, Idempotency-Key) on the session endpoints.
      ...(path.startsWith(SESSIONS) ? ucpRestHeaders(method) : {}),
      ...headers,
    },
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const createBody = (jws: string, i: number) =>
  JSON.stringify(ucpBookingRequest(jws, { booker: { email: `bench-${i}@example.org`, first_name: 'Bench', last_name: 'Guest' } }));

/** One guest-page step as a same-origin browser posts it. */
async function pageStep(b: SessionBench, id: string, step: string, code = '') {
  const page = await call(b, 'GET', `/ucp/continue/${id}`);
  const token = /name="form_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const form = new URLSearchParams({ session_id: id, form_token: token, step, ...(code ? { code } : {}) }).toString();
  return call(b, 'POST', `/ucp/continue/${id}`, form, {
    'content-type': 'application/x-www-form-urlencoded',
    origin: `https://${b.domain}`,
    'sec-fetch-site': 'same-origin',
  });
}

/** Create, mail the code, confirm, complete: true when the session ends `completed`. */
async function wholeFlow(b: SessionBench, jws: string, i: number): Promise<boolean> {
  const created = JSON.parse((await call(b, 'POST', SESSIONS, createBody(jws, i))).text) as { id?: string };
  if (!created.id) return false;
  const before = b.smtp.received.length;
  await pageStep(b, created.id, 'send_code');
  const code = mailedCodeOf((await b.smtp.next(`bench-${i}@example.org`, before)).raw);
  if (!code) return false;
  await pageStep(b, created.id, 'confirm', code);
  const done = JSON.parse((await call(b, 'POST', `${SESSIONS}/${created.id}/complete`, JSON.stringify({ payment: {} }))).text) as {
    status?: string;
  };
  return done.status === 'completed';
}

/** Run `work(i)` for i < n, `concurrency` at a time; the timing and how many succeeded. */
async function timed(b: SessionBench, n: number, work: (i: number) => Promise<boolean>) {
  const cpuBefore = b.cpu();
  const latencies: number[] = [];
  let ok = 0;
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const t = performance.now();
      if (await work(i)) ok++;
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: b.concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpuAfter = b.cpu();
  latencies.sort((x, y) => x - y);
  return {
    ok,
    rps: n / seconds,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    server_cpu_us_per_request: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / n,
  };
}

/** The UCP rows: stays from day `firstDay` on, one night each, none shared with another row. */
export function ucpSessionRows(b: SessionBench, n: number, firstDay: number): { name: string; run: () => Promise<SessionRun> }[] {
  return [
    {
      name: 'UCP session create (signed offer)',
      run: async () => {
        const jws = await b.offersFor(Array.from({ length: n }, (_, i) => b.offerPath(firstDay + i, 1)));
        const r = await timed(b, n, async (i) => (await call(b, 'POST', SESSIONS, createBody(jws[i]!, i))).status === 201);
        return { requests: n, errors: n - r.ok, ...r };
      },
    },
    {
      name: 'UCP session, whole flow (create, code, confirm, complete)',
      run: async () => {
        const jws = await b.offersFor(Array.from({ length: n }, (_, i) => b.offerPath(firstDay + n + i, 1)));
        const r = await timed(b, n, (i) => wholeFlow(b, jws[i]!, n + i));
        return { requests: n, errors: n - r.ok, ...r, holds_created: r.ok, holds_expected: n };
      },
    },
  ];
}
