/**
 * iCal import against a real local https feed server (its own test CA): blocked ranges come
 * from the feed; a failing, slow, oversized or stale feed marks the calendar unsafe and every
 * offer non-quoteable (fail closed), verified with the reference verifier.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { quoteChecks, safeToQuote, verifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { addCalendarFeed, createDevCa, issueServerCertificate, listCalendar, type ServedNode, syncCalendar } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIcsBlocks } from '../src/ical.js';

const DOMAIN = 'ical-node.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('ical');
const dataDir = join(tmp.dir, 'node');

const ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//other channel//EN',
  'BEGIN:VEVENT',
  'UID:booking-1@other',
  'DTSTAMP:20270101T000000Z',
  'DTSTART;VALUE=DATE:20270310',
  'DTEND;VALUE=DATE:20270314',
  'SUMMARY:Reserved',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:booking-2@other',
  'DTSTAMP:20270101T000000Z',
  'DTSTART:20270320T150000Z',
  'DTEND:20270322T100000Z',
  'SUMMARY:Reserved (times)',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:cancelled@other',
  'DTSTAMP:20270101T000000Z',
  'DTSTART;VALUE=DATE:20270401',
  'DTEND;VALUE=DATE:20270405',
  'STATUS:CANCELLED',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:free@other',
  'DTSTAMP:20270101T000000Z',
  'DTSTART;VALUE=DATE:20270410',
  'DTEND;VALUE=DATE:20270412',
  'TRANSP:TRANSPARENT',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

let mode: 'ok' | 'fail' | 'slow' | 'huge' = 'ok';
let feedServer: Server;
let feedUrl: string;
let caPem: string;
let node: ServedNode;
let client: NodeClient;

beforeAll(async () => {
  const ca = await createDevCa({ commonName: 'ical feed test CA' });
  caPem = ca.certPem;
  const cert = await issueServerCertificate(ca, ['127.0.0.1']);
  feedServer = createServer({ key: cert.keyPem, cert: cert.certPem }, (_req, res) => {
    if (mode === 'ok') res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS);
    else if (mode === 'fail') res.writeHead(503).end('down');
    else if (mode === 'huge') res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS.repeat(200));
    // 'slow': never answers; the sync's deadline must end it.
  });
  await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', r));
  feedUrl = `https://127.0.0.1:${(feedServer.address() as AddressInfo).port}/calendar.ics`;

  ({ node, client } = await serveTestNode(DOMAIN, dataDir, clock, {
    beforeServe: () => addCalendarFeed({ dataDir, name: 'other-channel', url: feedUrl, clock }),
  }));
});

afterAll(async () => {
  await client?.close();
  await node?.close();
  feedServer?.closeAllConnections();
  await new Promise((r) => feedServer?.close(r));
  tmp.cleanup();
});

async function offer(checkIn: string, checkOut: string): Promise<OfferEnvelope> {
  const res = await client.get(`${OFFER_ENDPOINT_PATH}?check_in=${checkIn}&check_out=${checkOut}&guests=2`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as OfferEnvelope;
}

async function verdict(envelope: OfferEnvelope) {
  const jwks = JSON.parse((await client.get('/.well-known/jwks.json')).text);
  const v = verifyOffer({ envelope: envelope as unknown as Record<string, unknown>, jwks, now: new Date(clock.now()) });
  expect(v.status).toBe('verified');
  return { safe: safeToQuote(v), failures: quoteChecks(v).failures };
}

const sync = (extra: { timeoutMs?: number; maxBytes?: number; ca?: string[] } = {}) =>
  syncCalendar({ dataDir, clock, ca: [caPem], ...extra });

describe('iCal import over https', () => {
  it('imports the blocked ranges of a feed (all-day DTEND exclusive, date-times in the property time zone, cancelled and transparent events skipped)', async () => {
    expect(await sync()).toEqual([{ name: 'other-channel', ok: true, ranges: 2 }]);
    const { blocks, feeds } = await listCalendar({ dataDir });
    expect(blocks.map((b) => [b.start_date, b.end_date, b.kind, b.feed_name])).toEqual([
      ['2027-03-10', '2027-03-14', 'import', 'other-channel'],
      ['2027-03-20', '2027-03-22', 'import', 'other-channel'],
    ]);
    expect(feeds[0]).toMatchObject({ last_success_at: '2027-02-01T09:00:00.000Z', last_error: null, event_count: 2 });
  });

  it('offers respect the imported ranges and are quoteable while the calendar is fresh', async () => {
    const blocked = await offer('2027-03-12', '2027-03-15');
    expect(blocked.offer.availability).toMatchObject({ available: false, reason: 'not_available' });
    expect((await verdict(blocked)).safe).toBe(false);
    const blockedByTimes = await offer('2027-03-21', '2027-03-23');
    expect(blockedByTimes.offer.availability.reason).toBe('not_available');

    const free = await offer('2027-03-14', '2027-03-17');
    expect(free.offer.availability).toMatchObject({
      available: true,
      calendar_freshness: {
        safe: true,
        checked_sources: ['other-channel'],
        stale_sources: [],
        error_sources: [],
        latest_synced_at: '2027-02-01T09:00:00Z',
        active_import_count: 1,
        max_age_minutes: 180,
        reason: null,
      },
    });
    expect((await verdict(free)).safe).toBe(true);
  });

  it('a failing feed marks the calendar unsafe: free dates become a signed calendar_stale negative, earlier ranges are kept', async () => {
    mode = 'fail';
    clock.advance(60_000);
    const [r] = await sync();
    expect(r).toMatchObject({ name: 'other-channel', ok: false, error: { code: 'feed_http_error' } });
    const free = await offer('2027-03-14', '2027-03-17');
    expect(free.offer.availability).toMatchObject({
      available: false,
      reason: 'calendar_stale',
      calendar_freshness: { safe: false, error_sources: ['other-channel'], reason: 'calendar_feed_failed' },
    });
    expect(free.offer.agent_permission.may_quote_as_official_direct_offer).toBe(false);
    const v = await verdict(free);
    expect(v.safe).toBe(false);
    expect(v.failures).toContain('availability_not_true');
    expect((await listCalendar({ dataDir })).blocks).toHaveLength(2);
    // The page calendar fails closed too.
    expect((await node.service.calendar('2027-03-14', 3)).every((d) => !d.available && d.nightly_rate === null)).toBe(true);
  });

  it('recovers on the next successful sync, and goes stale again once the last success is older than max_age_minutes', async () => {
    mode = 'ok';
    expect((await sync())[0]!.ok).toBe(true);
    expect((await offer('2027-03-14', '2027-03-17')).offer.availability.available).toBe(true);
    clock.advance(181 * 60_000);
    const stale = await offer('2027-03-14', '2027-03-17');
    expect(stale.offer.availability).toMatchObject({
      available: false,
      reason: 'calendar_stale',
      calendar_freshness: { safe: false, stale_sources: ['other-channel'], error_sources: [], reason: 'calendar_feed_stale' },
    });
    expect((await verdict(stale)).safe).toBe(false);
    expect((await sync())[0]!.ok).toBe(true);
  });

  it('bounds every fetch: a feed that never answers times out, an oversized one is refused, an untrusted certificate is refused', async () => {
    mode = 'slow';
    expect((await sync({ timeoutMs: 300 }))[0]).toMatchObject({ ok: false, error: { code: 'feed_timeout' } });
    mode = 'huge';
    expect((await sync({ maxBytes: 10_000 }))[0]).toMatchObject({ ok: false, error: { code: 'feed_too_large' } });
    mode = 'ok';
    expect((await syncCalendar({ dataDir, clock }))[0]).toMatchObject({ ok: false, error: { code: 'feed_unreachable' } });
    expect((await listCalendar({ dataDir })).feeds[0]!.last_error).toMatch(/^feed_unreachable/);
    expect((await sync())[0]!.ok).toBe(true);
  });

  it('refuses plain-http feed URLs and reads .ics files', async () => {
    await expect(addCalendarFeed({ dataDir, name: 'plain', url: 'http://127.0.0.1/x.ics' })).rejects.toMatchObject({
      code: 'invalid_feed_url',
    });
    const file = join(tmp.dir, 'local.ics');
    writeFileSync(file, ICS.replace('20270310', '20270501').replace('20270314', '20270503'));
    await addCalendarFeed({ dataDir, name: 'file-feed', file, clock });
    const results = await sync();
    expect(results.find((r) => r.name === 'file-feed')).toEqual({ name: 'file-feed', ok: true, ranges: 2 });
    expect((await offer('2027-05-01', '2027-05-04')).offer.availability.reason).toBe('not_available');
  });

  it('rejects a document that is not iCal with a stable code', () => {
    expect(() => parseIcsBlocks('hello', 'Europe/Stockholm', '2028-01-01')).toThrow(expect.objectContaining({ code: 'ical_parse_error' }));
    // The parser's message would quote the line; a feed body may echo a secret (the URL's token), so it is never repeated.
    const echo = 'BEGIN:VCALENDAR\nGET /export.ics?token=s3cret\nEND:VCALENDAR\n';
    expect(() => parseIcsBlocks(echo, 'Europe/Stockholm', '2028-01-01')).toThrow(
      expect.objectContaining({ code: 'ical_parse_error', message: 'not an iCal document: invalid line (no token ";" or ":")' }),
    );
  });
});
