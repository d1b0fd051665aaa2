/**
 * The notices a host's decision sends by mail, from the booking-event outbox (upkeep.ts): the guest
 * learns that the host confirmed or declined their stay (with the host's reason), and the host
 * (`--host-email`) learns of each confirmed reservation. Plain text; every guest- or host-written
 * part is shown with visible escapes (core's character class), so a bidi control cannot reorder
 * what the reader sees. Each notice goes to the address the booking holds, never anywhere a
 * request names.
 */
import { visibleEscapes } from '@vrpkit/core';
import type { BookingEvent, BookingOutbox, BookingRequestRecord, NoticeMail, NoticeMailer } from './ports.js';

/** Delivery tries per notice before it is given up (left unmailed in the store). */
export const MAX_NOTICE_ATTEMPTS = 5;
/** A decision older than this is not mailed any more (a node that served without mail for a while does not mail stale news). */
export const NOTICE_WINDOW_MS = 2 * 86_400_000;
const NOTICE_BATCH = 50;

const stay = (b: BookingRequestRecord) =>
  `${b.check_in} to ${b.check_out}, ${b.guests} guest${Number(b.guests) === 1 ? '' : 's'}, total ${b.total} (${b.currency} minor units)`;

/** The guest's notice of the host's decision on booking `b` (its status is the decision). */
export function guestNotice(b: BookingRequestRecord, domain: string): NoticeMail {
  const confirmed = b.status === 'confirmed';
  const lines = confirmed
    ? [`The host of ${domain} confirmed your stay: ${stay(b)}.`, '', `Your booking is ${b.booking_id}. You pay the host at the property.`]
    : [
        `The host of ${domain} declined your stay request: ${stay(b)}.`,
        '',
        `The host's reason: ${b.decision_reason ?? '(none given)'}`,
        '',
        'No night is held for you and nothing was charged.',
      ];
  return {
    to: b.guest_email,
    subject: confirmed ? `Your stay at ${domain} is confirmed` : `Your stay request at ${domain} was declined`,
    text: visibleEscapes(lines.join('\n'), '\n'),
  };
}

/** The host's notice of a confirmed reservation: who, when, what total. */
export function hostNotice(b: BookingRequestRecord, domain: string, to: string): NoticeMail {
  const lines = [
    `Booking ${b.booking_id} on ${domain} is confirmed: ${stay(b)}.`,
    '',
    `Guest: ${b.guest_name} <${b.guest_email}>${b.guest_phone ? `, ${b.guest_phone}` : ''}`,
    '',
    "The dates are blocked: the node's offers and calendar feed show them booked.",
  ];
  return { to, subject: `Booking confirmed on ${domain}: ${b.check_in} to ${b.check_out}`, text: visibleEscapes(lines.join('\n'), '\n') };
}

export interface NoticeMailOptions {
  mailer: NoticeMailer;
  /** `--host-email`: where the host is told of each confirmed reservation. */
  hostEmail?: string;
}

/** Mail what the outbox holds of the host's decisions: the guest's notice, then the host's for a confirmation. */
export async function mailNotices(
  store: BookingOutbox,
  domain: string,
  o: NoticeMailOptions,
  now: () => number,
  onError?: (e: unknown) => void,
): Promise<void> {
  const events = await store.unmailedBookingEvents(now() - NOTICE_WINDOW_MS, MAX_NOTICE_ATTEMPTS, NOTICE_BATCH);
  for (const e of events) {
    const sent = await mailOne(store, e, domain, o, onError).catch((err: unknown) => {
      onError?.(err);
      return false;
    });
    await store.recordBookingEventMail(e.event_id, sent, now());
  }
}

async function mailOne(
  store: BookingOutbox,
  e: BookingEvent,
  domain: string,
  o: NoticeMailOptions,
  onError?: (e: unknown) => void,
): Promise<boolean> {
  const b = await store.bookingRequest(e.booking_id);
  // Only the host's decisions wait here (store.ts `addBookingEvent`); an event whose booking is gone has nothing to say.
  if (!b || (e.status !== 'confirmed' && e.status !== 'declined')) return true;
  await o.mailer.sendNotice(guestNotice({ ...b, status: e.status }, domain));
  // The host's notice leaves once the guest's did; a failure of it is reported, not retried (a retry would mail the guest again).
  if (e.status === 'confirmed' && o.hostEmail)
    await o.mailer.sendNotice(hostNotice({ ...b, status: e.status }, domain, o.hostEmail)).catch((err: unknown) => onError?.(err));
  return true;
}
