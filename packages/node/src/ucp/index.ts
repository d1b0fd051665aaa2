/**
 * UCP booking sessions assembled for one node: the sessions over its store and offer service, and,
 * with a mail transport, the guest's confirmation on its page (the hold through its booking desk).
 */
import type { Clock } from '@vrpkit/core';
import type { BookingDesk } from '../booking/desk.js';
import type { NodePublisher } from '../service/types.js';
import { type GuestConfirmation, guestConfirmation } from './confirm.js';
import type { GuestMailer, UcpIdempotencyStore, UcpSessionRecord, UcpSessionStore } from './ports.js';
import { type UcpHolds, UcpSessions } from './sessions.js';

export interface UcpBookingSessions {
  sessions: UcpSessions;
  confirmation?: GuestConfirmation;
}

/** The stay and its total in words, for the guest's mail. */
const summary = (name: string) => (s: UcpSessionRecord) =>
  `${name}: ${s.check_in} to ${s.check_out}, ${s.guests} guest${Number(s.guests) === 1 ? '' : 's'}, total ${s.total} (${s.currency} minor units).`;

export function ucpBookingSessions(o: {
  service: NodePublisher;
  /** The session rows and their holds: a node's `NodeStore`, a platform tenant's rows. */
  store: UcpSessionStore & UcpIdempotencyStore & UcpHolds;
  desk: BookingDesk;
  clock: Clock;
  mailer?: GuestMailer;
  onError?: (e: unknown) => void;
}): UcpBookingSessions {
  const sessions = new UcpSessions({ service: o.service, store: o.store, clock: o.clock });
  if (!o.mailer) return { sessions };
  const confirmation = guestConfirmation({
    store: o.store,
    desk: o.desk,
    mailer: o.mailer,
    origin: o.service.origin,
    clock: o.clock,
    summary: summary(o.service.property().name),
    ...(o.onError ? { onError: o.onError } : {}),
  });
  return { sessions, confirmation };
}
