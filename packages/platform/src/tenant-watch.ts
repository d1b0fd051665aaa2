/**
 * How current a serving process's in-memory tenant state is, learnt from PostgreSQL's own
 * LISTEN/NOTIFY (no broker): every write to a tenant notifies its domain at commit (migration
 * 0004's trigger), the listener hands each notification over in commit order, and its
 * confirmation round trips (`listenPg`) prove that nothing committed before they started is still
 * on its way. A tenant state read at `mark.at` is then known current as of
 * `confirmedAt(domain, mark)`: the later of that read and the listener's last confirmation, unless
 * the tenant was notified since the read started (then it is stale now).
 *
 * The rule every serving process keeps (docs/platform.md, "Tenant state in memory"): a state is
 * served without reading the store only while the listener is up and the state is confirmed
 * within the last half of `TENANT_STATE_LEASE_MS`; a signature is made only with a state whose
 * keys are confirmed within the lease (by the listener or by a read of this request) and whose
 * signing key the state still holds. Keys, not the whole state: a write that cannot take a key
 * away (a hold, a session, a calendar sync: notified `{domain}` only) ends serving the state from
 * memory but leaves the signatures of requests already served with it alone; one that can
 * (a key row changed, a status changed, the tenant removed: also notified `keys:{domain}`,
 * migration 0007) holds them back until the tenant is read again. So any write committed at C is honoured by every process from C + lease on, whatever
 * its listener does; a write seen in time (the common case) from its notification on, a
 * millisecond or two (bench/platform measures it). Disable, remove and key revocation wait `INVALIDATION_WINDOW_MS` after their
 * commit before they return (tenants.ts): once `keys revoke` returns, no process signs with the key.
 * While the listener is down, each request reads the tenant's head row (fail closed); after a
 * reconnect every state kept from before is read again at its next request (its mark is of an
 * older connection).
 */
import { listenPg, type PgListener } from '@vrpkit/sql';
import { LRUCache } from 'lru-cache';
import { KEYS_PAYLOAD_PREFIX, tenantChannel } from './store/channel.js';
import type { PlatformTarget } from './store/db.js';

/**
 * How long a confirmation of a tenant's state holds for a signature (ms). Long enough that a
 * request whose reads are slow (a loaded database: a round trip of a second or more) still signs
 * with the state it read; it is also what a write that must be honoured everywhere waits.
 */
export const TENANT_STATE_LEASE_MS = 5000;

/**
 * A state is served from memory only while confirmed within this much (half the lease): the
 * request then has the other half to sign before its state's confirmation runs out.
 */
const SERVE_FROM_MEMORY_MS = TENANT_STATE_LEASE_MS / 2;

/**
 * What disable, remove and key revocation wait after their commit (ms): the lease plus a margin
 * for timers, so that every serving process has honoured the write when they return.
 */
export const INVALIDATION_WINDOW_MS = TENANT_STATE_LEASE_MS + 100;

/** Tenants whose last notification is remembered; past it the oldest is forgotten (and states read before it are read again). */
const NOTIFIED_REMEMBERED = 100_000;

/** Taken when a read of a tenant's state starts: what that read can later be said to confirm. */
export interface StateMark {
  /** `performance.now()` at the read's start. */
  at: number;
  /** The listener connection the read started under (0: none). */
  epoch: number;
  /** Notifications received when the read started. */
  seq: number;
}

/** The last notification of each of the latest domains notified, and the latest one forgotten (past `NOTIFIED_REMEMBERED`). */
class Notified {
  private readonly last = new LRUCache<string, number>({
    max: NOTIFIED_REMEMBERED,
    disposeAfter: (seq, _domain, reason) => {
      if (reason === 'evict') this.forgotten = Math.max(this.forgotten, seq);
    },
  });
  /** The latest notification no longer remembered by domain: a state marked before it may have missed its own. */
  private forgotten = 0;

  set(domain: string, seq: number): void {
    this.last.set(domain, seq);
  }

  /** Whether `domain` may have been notified after `seq`. */
  since(domain: string, seq: number): boolean {
    return (this.last.get(domain) ?? this.forgotten) > seq;
  }
}

export class TenantWatch {
  private seq = 0;
  /** Every write's notification (the state kept is stale). */
  private readonly notified = new Notified();
  /** Those of writes that can take a signing key away (the keys kept are stale). */
  private readonly keysNotified = new Notified();
  private listener: PgListener | undefined;

  /** Notifications handed over so far (the serving gauges show it). */
  get notifications(): number {
    return this.seq;
  }

  /**
   * Watch the tenants of the store at `t`: on PostgreSQL a LISTEN connection on the schema's channel; on SQLite
   * none (every request reads its tenant's head in its own turn, as the single-domain node does).
   */
  static async open(t: PlatformTarget, onDown?: (e: Error) => void): Promise<TenantWatch> {
    const watch = new TenantWatch();
    if (t.kind === 'postgres')
      watch.listener = await listenPg(t, {
        channel: tenantChannel(t.schema),
        applicationName: `${tenantChannel(t.schema)}_listen`,
        onNotification: (payload) =>
          payload.startsWith(KEYS_PAYLOAD_PREFIX) ? watch.notifyKeys(payload.slice(KEYS_PAYLOAD_PREFIX.length)) : watch.notify(payload),
        ...(onDown ? { onDown } : {}),
      });
    return watch;
  }

  /** A tenant's write committed: states of it read before now are stale (no longer served from memory). */
  notify(domain: string): void {
    this.notified.set(domain, ++this.seq);
  }

  /** A write that can take a tenant's signing key away committed: states of it read before now are stale and sign nothing. */
  notifyKeys(domain: string): void {
    this.notified.set(domain, ++this.seq);
    this.keysNotified.set(domain, this.seq);
  }

  mark(): StateMark {
    return { at: performance.now(), epoch: this.listener?.up() ? this.listener.epoch() : 0, seq: this.seq };
  }

  /** The latest instant `domain`'s state read under `m` is known current, or -Infinity when it has been notified since. */
  confirmedAt(domain: string, m: StateMark): number {
    return this.notified.since(domain, m.seq) ? Number.NEGATIVE_INFINITY : this.listenerConfirmed(m);
  }

  /** The latest instant `m`'s read is confirmed by the listener (it started under the listener's current connection), else the read's own start. */
  private listenerConfirmed(m: StateMark): number {
    const l = this.listener;
    return m.epoch !== 0 && l?.up() && l.epoch() === m.epoch ? Math.max(m.at, l.confirmedAt()) : m.at;
  }

  /** Whether `domain`'s state read under `m` may be served without reading the store: the listener is up and confirms it within half the lease. */
  servesFromMemory(domain: string, m: StateMark): boolean {
    return this.listener?.up() === true && this.confirmedAt(domain, m) + SERVE_FROM_MEMORY_MS > performance.now();
  }

  /**
   * Whether a signature may be made now with `domain`'s state read under `m`: its keys confirmed
   * within the lease, by the listener while no write that can take a key away was notified since,
   * else by that read itself. A revocation committed at C returns at C + `INVALIDATION_WINDOW_MS`;
   * a signature after that needs a confirmation after C, which saw the revocation (its
   * `keys:{domain}` notification). A hold or a session written meanwhile does not hold it back.
   */
  signable(domain: string, m: StateMark): boolean {
    const keysAt = this.keysNotified.since(domain, m.seq) ? m.at : this.listenerConfirmed(m);
    return keysAt + TENANT_STATE_LEASE_MS > performance.now();
  }

  /** Whether the listener is up (PostgreSQL). */
  listening(): boolean {
    return this.listener?.up() === true;
  }

  close(): Promise<void> {
    return this.listener?.close() ?? Promise.resolve();
  }
}
