/** How a booking request is shown: one line in a list, the host's full view, the `--json` document. */
import { visibleEscapes } from '@vrpkit/core';
import type { BookingRequestRecord, listUcpSessions } from '@vrpkit/node';

/** One line per booking: the id, the stay, the total and the status (no guest details in a list). */
export function bookingLine(b: BookingRequestRecord): string {
  const until = b.status === 'pending' ? `  holds until ${b.hold_expires_at}` : '';
  const line = `${b.booking_id}  ${b.check_in} → ${b.check_out}  ${b.guests} guests  ${b.total} ${b.currency} (minor units)  ${b.status}${until}`;
  return `${visibleEscapes(line)}\n`;
}

/** The host's full view of one booking, guest contact included. */
export function bookingDetails(b: BookingRequestRecord): string {
  const lines = [
    `booking request ${b.booking_id}: ${b.status}`,
    `stay            ${b.check_in} → ${b.check_out}, ${b.guests} guests`,
    `total           ${b.total} ${b.currency} (minor units)`,
    `guest           ${b.guest_name} <${b.guest_email}>${b.guest_phone ? `, ${b.guest_phone}` : ''}`,
    `requested       ${b.created_at}`,
    `hold expires    ${b.hold_expires_at}`,
    `offer sha-256   ${b.offer_jws_sha256}`,
  ];
  // Every line is text a guest wrote in part: shown with visible escapes (core's character class).
  return `${visibleEscapes(lines.join('\n'), '\n')}\n`;
}

/** A booking as `--json` prints it (the idempotency and request digests are internal bookkeeping). */
export function bookingJson(
  b: BookingRequestRecord,
): Omit<BookingRequestRecord, 'request_sha256' | 'idempotency_key' | 'guests' | 'total'> & { guests: number; total: number } {
  const { request_sha256: _digest, idempotency_key: _key, ...rest } = b;
  return { ...rest, guests: Number(b.guests), total: Number(b.total) };
}

type SessionRow = Awaited<ReturnType<typeof listUcpSessions>>[number];

/** One line per UCP session: id, stay, total, status and the hold it made (no buyer details in a list). */
export function sessionLine(s: SessionRow): string {
  const held = s.booking_id ? `  hold ${s.booking_id}` : '';
  return `${visibleEscapes(`${s.session_id}  ${s.check_in} → ${s.check_out}  ${s.guests} guests  ${s.total} ${s.currency} (minor units)  ${s.status}${held}`)}\n`;
}

/** A session as `--json` prints it: without the offer JWS (its digest names it). */
export function sessionJson(s: SessionRow): Omit<SessionRow, 'offer_jws' | 'guests' | 'total'> & { guests: number; total: number } {
  const { offer_jws: _jws, ...rest } = s;
  return { ...rest, guests: Number(s.guests), total: Number(s.total) };
}
