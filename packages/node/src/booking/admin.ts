/**
 * `vrp node bookings …`: the host's view of booking requests and its decisions. Each operation
 * first expires the holds whose time has passed (as every read does), so a host never confirms a
 * hold whose dates were already freed. Guest details are shown to the host here, from the store;
 * they are never logged.
 */
import { systemClock } from '@vrpkit/core';
import { type BookingStatus, BookingStatusSchema } from '@vrpkit/protocol';
import { type NodeStoreOptions, withNodeStore } from '../admin/store.js';
import { NodeError } from '../errors.js';
import { cancelSessionOfDeclinedHold } from '../ucp/admin.js';
import type { BookingRequestRecord } from './ports.js';

const STATUSES: readonly BookingStatus[] = BookingStatusSchema.options;

/** `vrp node bookings list [--status S]`: oldest first. */
export function listBookings(o: NodeStoreOptions & { status?: string }): Promise<BookingRequestRecord[]> {
  const status = o.status;
  if (status !== undefined && !STATUSES.includes(status as BookingStatus))
    throw new NodeError('invalid_booking_status', { statuses: STATUSES.join(', ') });
  return withNodeStore(o, async (store) => {
    await store.expireHolds((o.clock ?? systemClock).now());
    return store.bookingRequests(status as BookingStatus | undefined);
  });
}

/** `vrp node bookings show <id>` */
export function showBooking(o: NodeStoreOptions & { id: string }): Promise<BookingRequestRecord> {
  return withNodeStore(o, async (store) => {
    await store.expireHolds((o.clock ?? systemClock).now());
    const b = await store.bookingRequest(o.id);
    if (!b) throw new NodeError('booking_not_found', { id: o.id });
    return b;
  });
}

/** Longest decline reason (it goes into the guest's mail and the session's message). */
export const MAX_DECLINE_REASON_CHARS = 500;

/** A decline's reason, trimmed: required, at most `MAX_DECLINE_REASON_CHARS` (`decline_reason_required`, `decline_reason_too_long`). */
export function declineReason(reason: string | undefined): string {
  const r = reason?.trim() ?? '';
  if (r === '') throw new NodeError('decline_reason_required');
  if ([...r].length > MAX_DECLINE_REASON_CHARS) throw new NodeError('decline_reason_too_long', { max: MAX_DECLINE_REASON_CHARS });
  return r;
}

/**
 * `vrp node bookings confirm|decline <id>` (the console's decision too): only a pending, unexpired
 * hold can be decided. A decline takes the reason the guest is told; the hold's UCP session, if a
 * session made it, ends `canceled` with that reason. The change's event waits in the outbox: the
 * serving node mails the guest (and, for a confirmation, the host) from there (upkeep.ts).
 */
export async function decideBooking(
  o: NodeStoreOptions & { id: string; decision: 'confirmed' | 'declined'; reason?: string },
): Promise<BookingRequestRecord> {
  const reason = o.decision === 'declined' ? declineReason(o.reason) : null;
  return withNodeStore(o, async (store) => {
    const now = (o.clock ?? systemClock).now();
    await store.expireHolds(now);
    const d = await store.decideHold(o.id, o.decision, now, { reason });
    if (!d) throw new NodeError('booking_not_found', { id: o.id });
    // Confirming a confirmed booking is refused like declining a decided one: the decision was already taken.
    if (!d.decided) throw new NodeError('booking_not_pending', { id: o.id, status: d.booking.status });
    if (reason !== null) await cancelSessionOfDeclinedHold(store, d.booking, reason, now);
    return d.booking;
  });
}
