/**
 * What the console reads and what it changes, as two small ports. Reads come from the serving
 * node's store (`NodeStore` fits `ConsoleReads` as it is, its UCP Lodging booking sessions too). Every change is one of the CLI's own operations (`vrp node bookings confirm`,
 * `calendar block|unblock|sync`, `keys rotate|revoke`, `property update`): the same functions, the same checks and
 * refusals, the same store writes (`cliActions`).
 */
import type { BookingStatus } from '@vrpkit/protocol';
import { addCalendarBlock, removeCalendarBlock, syncCalendar } from '../admin/calendar.js';
import { type KeyListing, listKeys, revokeKey, rotateKey } from '../admin/keys.js';
import { publishProperty } from '../admin/property.js';
import type { NodeStoreOptions } from '../admin/store.js';
import { decideBooking } from '../booking/admin.js';
import type { BookingRequestRecord } from '../booking/ports.js';
import type { FeedFetchOptions, FeedSyncResult } from '../ical.js';
import type { PropertyDescription } from '../property.js';
import type { BlockedRange, CalendarFeed } from '../store/store.js';
import type { UcpSessionReader, UcpSessionRecord } from '../ucp/ports.js';

/** The console's read side: booking requests, UCP sessions, blocked ranges, feeds. */
export interface ConsoleReads extends UcpSessionReader {
  ucpSession(id: string): Promise<UcpSessionRecord | undefined>;
  bookingRequests(status?: BookingStatus): Promise<BookingRequestRecord[]>;
  bookingRequest(id: string): Promise<BookingRequestRecord | undefined>;
  listBlocks(): Promise<BlockedRange[]>;
  feeds(): Promise<CalendarFeed[]>;
}

/** The console's changes: each exactly what its `vrp node …` command does. */
export interface ConsoleActions {
  /** `vrp node bookings confirm ID` or `decline ID --reason TEXT`. */
  decideBooking(id: string, decision: 'confirmed' | 'declined', reason?: string): Promise<BookingRequestRecord>;
  addBlock(from: string, to: string, note?: string): Promise<{ id: string }>;
  removeBlock(id: string): Promise<void>;
  syncFeeds(): Promise<FeedSyncResult[]>;
  listKeys(): Promise<KeyListing[]>;
  rotateKey(): Promise<unknown>;
  revokeKey(kid: string): Promise<unknown>;
  /** `vrp node property update` with a property the console validated. */
  publishProperty(property: PropertyDescription): Promise<unknown>;
}

/** The CLI's operations on the node `o` names, as the console's actions. */
export function cliActions(o: NodeStoreOptions & { feeds?: FeedFetchOptions }): ConsoleActions {
  const { feeds, ...node } = o;
  return {
    decideBooking: (id, decision, reason) => decideBooking({ ...node, id, decision, ...(reason !== undefined ? { reason } : {}) }),
    addBlock: (from, to, note) => addCalendarBlock({ ...node, from, to, ...(note ? { note } : {}) }),
    removeBlock: (id) => removeCalendarBlock({ ...node, id }),
    syncFeeds: () => syncCalendar({ ...node, ...feeds }),
    listKeys: () => listKeys(node),
    rotateKey: () => rotateKey(node),
    revokeKey: (kid) => revokeKey({ ...node, kid }),
    publishProperty: (property) => publishProperty(node, property, 'the property from the console'),
  };
}
