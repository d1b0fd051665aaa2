/** `vrp node calendar …`: iCal feeds and blocked dates of a node's data directory. */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { systemClock } from '@vrpkit/core';
import { dayNumber } from '../dates.js';
import { NodeError } from '../errors.js';
import { assertFeedUrl, type FeedFetchOptions, type FeedSyncResult, syncFeeds } from '../ical.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

const FEED_NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;

/** A feed name: 1–63 letters, digits, `.`, `_`, `-` (a node's feeds and a platform tenant's alike). */
export function assertFeedName(name: string): void {
  if (!FEED_NAME_RE.test(name)) throw new NodeError('invalid_feed_name');
}

/**
 * A feed file as stored: an absolute path to a file that exists now. Sync runs from wherever
 * cron or the server starts, so a path relative to the directory `add-feed` ran in would name
 * another file there, or none.
 */
function feedFilePath(file: string): string {
  const path = resolve(file);
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    // isFile stays false: missing or unreadable is the same refusal
  }
  if (!isFile) throw new NodeError('feed_file_not_found', { file: path });
  return path;
}

/** `vrp node calendar add-feed`: a file feed is stored by its absolute path; `add-feed` returns the stored source. */
export async function addCalendarFeed(
  o: NodeStoreOptions & { name: string; url?: string; file?: string },
): Promise<{ name: string; url: string | null; file: string | null }> {
  assertFeedName(o.name);
  if (!!o.url === !!o.file) throw new NodeError('invalid_feed_source');
  if (o.url) assertFeedUrl(o.url);
  const feed = { name: o.name, url: o.url ?? null, file: o.file ? feedFilePath(o.file) : null };
  await withNodeStore(o, (store) => store.addFeed(feed, (o.clock ?? systemClock).now()));
  return feed;
}

/** `vrp node calendar sync` */
export function syncCalendar(o: NodeStoreOptions & FeedFetchOptions): Promise<FeedSyncResult[]> {
  return withNodeStore(o, (store) => syncFeeds(store, (o.clock ?? systemClock).now(), o));
}

/** `vrp node calendar block`: a host block or a booking taken elsewhere, nights `[from, to)`. */
export async function addCalendarBlock(o: NodeStoreOptions & { from: string; to: string; kind?: 'block' | 'booking'; note?: string }) {
  if (dayNumber(o.from) === null || dayNumber(o.to) === null) throw new NodeError('invalid_date', { what: '--from and --to' });
  if (o.to <= o.from) throw new NodeError('invalid_range', { what: '--to (the first free night)', rule: 'after --from' });
  return withNodeStore(o, async (store) => {
    const p = await store.property();
    return store.addBlock(
      p.property_id,
      { start_date: o.from, end_date: o.to, kind: o.kind ?? 'block', note: o.note ?? null },
      (o.clock ?? systemClock).now(),
    );
  });
}

/** `vrp node calendar unblock ID` (host blocks and bookings; imported ranges belong to their feed). */
export function removeCalendarBlock(o: NodeStoreOptions & { id: string }): Promise<void> {
  return withNodeStore(o, async (store) => {
    if (!(await store.removeBlock(o.id))) throw new NodeError('unknown_block', { id: o.id });
  });
}

/** `vrp node calendar remove-feed NAME`: the feed and every range it imported. */
export function removeCalendarFeed(o: NodeStoreOptions & { name: string }): Promise<void> {
  return withNodeStore(o, async (store) => {
    if (!(await store.removeFeed(o.name))) throw new NodeError('unknown_feed', { name: o.name });
  });
}

/** `vrp node calendar list`: feeds with their last sync, and every blocked range. */
export function listCalendar(o: NodeStoreOptions) {
  return withNodeStore(o, async (store) => ({ feeds: await store.feeds(), blocks: await store.listBlocks() }));
}
