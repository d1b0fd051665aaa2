/**
 * The booking webhook over real https (a local receiver with its own test CA): one JSON event
 * per change (created, decided, expired), carrying ids, status and digests but never the guest;
 * a failing receiver is retried and never delays the booking; the periodic sweep expires a hold
 * nobody reads. Holds are made the one way there is: a UCP session the guest confirms with the code
 * a real local SMTP server received.
 */
import { join } from 'node:path';
import { sha256Hex } from '@vrpkit/core';
import { type BookingWebhookEvent, decideBooking, type ServedNode } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { startTestSmtp, type TestSmtp } from '@vrpkit/testkit/mail';
import { closeTestNode, dayAfter, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { createTestCa, startHttpsServer, type TestServer } from '@vrpkit/testkit/tls';
import { bookThroughSession } from '@vrpkit/testkit/ucp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const guest = { first_name: 'Webhook', last_name: 'Guest', email: 'private-guest@example.org', phone_number: '+1 555 0100' };
const tmp = tempDir('booking-webhook');
const dataDir = join(tmp.dir, 'node');
const clock = testClock(Date.now());
let node: ServedNode;
let client: NodeClient;
let receiver: TestServer;
let smtp: TestSmtp;
/** Bodies the receiver accepted, and how many more requests it fails with 500 first. */
const received: string[] = [];
let failNext = 0;
let attempts = 0;
const waiters: (() => void)[] = [];
/** Every request and booking log line the node wrote. */
const logLines: string[] = [];
/** The errors the node reported (a failing receiver's): captured here, so a passing run prints no error lines. */
const reported: unknown[] = [];

/** Resolve once the receiver has accepted `n` events. */
function receivedCount(n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (received.length >= n ? resolve() : waiters.push(check));
    check();
  });
}

beforeAll(async () => {
  const ca = await createTestCa();
  receiver = await startHttpsServer(await ca.certFor('localhost'), (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      attempts++;
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end();
        return;
      }
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  smtp = await startTestSmtp();
  ({ node, client } = await serveTestNode('booking-webhook.example', dataDir, clock, {
    guestMail: { url: smtp.url },
    bookingRateLimit: 10_000,
    bookingWebhook: { url: `https://localhost:${receiver.port}/hooks/bookings`, ca: [ca.ca.certPem] },
    bookingSweepIntervalMs: 200,
    log: (e) => logLines.push(JSON.stringify(e)),
    bookingLog: (e) => logLines.push(JSON.stringify(e)),
    onError: (e) => reported.push(e),
  }));
});
afterAll(async () => {
  await closeTestNode({ node, client }, tmp);
  await receiver?.close();
  await smtp?.close();
});

async function book(from: number): Promise<{ id: string; offerDigest: string }> {
  const s = { check_in: dayAfter(clock.now(), from), check_out: dayAfter(clock.now(), from + 2) };
  const o = JSON.parse(
    (await client.get(`${OFFER_ENDPOINT_PATH}?check_in=${s.check_in}&check_out=${s.check_out}&guests=2`)).text,
  ) as OfferEnvelope;
  const { booking_id } = await bookThroughSession(client, 'booking-webhook.example', smtp, o.signature.jws, guest);
  return { id: booking_id, offerDigest: sha256Hex(o.signature.jws) };
}

const events = () => received.map((b) => JSON.parse(b) as BookingWebhookEvent);

describe('booking webhook', () => {
  it('posts one event per change with ids, status and digests, never guest details', async () => {
    const { id, offerDigest } = await book(10);
    await receivedCount(1);
    expect(events()[0]).toMatchObject({
      type: 'vrpkit.booking_request.changed',
      canonical_domain: 'booking-webhook.example',
      booking_id: id,
      status: 'pending',
      offer_jws_sha256: offerDigest,
    });
    // A decision made by another process (the host's CLI) is announced too.
    await decideBooking({ dataDir, id, decision: 'confirmed' });
    await receivedCount(2);
    expect(events()[1]).toMatchObject({ booking_id: id, status: 'confirmed' });
    // Neither the events nor the node's logs carry the guest; the logs carry the booking id and the offer digest.
    expect(logLines.some((l) => l.includes(id) && l.includes(offerDigest))).toBe(true);
    for (const text of [...received, ...logLines]) {
      expect(text).not.toContain(guest.email);
      expect(text).not.toContain(`${guest.first_name} ${guest.last_name}`);
      // The phone number in any spacing (a bare '555' can occur inside a random hex digest).
      expect(text).not.toContain(guest.phone_number);
      expect(text.replaceAll(/\D/g, '')).not.toContain('15550100');
    }
  });

  it('retries a failing receiver, without delaying the booking', async () => {
    failNext = 2;
    const before = attempts;
    const n = received.length;
    const { id } = await book(20);
    // The request was answered while the receiver was still failing (delivery backs off 1 s, then 2 s).
    expect(received.length).toBe(n);
    await receivedCount(n + 1);
    expect(attempts - before).toBe(3);
    expect(events()[n]).toMatchObject({ booking_id: id, status: 'pending' });
    // Each failed attempt was reported to the node's error handler (here the test, not stderr).
    expect(reported.splice(0).map((e) => (e as { code?: string }).code)).toEqual(['webhook_http_error', 'webhook_http_error']);
  });

  it('the periodic sweep expires a hold nobody reads, and announces it', async () => {
    const n = received.length;
    const { id } = await book(30);
    await receivedCount(n + 1);
    clock.advance(24 * 3_600_000);
    // Both pending holds expire (this one and the previous test's): one event each.
    await receivedCount(n + 3);
    expect(
      events()
        .filter((e) => e.booking_id === id)
        .map((e) => e.status),
    ).toEqual(['pending', 'expired']);
  });
});
