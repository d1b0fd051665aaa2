/**
 * A PostgreSQL `LISTEN` connection that says how current it is (PostgreSQL's own LISTEN/NOTIFY,
 * no broker). PostgreSQL delivers a notification to a listening session in commit order, and an
 * idle session gets every notification committed before the start of its next statement before
 * that statement's answer. So each confirmation round trip (`SELECT 1` on the listening
 * connection, every `confirmEveryMs`) that completes proves: every notification committed before
 * it started has been handed to `onNotification` already. `confirmedAt()` is the start of the
 * latest such round trip — what an owner keeping state in memory compares a write's commit time
 * against. The connection is reopened after a loss (`epoch()` counts the connections that had
 * LISTEN in effect); what was committed while it was down was never delivered, so the owner
 * resyncs everything it kept from before (`onUp`).
 */
import type pg from 'pg';
import { type ConnectionLossListener, openPgClient } from './postgres.js';
import type { PostgresTarget } from './target.js';

export interface PgListenerOptions {
  /** The channel, a plain identifier (quoted into `LISTEN`). */
  channel: string;
  applicationName: string;
  /** Each notification's payload, in commit order, in the turn it arrives. */
  onNotification(payload: string): void;
  /** A new connection has LISTEN in effect (the first one and each after a loss). */
  onUp?(): void;
  /** The connection was lost (or could not be made); notifications may be missed until `onUp`. */
  onDown?: ConnectionLossListener;
  /** Ms between confirmation round trips (default 200). */
  confirmEveryMs?: number;
  /** Ms before reconnecting after a loss, doubled each failure up to 2 s (default 100). */
  retryMs?: number;
}

export interface PgListener {
  /** `performance.now()` at the start of the latest confirmation round trip that completed on the live connection; -Infinity while down. */
  confirmedAt(): number;
  /** Connections that have had LISTEN in effect so far; a mark taken under an older one is not covered by this one's confirmations. */
  epoch(): number;
  /** Whether LISTEN is in effect on a live connection now. */
  up(): boolean;
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** Listen on `o.channel` at `t` until `close()`, reconnecting after losses; resolves once the first connection attempt settled. */
export async function listenPg(t: PostgresTarget, o: PgListenerOptions): Promise<PgListener> {
  if (!CHANNEL.test(o.channel)) throw new TypeError(`not a plain channel name: ${o.channel}`);
  const every = o.confirmEveryMs ?? 200;
  const firstRetry = o.retryMs ?? 100;
  let client: pg.Client | undefined;
  let confirmed = Number.NEGATIVE_INFINITY;
  let epoch = 0;
  let closed = false;
  let retry = firstRetry;
  let timer: NodeJS.Timeout | undefined;

  const later = (fn: () => void, ms: number) => {
    timer = setTimeout(fn, ms);
    timer.unref();
  };
  const lost = (c: pg.Client, e: Error) => {
    if (client !== c) return;
    client = undefined;
    confirmed = Number.NEGATIVE_INFINITY;
    c.end().catch(() => {});
    o.onDown?.(e);
    if (!closed) later(connect, retry);
    retry = Math.min(retry * 2, 2000);
  };
  /** One confirmation round trip on `c`, then the next after `every` ms. */
  const confirm = (c: pg.Client) => {
    const started = performance.now();
    c.query('SELECT 1').then(
      () => {
        if (client !== c) return;
        confirmed = started;
        later(() => confirm(c), every);
      },
      (e: Error) => lost(c, e),
    );
  };
  async function connect(): Promise<void> {
    if (closed) return;
    const c = openPgClient(t, { applicationName: o.applicationName, onConnectionLoss: (e) => lost(c, e) });
    client = c;
    c.on('end', () => lost(c, new Error('Connection terminated')));
    c.on('notification', (m) => {
      if (client === c && m.channel === o.channel) o.onNotification(m.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${o.channel}"`);
    } catch (e) {
      lost(c, e as Error);
      return;
    }
    if (client !== c) return;
    epoch++;
    retry = firstRetry;
    o.onUp?.();
    confirm(c);
  }

  await connect();
  return {
    confirmedAt: () => confirmed,
    epoch: () => epoch,
    up: () => client !== undefined && confirmed > Number.NEGATIVE_INFINITY,
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      confirmed = Number.NEGATIVE_INFINITY;
      await c?.end().catch(() => {});
    },
  };
}
