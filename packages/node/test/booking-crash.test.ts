/**
 * A serving node stopped in the middle of UCP booking sessions, on a real SQLite file:
 * - kill -9 while guests confirm (twin sessions racing for the same nights among them) and agents
 *   Complete (each Complete sent twice at once with one Idempotency-Key), then a restart on the same
 *   store: every replayed Complete gets the stored answer, or (its claim left unsettled by the kill)
 *   `idempotency_in_progress` until the claim is stale, then the completed session; every session
 *   is completed with exactly one reservation and a receipt that verifies, or still completable;
 * - SIGTERM under the same load: the node drains and exits 0, every request in flight is answered or
 *   refused at the connection, no key is left claimed; after a restart every Create replayed with
 *   its key gives exactly one session, and every Complete its stored answer.
 * After each: no night is held twice, and every hold a session's confirmation made is that
 * session's reservation (none half-written). A real `vrp node serve` child process over https
 * (dev CA), a real local SMTP server for the guests' codes.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initNode } from '@vrpkit/node';
import { JWKS_PATH, UCP_PROFILE_PATH, type VrpJwks } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { type NodeClient, nodeClient, tempDir } from '@vrpkit/testkit/node';
import {
  expectCompletedWithReceipt,
  expectNoNightHeldTwice,
  guestStep,
  mailedCode,
  UCP_SESSIONS_PATH,
  type UcpCompletedView,
  ucpCall,
  ucpStayRequest,
} from '@vrpkit/testkit/ucp';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'booking-crash.example';
const tmp = tempDir('booking-crash');
const dataDir = join(tmp.dir, 'node');
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
/** Two nights from `from` days ahead (the sample property's minimum stay). */
const stayAt = (from: number) => ({ check_in: day(from), check_out: day(from + 2) });
const COMPLETE = { payment: {} };
/** A claim older than this is taken over (ucp/idempotency.ts IDEMPOTENCY_STALE_CLAIM_MS, with a second to spare). */
const STALE_CLAIM_MS = 61_000;

type View = UcpCompletedView;

let smtp: TestSmtp;
let run: CliRun | undefined;
let client: NodeClient | undefined;
let propertyId = '';

async function start(): Promise<void> {
  run = vrpCli([
    'node',
    'serve',
    '--data-dir',
    dataDir,
    '--dev',
    '--json',
    '--smtp-url',
    smtp.url,
    '--booking-rate-limit',
    '1000000',
    '--booking-holds-per-day',
    '0',
    '--sync-interval',
    '0',
    '--shutdown-grace',
    '10',
  ]);
  const { port, ca } = await listeningEvent(run);
  client = nodeClient(DOMAIN, port, readFileSync(ca, 'utf8'));
}

async function stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null> {
  run!.child.kill(signal);
  const code = await run!.exited;
  await client?.close();
  run = undefined;
  return code;
}

beforeAll(async () => {
  smtp = await startTestSmtp();
  await initNode({ domain: DOMAIN, dataDir });
  await start();
  const profile = JSON.parse((await client!.get(UCP_PROFILE_PATH)).text) as {
    ucp: { capabilities: Record<string, { config?: { property?: { id: string } } }[]> };
  };
  propertyId = profile.ucp.capabilities['dev.vrpkit.lodging']?.[0]?.config?.property?.id ?? '';
}, 60_000);

afterAll(async () => {
  if (run) await stop('SIGKILL');
  await smtp?.close();
  tmp.cleanup();
});

const email = (n: number) => `guest${n}@example.org`;
const sessionPath = (id: string) => `${UCP_SESSIONS_PATH}/${id}`;

/** Create Booking Session for `stay` as guest `n`, with `key` when given. */
const create = (n: number, from: number, key?: string) =>
  ucpCall<View>(client!, 'POST', UCP_SESSIONS_PATH, ucpStayRequest(propertyId, stayAt(from), { email: email(n) }), {
    ...(key ? { 'idempotency-key': key } : {}),
  });
const complete = (id: string, key: string) =>
  ucpCall<View>(client!, 'POST', `${sessionPath(id)}/complete`, COMPLETE, { 'idempotency-key': key });
const getSession = async (id: string) => (await ucpCall<View>(client!, 'GET', sessionPath(id))).json;

/** A session for guest `n` and its mailed code. */
async function awaitingGuest(n: number, from: number): Promise<{ id: string; code: string }> {
  const c = await create(n, from);
  expect(c.status).toBe(201);
  return { id: c.json.id, code: await mailedCode(client!, DOMAIN, smtp, c.json.id, email(n)) };
}

/** Confirm `id` as its guest would; a still-waiting session gets a new code first. */
async function confirm(id: string, n: number, code?: string) {
  return guestStep(client!, DOMAIN, id, 'confirm', code ?? (await mailedCode(client!, DOMAIN, smtp, id, email(n))));
}

/** Fire `requests` at once; once `killAfter` of them are answered, stop the node with `signal`. Each outcome: the answer or the error. */
async function burst<T>(requests: (() => Promise<T>)[], killAfter: number, signal: 'SIGKILL' | 'SIGTERM') {
  // Connections opened beforehand (kept alive): the requests reach the node together, not behind TLS handshakes.
  await Promise.all(requests.map(() => client!.get('/healthz')));
  let answered = 0;
  let stopped: Promise<number | null> | undefined;
  const outcomes = requests.map((r) =>
    r().then(
      (v) => {
        if (++answered === killAfter) stopped = stop(signal);
        return { ok: true as const, value: v };
      },
      (e: unknown) => ({ ok: false as const, error: String(e) }),
    ),
  );
  const settled = await Promise.all(outcomes);
  return { settled, exit: await (stopped ?? stop(signal)) };
}

/** The store as it is on disk (read by the test, next to the node). */
function db<T>(fn: (d: Database.Database) => T): T {
  const d = new Database(join(dataDir, 'node.sqlite'), { timeout: 5000 });
  try {
    return fn(d);
  } finally {
    d.close();
  }
}

/** No night held twice; every hold a session's confirmation made is that session's, and that session is past the guest. */
function assertNothingDoubledOrHalfWritten(): void {
  const holds = db(
    (d) =>
      d
        .prepare("select booking_id, idempotency_key, check_in, check_out from booking_request where status in ('pending','confirmed')")
        .all() as {
        booking_id: string;
        idempotency_key: string;
        check_in: string;
        check_out: string;
      }[],
  );
  expectNoNightHeldTwice(holds);
  const sessions = db((d) => d.prepare('select session_id, status, booking_id from ucp_session').all()) as {
    session_id: string;
    status: string;
    booking_id: string | null;
  }[];
  const byId = new Map(sessions.map((s) => [s.session_id, s]));
  for (const h of holds) {
    const s = byId.get(h.idempotency_key.replace(/^ucp-/, ''));
    expect(s?.booking_id, `hold ${h.booking_id} is its session's`).toBe(h.booking_id);
    expect(['ready_for_complete', 'completed']).toContain(s?.status);
  }
  for (const s of sessions) if (s.status === 'ready_for_complete' || s.status === 'completed') expect(s.booking_id).not.toBeNull();
  const reservations = sessions.filter((s) => s.booking_id).map((s) => s.booking_id);
  expect(new Set(reservations).size).toBe(reservations.length);
}

const assertCompleted = (v: View, jwks: VrpJwks) =>
  expectCompletedWithReceipt(v, { jwks, domain: DOMAIN, clock: { now: () => Date.now() } });

describe('a serving node stopped in the middle of booking sessions', () => {
  it('kill -9 mid confirm and complete: after a restart every session is completed once with a verifying receipt, or still completable; no night held twice', async () => {
    // Eight stays; sessions 8 and 9 are twins of 6 and 7 (the same nights), confirmed at the same time.
    const sessions: { id: string; code: string; n: number }[] = [];
    for (let n = 0; n < 10; n++) sessions.push({ ...(await awaitingGuest(n, 20 + 3 * (n < 8 ? n : n - 2))), n });
    const ready = sessions.slice(0, 4);
    for (const s of ready) expect((await confirm(s.id, s.n, s.code)).sessionStatus).toBe('ready_for_complete');
    const keys = new Map(ready.map((s) => [s.id, randomUUID()]));

    const requests: (() => Promise<unknown>)[] = [
      ...ready.flatMap((s) => [() => complete(s.id, keys.get(s.id)!), () => complete(s.id, keys.get(s.id)!)]),
      ...sessions.slice(4).map((s) => () => confirm(s.id, s.n, s.code)),
    ];
    const { settled } = await burst(requests, 2, 'SIGKILL');
    expect(settled.some((o) => o.ok)).toBe(true);

    await start();
    const jwks = JSON.parse((await client!.get(JWKS_PATH)).text) as VrpJwks;
    // Each Complete replayed with its key: the stored answer, or the claim the kill left is still held.
    const inProgress: string[] = [];
    for (const s of ready) {
      const again = await complete(s.id, keys.get(s.id)!);
      if (again.status === 409) {
        expect((again.json as unknown as { messages: { code: string }[] }).messages[0]?.code).toBe('idempotency_in_progress');
        inProgress.push(s.id);
        continue;
      }
      expect(again.status).toBe(200);
      await assertCompleted(again.json, jwks);
      // The stored answer, byte for byte the same reservation on every replay.
      expect((await complete(s.id, keys.get(s.id)!)).json.confirmation).toEqual(again.json.confirmation);
    }
    // Once the claims are stale (a minute on: the test ages them rather than waiting), the replay completes the session.
    db((d) =>
      d
        .prepare('update ucp_idempotency set created_at = ? where answer_status is null')
        .run(new Date(Date.now() - STALE_CLAIM_MS).toISOString()),
    );
    for (const id of inProgress) {
      const again = await complete(id, keys.get(id)!);
      expect(again.status).toBe(200);
      await assertCompleted(again.json, jwks);
    }

    // The confirmations the kill cut: each session held its nights or still waits for its guest, who confirms again.
    for (const s of sessions.slice(4)) {
      const v = await getSession(s.id);
      expect(['ready_for_complete', 'requires_escalation']).toContain(v.status);
      if (v.status === 'requires_escalation') await confirm(s.id, s.n);
    }
    assertNothingDoubledOrHalfWritten();
    // Of each pair of twins exactly one holds the nights and completes; the other was refused them.
    for (const s of sessions.slice(4, 6)) await assertCompleted((await complete(s.id, randomUUID())).json, jwks);
    for (let i = 6; i < 8; i++) {
      const pair = [await getSession(sessions[i]!.id), await getSession(sessions[i + 2]!.id)];
      expect(pair.map((v) => v.status).sort()).toEqual(['ready_for_complete', 'requires_escalation']);
      const winner = pair.find((v) => v.status === 'ready_for_complete')!;
      const done = await complete(winner.id, randomUUID());
      await assertCompleted(done.json, jwks);
    }
    for (const s of ready) await assertCompleted(await getSession(s.id), jwks);
    assertNothingDoubledOrHalfWritten();
  }, 90_000);

  it('SIGTERM under booking load: drained, exit 0, no key left claimed; after a restart each key stands for one session and replays its answer', async () => {
    const waiting: { id: string; code: string; n: number }[] = [];
    for (let n = 20; n < 26; n++) waiting.push({ ...(await awaitingGuest(n, 60 + 3 * (n - 20))), n });
    const ready = waiting.slice(0, 3);
    for (const s of ready) expect((await confirm(s.id, s.n, s.code)).sessionStatus).toBe('ready_for_complete');
    const completeKeys = ready.map(() => randomUUID());
    const creates = Array.from({ length: 6 }, (_, i) => ({ n: 40 + i, from: 100 + 3 * i, key: randomUUID() }));

    const requests: (() => Promise<unknown>)[] = [
      ...creates.map((c) => () => create(c.n, c.from, c.key)),
      ...ready.map((s, i) => () => complete(s.id, completeKeys[i]!)),
      ...waiting.slice(3).map((s) => () => confirm(s.id, s.n, s.code)),
    ];
    const { settled, exit } = await burst(requests, Math.ceil(requests.length / 3), 'SIGTERM');
    expect(exit).toBe(0);
    // Answered, or refused at the connection (the node no longer accepted it): never a broken answer.
    for (const o of settled) if (!o.ok) expect(o.error).toMatch(/fetch failed|ECONNREFUSED|socket|closed/i);
    // Drained: every request the node took finished, so no key is left claimed without its answer.
    expect(db((d) => d.prepare('select count(*) as n from ucp_idempotency where answer_status is null').get())).toEqual({ n: 0 });

    await start();
    const jwks = JSON.parse((await client!.get(JWKS_PATH)).text) as VrpJwks;
    for (const [i, c] of creates.entries()) {
      const first = settled[i]!;
      const again = await create(c.n, c.from, c.key);
      expect(again.status).toBe(201);
      if (first.ok) expect(again.json.id).toBe((first.value as { json: View }).json.id);
      // One session per key: the stay's nights are asked by this key's session only.
      const rows = db((d) => d.prepare('select count(*) as n from ucp_session where check_in = ?').get(stayAt(c.from).check_in));
      expect(rows).toEqual({ n: 1 });
    }
    for (const [i, s] of ready.entries()) {
      const again = await complete(s.id, completeKeys[i]!);
      expect(again.status).toBe(200);
      await assertCompleted(again.json, jwks);
    }
    for (const s of waiting.slice(3)) {
      const v = await getSession(s.id);
      if (v.status === 'requires_escalation') expect((await confirm(s.id, s.n)).sessionStatus).toBe('ready_for_complete');
      await assertCompleted((await complete(s.id, randomUUID())).json, jwks);
    }
    assertNothingDoubledOrHalfWritten();
  }, 90_000);
});
