/**
 * `vrp node bookings sessions`: the UCP booking sessions a node holds, by status, oldest first —
 * what a host console lists through the same read port (`UcpSessionReader`). The list carries no
 * one-time code digest; the buyer's contact is shown to the host only (never logged).
 */
import { systemClock } from '@vrpkit/core';
import { BookingStatusSchema, UcpSessionStatusSchema } from '@vrpkit/protocol';
import { type NodeStoreOptions, withNodeStore } from '../admin/store.js';
import type { BookingRequestRecord } from '../booking/ports.js';
import { NodeError } from '../errors.js';
import type { BookingStatus } from '../store/schema.js';
import { sessionOfHold } from './confirm.js';
import type { UcpSessionReader, UcpSessionRecord, UcpSessionStore } from './ports.js';

type Stored = UcpSessionRecord['status'];
/** The statuses a session is stored in (`complete_in_progress` never is: completion is one statement). */
const STATUSES = UcpSessionStatusSchema.options.filter((s): s is Stored => s !== 'complete_in_progress');

export function listUcpSessions(o: NodeStoreOptions & { status?: string }): ReturnType<UcpSessionReader['ucpSessions']> {
  const status = o.status;
  if (status !== undefined && !STATUSES.includes(status as Stored))
    throw new NodeError('invalid_booking_status', { statuses: STATUSES.join(', ') });
  return withNodeStore(o, (store) => store.ucpSessions(status as Stored | undefined));
}

/**
 * `vrp node bookings list`: the UCP sessions and the reservations (booking requests) a node holds,
 * by status, oldest first; `status` is either kind's and narrows the list to it. Holds whose time
 * passed are marked expired first, as every read does.
 */
export function listInbox(o: NodeStoreOptions & { status?: string }): Promise<{
  sessions: Awaited<ReturnType<UcpSessionReader['ucpSessions']>>;
  bookings: BookingRequestRecord[];
}> {
  const status = o.status;
  const holds: readonly string[] = BookingStatusSchema.options;
  if (status !== undefined && !STATUSES.includes(status as Stored) && !holds.includes(status))
    throw new NodeError('invalid_booking_status', { statuses: [...STATUSES, ...holds].join(', ') });
  return withNodeStore(o, async (store) => {
    await store.expireHolds((o.clock ?? systemClock).now());
    const [sessions, bookings] = await Promise.all([
      status === undefined || STATUSES.includes(status as Stored) ? store.ucpSessions(status as Stored | undefined) : [],
      status === undefined || holds.includes(status) ? store.bookingRequests(status as BookingStatus | undefined) : [],
    ]);
    return { sessions, bookings };
  });
}

/**
 * The host declined `booking`: when a session's confirmation made it, that session ends `canceled`
 * with the host's reason (its answer carries it as a message, view.ts), whether or not its platform
 * had completed it — the reservation it stood for is gone. A session already canceled stays as it is.
 */
export async function cancelSessionOfDeclinedHold(
  store: UcpSessionStore,
  booking: Pick<BookingRequestRecord, 'idempotency_key'>,
  reason: string,
  now: number,
): Promise<void> {
  const id = sessionOfHold(booking.idempotency_key);
  if (id) await store.updateUcpSession(id, ['ready_for_complete', 'completed'], { status: 'canceled', cancel_reason: reason }, now);
}
