/**
 * The host's decisions reach people (issue 35 inbox, issue 34 item 6): a guest confirms a UCP session
 * with the mailed code, the host confirms the hold (`vrp node bookings confirm`, the console's same
 * operation) and the guest and the host (`--host-email`) are mailed through a real local SMTP server;
 * a decline takes a reason, which the guest's mail carries (markup and bidi controls inert) and the
 * canceled session's answer carries as a UCP message (valid against the vendored Booking schema);
 * a decline without a reason is refused and changes nothing; `vrp node bookings list` shows the
 * sessions and the reservations by status; the upkeep erases guest data past the host's retention
 * (`--guest-data-days`), run on a clock moved past one stay's check-out, keeping the rows.
 */
import { join } from 'node:path';
import { decideBooking, showBooking, startBookingUpkeep, withNodeStore } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope, UCP_BOOKING_SESSIONS, UCP_REST_BASE_PATH } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { mailText, startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { confirmedUcpSession, UCP_BOOKING_SCHEMA, ucpRestHeaders, ucpSchemaErrors } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServedNode } from '../src/serve.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DOMAIN = 'notice-villa.example';
/** Now: the CLI's decisions run on the system clock, and the node mails decisions of the last two days only. */
const START = Date.now();
const HOST = 'host@notice-villa.example';
const stay = (from: number, nights: number) => ({ check_in: dayAfter(START, from), check_out: dayAfter(START, from + nights), guests: 2 });
/** A reason with markup and a right-to-left override: mailed and answered as text, the override as a visible escape in the mail. */
const REASON = '<b>Closed</b> for repairs \u202Egnp.exe';

const pg = pgTestSchemas('booking-notices', 'the host’s decisions by mail and the retention on PostgreSQL');

/** Each store the node runs on: its name and the `--database-url` of a fresh one (none: the data directory's SQLite file). */
const targets: [string, () => string | undefined][] = [
  ['SQLite', () => undefined],
  ...(pg ? [['PostgreSQL', () => pg.schemaUrl('notices')] as [string, () => string | undefined]] : []),
];

describe.each(targets)('the host’s decisions by mail, on %s', (_kind, urlFor) => {
  const tmp = tempDir('notices');
  const dataDir = join(tmp.dir, 'node');
  let databaseUrl: string | undefined;
  /** Which node: the data directory and, on PostgreSQL, its store URL (as `--database-url` takes it). */
  const at = () => ({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  const atArgs = () => ['--data-dir', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])];
  let smtp: TestSmtp;
  let node: ServedNode;
  let client: NodeClient;

  const available = async (s: ReturnType<typeof stay>) =>
    (
      JSON.parse(
        (await client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`)).text,
      ) as OfferEnvelope
    ).offer.availability.available;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    databaseUrl = urlFor();
    ({ node, client } = await serveTestNode(DOMAIN, dataDir, testClock(START), {
      ...(databaseUrl ? { databaseUrl } : {}),
      bookingHoldsPerDay: 0,
      guestMail: { url: smtp.url, from: `Bookings <bookings@${DOMAIN}>` },
      hostEmail: HOST,
    }));
  });

  afterAll(async () => {
    await closeTestNode({ node, client }, tmp);
    await smtp?.close();
  });

  it('mails the guest and the host once the host confirms a hold a UCP session made', async () => {
    const s = stay(20, 3);
    const lead = { first_name: 'Ada', last_name: 'Guest', email: 'ada@example.org' };
    const { bookingId } = await confirmedUcpSession(client, DOMAIN, smtp, s, lead);
    const before = smtp.received.length;
    const b = await decideBooking({ ...at(), id: bookingId, decision: 'confirmed' });
    expect(b.status).toBe('confirmed');
    // The CLI's process has no upkeep: the serving node's mails it from the outbox.
    const guest = await mailText((await smtp.next(lead.email, before)).raw);
    expect(guest).toContain(`The host of ${DOMAIN} confirmed your stay: ${s.check_in} to ${s.check_out}, 2 guests`);
    expect(guest).toContain(bookingId);
    const host = await mailText((await smtp.next(HOST, before)).raw);
    expect(host).toContain(`Booking ${bookingId} on ${DOMAIN} is confirmed`);
    expect(host).toContain('Guest: Ada Guest <ada@example.org>');
    expect(await available(s)).toBe(false);
    // Mailed once: the next sweeps send nothing more.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(smtp.received.slice(before).filter((m) => m.to.includes(lead.email))).toHaveLength(1);
  });

  it('refuses a decline without a reason, changing nothing; with one, frees the dates, cancels the session with the reason and mails it', async () => {
    const s = stay(30, 2);
    const lead = { first_name: 'Bo', last_name: 'Guest', email: 'bo@example.org' };
    const { sessionId, bookingId } = await confirmedUcpSession(client, DOMAIN, smtp, s, lead);
    await expect(decideBooking({ ...at(), id: bookingId, decision: 'declined', reason: '  ' })).rejects.toMatchObject({
      code: 'decline_reason_required',
    });
    expect((await showBooking({ ...at(), id: bookingId })).status).toBe('pending');
    expect(await available(s)).toBe(false);

    const before = smtp.received.length;
    const declined = await runVrpInProcess(['node', 'bookings', 'decline', bookingId, '--reason', REASON, ...atArgs(), '--json']);
    expect(declined.code, declined.stderr).toBe(0);
    expect(JSON.parse(declined.stdout).booking).toMatchObject({ status: 'declined', decision_reason: REASON });
    expect(await available(s)).toBe(true);

    const mail = await mailText((await smtp.next(lead.email, before)).raw);
    expect(mail).toContain(`The host of ${DOMAIN} declined your stay request: ${s.check_in} to ${s.check_out}`);
    expect(mail).toContain("The host's reason: <b>Closed</b> for repairs \\u{202E}gnp.exe");
    expect(mail).not.toContain('\u202E');
    // The host is told of confirmations only.
    expect(smtp.received.slice(before).some((m) => m.to.includes(HOST))).toBe(false);

    const view = JSON.parse(
      (await client.request('GET', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}/${sessionId}`, { headers: ucpRestHeaders('GET') })).text,
    ) as {
      status: string;
      messages: { type: string; code: string; content: string }[];
      continue_url?: string;
    };
    expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, view)).toEqual([]);
    expect(view.status).toBe('canceled');
    expect(view.continue_url).toBeUndefined();
    expect(view.messages).toContainEqual({ type: 'info', code: 'declined_by_host', content: `The host declined this stay: ${REASON}` });
  });

  it('lists the sessions and the reservations by status (`vrp node bookings list`)', async () => {
    const all = await runVrpInProcess(['node', 'bookings', 'list', ...atArgs(), '--json']);
    expect(all.code, all.stderr).toBe(0);
    const doc = JSON.parse(all.stdout) as { sessions: { status: string }[]; bookings: { status: string }[] };
    expect(doc.sessions.map((x) => x.status).sort()).toEqual(['canceled', 'ready_for_complete']);
    expect(doc.bookings.map((x) => x.status).sort()).toEqual(['confirmed', 'declined']);
    const canceled = JSON.parse(
      (await runVrpInProcess(['node', 'bookings', 'list', '--status', 'canceled', ...atArgs(), '--json'])).stdout,
    );
    expect(canceled.sessions).toHaveLength(1);
    expect(canceled.bookings).toEqual([]);
    const text = await runVrpInProcess(['node', 'bookings', 'list', ...atArgs()]);
    expect(text.stdout).toMatch(/UCP sessions canceled:\n {2}ucs_/);
    expect(text.stdout).toMatch(/booking requests confirmed:\n {2}br_/);
    const bad = await runVrpInProcess(['node', 'bookings', 'list', '--status', 'maybe', ...atArgs()]);
    expect(bad.stderr).toContain('error[invalid_booking_status]');
  });

  it('erases guest details past check-out + the retention, in the upkeep, keeping the rows and the later stay’s details', async () => {
    // Stay one (days 20–23) ended 31 days before this clock; stay two (days 30–32) ended 22 days before it.
    const later = testClock(Date.parse(`${dayAfter(START, 54)}T12:00:00Z`));
    await withNodeStore(at(), async (store) => {
      const counts = async () => ({ sessions: (await store.ucpSessions()).length, bookings: (await store.bookingRequests()).length });
      const before = await counts();
      const upkeep = startBookingUpkeep({ store, canonicalDomain: DOMAIN, clock: later, guestDataDays: 30 });
      await new Promise((r) => setTimeout(r, 500));
      await upkeep.stop();
      expect(await counts()).toEqual(before);
      // The node's clock stands still: the rows are told apart by their stays.
      const bookings = await store.bookingRequests();
      const [first, second] = [23, 32].map((d) => bookings.find((b) => b.check_out === dayAfter(START, d)));
      expect(first).toMatchObject({
        check_out: dayAfter(START, 23),
        guest_name: '',
        guest_email: '',
        guest_phone: null,
        status: 'confirmed',
      });
      expect(second).toMatchObject({ check_out: dayAfter(START, 32), guest_email: 'bo@example.org', decision_reason: REASON });
      const sessions = await store.ucpSessions();
      expect(sessions.find((x) => x.check_out === dayAfter(START, 23))).toMatchObject({
        buyer_email: null,
        buyer_name: null,
        party_json: null,
      });
      expect(sessions.find((x) => x.check_out === dayAfter(START, 32))).toMatchObject({
        buyer_email: 'bo@example.org',
        cancel_reason: REASON,
      });
    });
    expect(() => startBookingUpkeep({ store: {} as never, canonicalDomain: DOMAIN, guestDataDays: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_guest_data_days' }),
    );
  });
});
