/**
 * `vrp node bookings list|show|confirm|decline` against a node that took bookings over https (UCP
 * sessions the guest confirmed with the code a real local SMTP server received): the host sees each
 * request (guest details only in `show`), confirming keeps the dates booked, declining frees them at
 * once, and a decided booking cannot be decided again.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type ServedNode, withNodeStore } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope, UCP_BOOKING_SESSIONS, UCP_REST_BASE_PATH, ucpBookingRequest } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { bookThroughSession, ucpRestHeaders } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const tmp = tempDir('cli-bookings');
const dataDir = join(tmp.dir, 'node');
const clock = testClock(Date.now());
let node: ServedNode;
let client: NodeClient;
let smtp: TestSmtp;
const guest = { name: 'Grace Guest', email: 'grace@example.org' };

beforeAll(async () => {
  smtp = await startTestSmtp();
  ({ node, client } = await serveTestNode('cli-bookings.example', dataDir, clock, {
    guestMail: { url: smtp.url },
    bookingRateLimit: 10_000,
  }));
});
afterAll(async () => {
  await closeTestNode({ node, client }, tmp);
  await smtp?.close();
});

const stay = (from: number, nights: number) => ({ check_in: dayAfter(clock.now(), from), check_out: dayAfter(clock.now(), from + nights) });

async function offer(s: { check_in: string; check_out: string }): Promise<OfferEnvelope> {
  return JSON.parse(
    (await client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`)).text,
  ) as OfferEnvelope;
}

/** A booking the one way there is: a UCP session from the offer, confirmed by the guest, completed. */
async function book(s: { check_in: string; check_out: string }): Promise<string> {
  const booker = { first_name: 'Grace', last_name: 'Guest', email: guest.email };
  return (await bookThroughSession(client, 'cli-bookings.example', smtp, (await offer(s)).signature.jws, booker)).booking_id;
}

const vrp = (...args: string[]) => runVrpInProcess(['node', 'bookings', ...args, '--data-dir', dataDir]);

describe('vrp node bookings', () => {
  it('lists and shows a pending request; confirm keeps the dates booked and cannot be undone by decline', async () => {
    const s = stay(20, 3);
    const id = await book(s);
    const list = await vrp('list', '--json');
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout).bookings as { booking_id: string; status: string; guest_email: string }[];
    expect(listed.find((b) => b.booking_id === id)).toMatchObject({ status: 'pending', check_in: s.check_in, check_out: s.check_out });
    const text = await vrp('list');
    expect(text.stdout).toContain(`${id}  ${s.check_in} → ${s.check_out}`);
    expect(text.stdout).not.toContain(guest.email);
    const shown = await vrp('show', id);
    expect(shown.stdout).toContain(`${guest.name} <${guest.email}>`);

    const confirmed = await vrp('confirm', id, '--json');
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(confirmed.stdout).booking.status).toBe('confirmed');
    expect((await offer(s)).offer.availability.available).toBe(false);
    const undo = await vrp('decline', id, '--reason', 'double booked', '--json');
    expect(undo.code).toBe(1);
    expect(JSON.parse(undo.stdout).error.code).toBe('booking_not_pending');
    // Confirming it again is refused the same way, not a silent success.
    const again = await vrp('confirm', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error[booking_not_pending]');
    expect((await vrp('list', '--status', 'confirmed', '--json')).stdout).toContain(id);
  });

  it('decline frees the dates at once; unknown ids and statuses are clear errors', async () => {
    const s = stay(40, 2);
    const id = await book(s);
    expect((await offer(s)).offer.availability.available).toBe(false);
    const declined = await vrp('decline', id, '--reason', 'the house is under repair');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toContain('declined');
    expect((await offer(s)).offer.availability.available).toBe(true);
    const missing = await vrp('show', 'br_doesnotexist00');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error[booking_not_found]');
    const bad = await vrp('list', '--status', 'maybe');
    expect(bad.stderr).toContain('error[invalid_booking_status]');
  });

  it("the node refuses a guest name with a line separator, RLM or ALM (issue 36 defect 11: core's one character class)", async () => {
    for (const name of ['Eve\u2028Fake line', 'Eve\u200fevil', 'Eve\u061cevil', 'Eve\u200bInvisible']) {
      const booker = { first_name: name, last_name: 'Guest', email: guest.email };
      const res = await client.request('POST', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`, {
        body: JSON.stringify(ucpBookingRequest((await offer(stay(80, 2))).signature.jws, { booker })),
        headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
      });
      expect([JSON.stringify(name), res.status]).toEqual([JSON.stringify(name), 400]);
    }
  });

  it('show and list print control and bidi-override characters from the store as \\u{…} escapes, never raw', async () => {
    // The node refuses these in guest fields; a store written another way still cannot drive the host's terminal.
    const s = stay(60, 2);
    const id = `br_${randomBytes(9).toString('base64url')}`;
    await withNodeStore({ dataDir }, (store) =>
      store.createHold(`cli-${randomBytes(8).toString('hex')}`, clock.now(), (state) => ({
        hold: {
          booking_id: id,
          idempotency_key: `cli-${randomBytes(8).toString('hex')}`,
          request_sha256: '0'.repeat(64),
          offer_jws_sha256: '0'.repeat(64),
          property_id: state.property.property_id,
          ...s,
          guests: 2,
          currency: 'EUR',
          total: 100,
          guest_name: 'Eve\x1b[2J\u202eevil\u2028\u200f\u061cend',
          guest_email: 'eve\u0007@example.org',
          guest_phone: null,
          hold_expires_at: new Date(clock.now() + 3_600_000).toISOString(),
        },
      })),
    );
    const shown = await vrp('show', id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Eve\\u{001B}[2J\\u{202E}evil\\u{2028}\\u{200F}\\u{061C}end <eve\\u{0007}@example.org>');
    const raw = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
    expect(shown.stdout.replaceAll('\n', '')).not.toMatch(raw);
    const list = await vrp('list');
    expect(list.stdout).toContain(id);
    expect(list.stdout.replaceAll('\n', '')).not.toMatch(raw);
  });

  it('sessions lists the UCP sessions by status (an unconfirmed one holds no night), without the offer or the code digest', async () => {
    const s = stay(200, 3);
    const res = await client.request('POST', `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`, {
      body: JSON.stringify(
        ucpBookingRequest((await offer(s)).signature.jws, { booker: { email: guest.email, first_name: 'Grace', last_name: 'Hopper' } }),
      ),
      headers: { 'content-type': 'application/json', ...ucpRestHeaders('POST') },
    });
    expect(res.status, res.text).toBe(201);
    const id = JSON.parse(res.text).id as string;
    const json = await vrp('sessions', '--status', 'requires_escalation', '--json');
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout).sessions as Record<string, unknown>[];
    expect(listed.find((x) => x.session_id === id)).toMatchObject({ status: 'requires_escalation', booking_id: null, ...s });
    expect(listed.every((x) => !('offer_jws' in x) && !('code_sha256' in x))).toBe(true);
    expect((await vrp('sessions')).stdout).toContain(`${id}  ${s.check_in} → ${s.check_out}`);
    // Filtered by status: the unconfirmed session is neither completed nor canceled (an earlier test's
    // decline canceled its own session).
    expect((await vrp('sessions', '--status', 'completed')).stdout).not.toContain(id);
    expect((await vrp('sessions', '--status', 'canceled')).stdout).not.toContain(id);
    expect((await vrp('sessions', '--status', 'bogus')).code).toBe(1);
  });
});
