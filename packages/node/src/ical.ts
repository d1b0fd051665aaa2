/**
 * iCal (.ics) calendar import: hosts sync the calendars of their other channels into the
 * node. Feeds come from a file or an https URL (fetched with a timeout and a size cap; never
 * plain http), are parsed with ical.js, and replace that feed's imported blocked ranges. Each
 * feed's last success and failure are stored; a failed or stale feed makes the calendar unsafe
 * and every offer non-quoteable until a later sync succeeds (fail closed).
 */
import { readFileSync } from 'node:fs';
import { type Agent, request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { sha256Hex } from '@vrpkit/core';
import ICAL from 'ical.js';
import { addDays, dayNumber, localDate } from './dates.js';
import { NodeError } from './errors.js';
import type { PropertyDescription } from './property.js';
import type { CalendarFeed, NodeStore } from './store/store.js';

export interface FeedFetchOptions {
  /** Extra trusted CA certificates (PEM) for https feeds, beside the system roots. */
  ca?: string[];
  /** Whole-request deadline. Default 10 s. */
  timeoutMs?: number;
  /** Largest feed accepted. Default 5 MiB. */
  maxBytes?: number;
  /** The https agent connections are made through (the platform's restricts the addresses a feed may reach). */
  agent?: Agent;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

/**
 * ical.js's parse errors quote the offending line, and a feed's body is not ours to log: a
 * server may echo the feed URL's secret query into it. Only the kind of failure is kept.
 */
const PARSE_FAILURES = [
  'invalid line (no token ";" or ":")',
  'invalid line (no matching double quote)',
  'invalid ical body. component began but did not end',
  'Invalid parameters',
  'Missing parameter value',
  'Empty parameter name',
];
function parseFailure(e: unknown): string {
  const message = e instanceof Error ? e.message : '';
  return PARSE_FAILURES.find((kind) => message.startsWith(kind)) ?? 'unparseable content';
}

/** Recurring events are expanded up to this many occurrences each. */
const MAX_OCCURRENCES = 1000;

export function assertFeedUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new NodeError('invalid_feed_url', { problem: 'is not a URL' });
  }
  if (u.protocol !== 'https:')
    throw new NodeError('invalid_feed_url', { problem: 'is not https (calendar feeds are fetched over https only)' });
  return u;
}

/** GET an https feed: status 200 only, no redirects, bounded in time and size. */
export function fetchFeed(url: string, o: FeedFetchOptions = {}): Promise<string> {
  const u = assertFeedUrl(url);
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise((resolve, reject) => {
    const req = request(u, {
      method: 'GET',
      headers: { accept: 'text/calendar, */*;q=0.5', 'user-agent': 'vrpkit-node calendar sync' },
      // Extra CAs are added to the system roots, never substituted for them.
      ...(o.ca ? { ca: [...rootCertificates, ...o.ca] } : {}),
      ...(o.agent ? { agent: o.agent } : {}),
    });
    const timer = setTimeout(
      () => req.destroy(new NodeError('feed_timeout', { ms: o.timeoutMs ?? DEFAULT_TIMEOUT_MS })),
      o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        req.destroy(new NodeError('feed_http_error', { status: res.statusCode ?? 'nothing' }));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) req.destroy(new NodeError('feed_too_large', { max: maxBytes }));
        else chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        // A cut-off body is never parsed as if it were the whole feed.
        if (size > maxBytes) reject(new NodeError('feed_too_large', { max: maxBytes }));
        else if (!res.complete) reject(new NodeError('feed_truncated'));
        else resolve(Buffer.concat(chunks).toString('utf8'));
      });
      res.on('error', (e) => req.destroy(e));
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e instanceof NodeError ? e : new NodeError('feed_unreachable', { reason: (e as NodeJS.ErrnoException).code ?? e.message }));
    });
    req.end();
  });
}

export interface ImportedRange {
  start_date: string;
  end_date: string;
  note: string | null;
}

function dateOf(t: InstanceType<typeof ICAL.Time>, timeZone: string): string {
  if (t.isDate) return `${String(t.year).padStart(4, '0')}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;
  return localDate(t.toJSDate().getTime(), timeZone);
}

/**
 * Blocked ranges from an iCal document: every opaque, non-cancelled VEVENT blocks the nights
 * from its start date up to (excluding) its end date, as DTEND is exclusive for all-day events;
 * a same-day event blocks that night. Date-times are read in the property's time zone.
 */
export function parseIcsBlocks(text: string, timeZone: string, until: string): ImportedRange[] {
  let root: InstanceType<typeof ICAL.Component>;
  try {
    root = new ICAL.Component(ICAL.parse(text) as unknown[]);
  } catch (e) {
    throw new NodeError('ical_parse_error', { problem: `document: ${parseFailure(e)}` });
  }
  if (root.name !== 'vcalendar') throw new NodeError('ical_parse_error', { problem: 'VCALENDAR' });
  const out: ImportedRange[] = [];
  const push = (start: InstanceType<typeof ICAL.Time>, end: InstanceType<typeof ICAL.Time> | null, note: string | null) => {
    const s = dateOf(start, timeZone);
    let e = end ? dateOf(end, timeZone) : s;
    if (e <= s) e = addDays(s, 1);
    if (dayNumber(s) !== null && dayNumber(e) !== null) out.push({ start_date: s, end_date: e, note });
  };
  for (const v of root.getAllSubcomponents('vevent')) {
    if (String(v.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED') continue;
    if (String(v.getFirstPropertyValue('transp') ?? '').toUpperCase() === 'TRANSPARENT') continue;
    const ev = new ICAL.Event(v);
    if (!ev.startDate) throw new NodeError('ical_parse_error', { problem: 'event: a VEVENT has no DTSTART' });
    const note = ev.summary ? ev.summary.slice(0, 200) : null;
    if (ev.isRecurring()) {
      const it = ev.iterator();
      for (let i = 0, next = it.next(); next && i < MAX_OCCURRENCES; i++, next = it.next()) {
        const d = ev.getOccurrenceDetails(next);
        if (dateOf(d.startDate, timeZone) > until) break;
        push(d.startDate, d.endDate, note);
      }
    } else {
      push(ev.startDate, ev.endDate ?? null, note);
    }
  }
  return out;
}

export interface FeedSyncResult {
  name: string;
  ok: boolean;
  ranges?: number;
  error?: { code: string; message: string };
}

/**
 * A feed URL as errors and logs name it: its origin and a digest of the whole URL, never the
 * path or the query. Channels put the secret of a private calendar export in either (a query
 * token, or a path segment such as Google Calendar's `private-…` address); the digest still
 * tells two feeds of one host apart, and matches `sha256 -` of the URL the host configured.
 */
export function feedUrlForMessages(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}/… (url sha256 ${sha256Hex(url).slice(0, 12)})`;
  } catch {
    return '(unparseable feed URL)';
  }
}

/**
 * Where a feed's sync result is written: the node's store, or a platform tenant's rows (the
 * platform's sync worker records under its lease on the feed).
 */
export type FeedRecorder = Pick<NodeStore, 'recordFeedSuccess' | 'recordFeedFailure'>;

/** Sync one feed of the store's node; a failure is recorded and never removes the feed's previous ranges. */
export async function syncFeed(
  store: FeedRecorder,
  p: Pick<PropertyDescription, 'property_id' | 'time_zone' | 'booking_horizon_days' | 'max_nights'>,
  feed: Pick<CalendarFeed, 'name' | 'url' | 'file'>,
  now: number,
  o: FeedFetchOptions = {},
): Promise<FeedSyncResult> {
  const until = addDays(localDate(now, p.time_zone), p.booking_horizon_days + p.max_nights);
  try {
    const text = feed.url ? await fetchFeed(feed.url, o) : readFileSync(feed.file!, 'utf8');
    const ranges = parseIcsBlocks(text, p.time_zone, until);
    await store.recordFeedSuccess(p.property_id, feed.name, ranges, now);
    return { name: feed.name, ok: true, ranges: ranges.length };
  } catch (e) {
    const source = feed.url ? feedUrlForMessages(feed.url) : feed.file!;
    const err =
      e instanceof NodeError
        ? { code: e.code, message: `${source}: ${e.message}` }
        : { code: 'feed_unreadable', message: `cannot read ${source}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
    await store.recordFeedFailure(feed.name, `${err.code}: ${err.message}`, now);
    return { name: feed.name, ok: false, error: err };
  }
}

/** Sync every feed of the store's node, one after the other. */
export async function syncFeeds(store: NodeStore, now: number, o: FeedFetchOptions = {}): Promise<FeedSyncResult[]> {
  const p = await store.property();
  const results: FeedSyncResult[] = [];
  for (const feed of await store.feeds()) results.push(await syncFeed(store, p, feed, now, o));
  return results;
}
