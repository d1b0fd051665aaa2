/** `vrp node calendar …`: iCal feeds and blocked dates of a node's data directory. */
import { systemClock } from '@vrpkit/core';
import { dayNumber } from '../dates.js';
import { NodeError } from '../errors.js';
import { assertFeedUrl, type FeedFetchOptions, type FeedSyncResult, syncFeeds } from '../ical.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

const FEED_NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;

/** `vrp node calendar add-feed` */
export async function addCalendarFeed(o: NodeStoreOptions & { name: string; url?: string; file?: string }): Promise<void> {
  if (!FEED_NAME_RE.test(o.name)) throw new NodeError('invalid_feed_name', 'a feed name is 1–63 letters, digits, . _ -');
  if (!!o.url === !!o.file) throw new NodeError('invalid_feed_source', 'give exactly one of --url or --file');
  if (o.url) assertFeedUrl(o.url);
  await withNodeStore(o, (store) =>
    store.addFeed({ name: o.name, url: o.url ?? null, file: o.file ?? null }, (o.clock ?? systemClock).now()),
  );
}

/** `vrp node calendar sync` */
export function syncCalendar(o: NodeStoreOptions & FeedFetchOptions): Promise<FeedSyncResult[]> {
  return withNodeStore(o, (store) => syncFeeds(store, (o.clock ?? systemClock).now(), o));
}

/** `vrp node calendar block`: a host block or a booking taken elsewhere, nights `[from, to)`. */
export async function addCalendarBlock(o: NodeStoreOptions & { from: string; to: string; kind?: 'block' | 'booking'; note?: string }) {
  if (dayNumber(o.from) === null || dayNumber(o.to) === null)
    throw new NodeError('invalid_date', '--from and --to must be real dates YYYY-MM-DD');
  if (o.to <= o.from) throw new NodeError('invalid_range', '--to is the first free night and must be after --from');
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
    if (!(await store.removeBlock(o.id))) throw new NodeError('unknown_block', `no host block or booking with id ${o.id}`);
  });
}

/** `vrp node calendar remove-feed NAME`: the feed and every range it imported. */
export function removeCalendarFeed(o: NodeStoreOptions & { name: string }): Promise<void> {
  return withNodeStore(o, async (store) => {
    if (!(await store.removeFeed(o.name))) throw new NodeError('unknown_feed', `no calendar feed named ${o.name}`);
  });
}

/** `vrp node calendar list`: feeds with their last sync, and every blocked range. */
export function listCalendar(o: NodeStoreOptions) {
  return withNodeStore(o, async (store) => ({ feeds: await store.feeds(), blocks: await store.listBlocks() }));
}
