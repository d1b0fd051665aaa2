/**
 * The booking desk's background work in the serving process: expire pending holds whose time has
 * passed (a write that bumps the store revision, so caches stop serving the held dates as taken;
 * reads also expire them as they come, see `NodeStore.snapshot`) and drain the booking-event
 * outbox to the `--booking-webhook` URL. A webhook event names the booking, its status and the
 * offer digest, never the guest. Delivery is retried a few times with backoff and never runs on a
 * request's path: a slow or failing receiver cannot delay a booking request. With a mail transport
 * it also mails the notices of the host's decisions (notice.ts) from the same outbox. Each sweep
 * also erases guest data past the host's retention (`--guest-data-days`).
 */
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { type Clock, systemClock } from '@vrpkit/core';
import { NodeError } from '../errors.js';
import { mailNotices, type NoticeMailOptions } from './notice.js';
import type { BookingEvent, BookingOutbox } from './ports.js';

/** How often the sweep runs when nothing wakes it. */
export const DEFAULT_BOOKING_SWEEP_INTERVAL_MS = 60_000;
/** Delivery attempts per event before it is given up (kept in the store, undelivered). */
export const MAX_WEBHOOK_ATTEMPTS = 5;
const WEBHOOK_TIMEOUT_MS = 5_000;
/** With a webhook or mail, the outbox is polled this often (another process, e.g. a CLI confirm, may have added an event). */
const WEBHOOK_POLL_MS = 2_000;
/** Events sent per drain. */
const DRAIN_BATCH = 50;

export interface BookingWebhook {
  /** An https URL. */
  url: string;
  /** Extra trusted CA certificates (PEM), added to the system roots. */
  ca?: string[];
}

/** The JSON body POSTed per change. */
export interface BookingWebhookEvent {
  type: 'vrpkit.booking_request.changed';
  event_id: string;
  canonical_domain: string;
  booking_id: string;
  status: string;
  offer_jws_sha256: string | null;
  occurred_at: string;
}

export function assertWebhookUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new NodeError('invalid_booking_webhook', { problem: 'is not a URL' });
  }
  if (u.protocol !== 'https:') throw new NodeError('invalid_booking_webhook', { problem: 'must be an https URL' });
  return u;
}

/** POST one event; resolves on a 2xx answer, rejects otherwise. */
function post(hook: BookingWebhook, body: string): Promise<void> {
  const u = assertWebhookUrl(hook.url);
  return new Promise((resolve, reject) => {
    const req = request(u, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'vrpkit-node booking webhook',
      },
      timeout: WEBHOOK_TIMEOUT_MS,
      ...(hook.ca ? { ca: [...rootCertificates, ...hook.ca] } : {}),
    });
    req.on('timeout', () => req.destroy(new NodeError('webhook_timeout')));
    req.on('response', (res) => {
      res.resume();
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      res.on('end', () => (ok ? resolve() : reject(new NodeError('webhook_http_error', { status: res.statusCode ?? 'nothing' }))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface BookingUpkeepOptions {
  /** The upkeep's store port (`NodeStore` on a node). */
  store: BookingOutbox;
  canonicalDomain: string;
  clock?: Clock;
  webhook?: BookingWebhook;
  /**
   * `--guest-data-days`: each sweep erases the guest's details from bookings and sessions whose stay
   * ended more than this many days ago (absent: kept).
   */
  guestDataDays?: number;
  /** The notices of the host's decisions by mail (`--smtp-url`, `--host-email`). */
  notices?: NoticeMailOptions;
  intervalMs?: number;
  onError?: (e: unknown) => void;
}

export interface BookingUpkeep {
  /** Run a sweep and drain soon (after a change this process made). */
  wake(): void;
  stop(): Promise<void>;
}

/** `--guest-data-days` default: a year after check-out, long enough for a host's disputes and taxes. */
export const DEFAULT_GUEST_DATA_DAYS = 365;

/** `days` as a retention: a whole number of days, at least 1 (`invalid_guest_data_days`). */
export function assertGuestDataDays(days: number): number {
  if (!Number.isInteger(days) || days < 1) throw new NodeError('invalid_guest_data_days');
  return days;
}

/** The first check-out date whose guest data is still kept `days` after `now` (stays that ended before it are erased). */
export function retentionCutoff(now: number, days: number): string {
  return new Date(now - days * 86_400_000).toISOString().slice(0, 10);
}

/** Backoff before attempt `n+1` of an event that failed `n` times: 1 s, 2 s, 4 s, … */
const backoffMs = (attempts: number) => 1000 * 2 ** Math.max(0, attempts - 1);

/**
 * The webhook sender: one drain of the outbox at a time, in order per booking (a later change
 * waits until the earlier one was delivered or given up), failed events retried with backoff.
 */
class OutboxDrain {
  /** When each event that failed may be tried again (real time: backoff is about the receiver, not the node's clock). */
  private readonly retryAt = new Map<string, number>();

  constructor(
    private readonly o: BookingUpkeepOptions & { webhook: BookingWebhook },
    private readonly clock: Clock,
    private readonly stopped: () => boolean,
  ) {}

  /** Send what is undelivered; the time of the next retry due (Infinity when none). */
  async drain(): Promise<number> {
    const events = await this.o.store.undeliveredBookingEvents(DRAIN_BATCH);
    let nextRetry = Number.POSITIVE_INFINITY;
    const waiting = new Set<string>();
    for (const e of events) {
      if (this.stopped()) return Number.POSITIVE_INFINITY;
      if (e.attempts >= MAX_WEBHOOK_ATTEMPTS || waiting.has(e.booking_id)) continue;
      const at = this.retryAt.get(e.event_id) ?? 0;
      if (at <= Date.now() && (await this.deliver(e))) continue;
      waiting.add(e.booking_id);
      nextRetry = Math.min(nextRetry, this.retryAt.get(e.event_id) ?? nextRetry);
    }
    return nextRetry;
  }

  private async deliver(e: BookingEvent): Promise<boolean> {
    const { store } = this.o;
    const booking = await store.bookingRequest(e.booking_id);
    const event: BookingWebhookEvent = {
      type: 'vrpkit.booking_request.changed',
      event_id: e.event_id,
      canonical_domain: this.o.canonicalDomain,
      booking_id: e.booking_id,
      status: e.status,
      offer_jws_sha256: booking?.offer_jws_sha256 ?? null,
      occurred_at: e.created_at,
    };
    try {
      await post(this.o.webhook, JSON.stringify(event));
      await store.recordBookingEventAttempt(e.event_id, true, this.clock.now());
      this.retryAt.delete(e.event_id);
      return true;
    } catch (err) {
      await store.recordBookingEventAttempt(e.event_id, false, this.clock.now());
      this.retryAt.set(e.event_id, Date.now() + backoffMs(e.attempts + 1));
      this.o.onError?.(err);
      return false;
    }
  }
}

export function startBookingUpkeep(o: BookingUpkeepOptions): BookingUpkeep {
  const clock = o.clock ?? systemClock;
  const polled = o.webhook || o.notices;
  const intervalMs = Math.min(o.intervalMs ?? DEFAULT_BOOKING_SWEEP_INTERVAL_MS, polled ? WEBHOOK_POLL_MS : Number.POSITIVE_INFINITY);
  if (o.webhook) assertWebhookUrl(o.webhook.url);
  if (o.guestDataDays !== undefined) assertGuestDataDays(o.guestDataDays);
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const outbox = o.webhook ? new OutboxDrain({ ...o, webhook: o.webhook }, clock, () => stopped) : undefined;

  async function once(): Promise<void> {
    await o.store.expireHolds(clock.now());
    if (o.guestDataDays !== undefined) await o.store.eraseGuestData(retentionCutoff(clock.now(), o.guestDataDays));
    if (o.notices) await mailNotices(o.store, o.canonicalDomain, o.notices, () => clock.now(), o.onError);
    const nextRetry = outbox ? await outbox.drain() : Number.POSITIVE_INFINITY;
    if (Number.isFinite(nextRetry)) schedule(Math.max(0, nextRetry - Date.now()));
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = once()
      .catch((e) => o.onError?.(e))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  }

  function schedule(ms: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      run();
      schedule(intervalMs);
    }, ms);
    timer.unref();
  }

  schedule(0);
  return {
    wake: () => run(),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
