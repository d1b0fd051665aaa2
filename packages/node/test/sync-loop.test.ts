/**
 * Background calendar sync (`serveNode({ syncIntervalMs })`): a block added to a feed reaches
 * the served offers without `calendar sync`; a failed feed is retried sooner, backing off up
 * to the interval, while a healthy feed waits its interval.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '@vrpkit/core';
import {
  addCalendarFeed,
  type FeedSyncResult,
  initNode,
  NodeStore,
  nextSyncDelayMs,
  type ServedNode,
  serveNode,
  startCalendarSync,
  storeTargetFor,
  syncCalendar,
} from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { type NodeClient, nodeClient, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it } from 'vitest';

const DOMAIN = 'sync-loop.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('sync-loop');
afterAll(() => tmp.cleanup());

/** An iCal document blocking each `[start, end)` (YYYYMMDD). */
function ics(ranges: [string, string][]): string {
  const events = ranges.flatMap(([s, e], i) => [
    'BEGIN:VEVENT',
    `UID:event-${i}@other`,
    'DTSTAMP:20270101T000000Z',
    `DTSTART;VALUE=DATE:${s}`,
    `DTEND;VALUE=DATE:${e}`,
    'SUMMARY:Reserved',
    'END:VEVENT',
  ]);
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//other channel//EN', ...events, 'END:VCALENDAR', ''].join('\r\n');
}

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sync delays', () => {
  it('a success waits the interval, a failure retries from 1/16 of it doubling up to the interval, all jittered down by ≤ 20 %', () => {
    const interval = 16_000;
    expect(nextSyncDelayMs(0, interval, () => 0)).toBe(16_000);
    expect([1, 2, 3, 4, 5, 6, 9].map((f) => nextSyncDelayMs(f, interval, () => 0))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 16_000, 16_000,
    ]);
    expect(nextSyncDelayMs(0, interval, () => 0.999_999)).toBe(12_800);
    expect(nextSyncDelayMs(1, interval, () => 0.5)).toBe(900);
    expect(nextSyncDelayMs(3, 100, () => 0)).toBe(100); // never below the floor
  });
});

describe('background calendar sync', () => {
  let node: ServedNode | undefined;
  let client: NodeClient | undefined;
  afterAll(async () => {
    await client?.close();
    await node?.close();
  });

  it('a block added to a feed makes the stay unavailable without running calendar sync', async () => {
    const dataDir = join(tmp.dir, 'node');
    const feedFile = join(tmp.dir, 'other-channel.ics');
    writeFileSync(feedFile, ics([['20270301', '20270303']]));
    await initNode({ domain: DOMAIN, dataDir, clock });
    await addCalendarFeed({ dataDir, name: 'other', file: feedFile, clock });
    node = await serveNode({ dataDir, dev: true, clock, syncIntervalMs: 300 });
    client = nodeClient(DOMAIN, node.port, node.caPem!);
    const c = client;
    const offer = async () =>
      JSON.parse((await c.get(`${OFFER_ENDPOINT_PATH}?check_in=2027-03-10&check_out=2027-03-13&guests=2`)).text) as OfferEnvelope;

    // The first pass runs at start: the never-synced feed becomes fresh and the stay quoteable.
    const before = await waitFor(offer, (o) => o.offer.availability.available === true);
    expect(before.offer.availability).toMatchObject({ available: true });

    writeFileSync(
      feedFile,
      ics([
        ['20270301', '20270303'],
        ['20270311', '20270312'],
      ]),
    );
    const after = await waitFor(offer, (o) => o.offer.availability.available === false);
    expect(after.offer.availability).toMatchObject({ available: false, reason: 'not_available' });
    expect(after.offer.agent_permission.may_quote_as_official_direct_offer).toBe(false);
  });

  it('a failing feed is retried with backoff while a healthy feed waits its interval', async () => {
    const dataDir = join(tmp.dir, 'backoff');
    await initNode({ domain: DOMAIN, dataDir, clock });
    const good = join(tmp.dir, 'good.ics');
    const gone = join(tmp.dir, 'gone.ics');
    writeFileSync(good, ics([]));
    writeFileSync(gone, ics([]));
    await addCalendarFeed({ dataDir, name: 'good', file: good, clock });
    await addCalendarFeed({ dataDir, name: 'gone', file: gone, clock });
    rmSync(gone);

    const store = await NodeStore.open(storeTargetFor(dataDir));
    const seen: { at: number; r: FeedSyncResult }[] = [];
    const interval = 4000;
    const sync = startCalendarSync(store, {
      intervalMs: interval,
      clock,
      random: () => 0,
      onResult: (r) => seen.push({ at: Date.now(), r }),
    });
    try {
      await waitFor(
        async () => seen.filter((s) => s.r.name === 'gone').length,
        (n) => n >= 4,
      );
      // What the console shows as each feed's next sync (node clock): the healthy one a whole interval after
      // its sync, the failing one within its current backoff, an unknown feed not at all.
      const t = clock.now();
      expect(sync.nextSyncAt?.('good')).toBeGreaterThan(t);
      expect(sync.nextSyncAt?.('good')).toBeLessThanOrEqual(t + interval);
      expect(sync.nextSyncAt?.('gone')).toBeLessThanOrEqual(t + interval);
      expect(sync.nextSyncAt?.('nope')).toBeUndefined();
    } finally {
      await sync.stop();
      await store.close();
    }
    expect(sync.nextSyncAt?.('good')).toBeUndefined(); // stopped: nothing is scheduled
    const failed = seen.filter((s) => s.r.name === 'gone');
    expect(failed.every((s) => !s.r.ok && s.r.error?.code === 'feed_unreadable')).toBe(true);
    // Waits of 1/16, 1/8, 1/4 of the interval (load can only lengthen them).
    const gaps = failed.slice(1, 4).map((s, i) => s.at - failed[i]!.at);
    for (const [i, g] of gaps.entries()) expect(g).toBeGreaterThanOrEqual((interval / 16) * 2 ** i - 5);
    // The healthy feed synced once and waits the whole interval.
    expect(seen.filter((s) => s.r.name === 'good').map((s) => s.r.ok)).toEqual([true]);
  });

  it('a feed sync failure names the file it could not read', async () => {
    const dataDir = join(tmp.dir, 'names');
    await initNode({ domain: DOMAIN, dataDir, clock });
    const file = join(tmp.dir, 'moved-away.ics');
    writeFileSync(file, ics([]));
    await addCalendarFeed({ dataDir, name: 'moved', file, clock });
    rmSync(file);
    const [r] = await syncCalendar({ dataDir, clock });
    expect(r).toMatchObject({ name: 'moved', ok: false, error: { code: 'feed_unreadable' } });
    expect(r!.error!.message).toBe(`cannot read ${file}: ENOENT`);
  });

  it('a feed URL failure names the origin and a digest of the URL, never its path or query, where a calendar secret lives', async () => {
    const dataDir = join(tmp.dir, 'names-url');
    await initNode({ domain: DOMAIN, dataDir, clock });
    const url = 'https://127.0.0.1:1/calendar/ical/private-SECRET-PATH/basic.ics?s=SECRET-TOKEN';
    await addCalendarFeed({ dataDir, name: 'channel', url, clock });
    const [r] = await syncCalendar({ dataDir, clock, timeoutMs: 2000 });
    expect(r).toMatchObject({ ok: false, error: { code: 'feed_unreachable' } });
    expect(r!.error!.message).toMatch(
      new RegExp(`^https://127\\.0\\.0\\.1:1/… \\(url sha256 ${sha256Hex(url).slice(0, 12)}\\): cannot fetch the feed: ECONNREFUSED`),
    );
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });
});
