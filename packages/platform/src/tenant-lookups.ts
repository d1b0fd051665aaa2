/**
 * Which enabled tenant serves a host, with everything its offer service reads, for the hosts a
 * process is asked about while its previous lookup is on its way: looked up together in one
 * statement, as group commit gathers the transactions that arrive during an fsync. With no lookup
 * under way the hosts asked about during one turn of the event loop go at the turn's end
 * (`setImmediate`); while one is under way, every host asked about meanwhile goes in the next,
 * sent when it answers. A burst of new connections to cold tenants (each SNI callback starts its
 * tenant's lookup) then costs one round trip and one statement per round trip, however the
 * handshakes spread over turns: on a loaded machine sending a statement and parsing its answer
 * cost more server CPU than the rest of a cold tenant's load (bench/platform
 * `pg_statements_per_req`), and a host waits for at most the round trip under way before its own.
 */
import type { StateMark, TenantWatch } from './tenant-watch.js';
import type { PlatformStore, TenantSnapshot } from './tenants.js';

/** Candidate domains per statement at most (the statement is compiled once per count, so the counts are bounded). */
const MAX_CANDIDATES = 64;

/** What a lookup finds: the tenant's state and the mark its read started under (tenant-watch.ts). */
export interface FoundTenant {
  snapshot: TenantSnapshot;
  mark: StateMark;
}

type Waiting = { resolve(found: FoundTenant | undefined): void; reject(e: unknown): void };

/** `host` and each parent with at least two labels, the host first: the tenant domains that could serve it, most specific first. */
export function candidateDomains(host: string): string[] {
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** A lookup of the enabled tenant serving a host, batched per turn (see the file comment). */
export function createTenantLookups(store: PlatformStore, watch: TenantWatch): (host: string) => Promise<FoundTenant | undefined> {
  /** Hosts asked about since the last statement went. */
  let queued: Map<string, Waiting[]> | undefined;
  /** A statement is on its way or due at this turn's end: hosts asked about now wait for the next. */
  let busy = false;

  const run = async (hosts: Map<string, Waiting[]>) => {
    const mark = watch.mark();
    const candidates = [...new Set([...hosts.keys()].flatMap(candidateDomains))];
    let found: Map<string, TenantSnapshot>;
    try {
      const reads: Promise<TenantSnapshot[]>[] = [];
      for (let i = 0; i < candidates.length; i += MAX_CANDIDATES)
        reads.push(store.activeTenantSnapshots(candidates.slice(i, i + MAX_CANDIDATES)));
      found = new Map((await Promise.all(reads)).flat().map((s) => [s.info.canonical_domain, s]));
    } catch (e) {
      for (const waiting of hosts.values()) for (const w of waiting) w.reject(e);
      return;
    }
    for (const [host, waiting] of hosts) {
      // A tenant serves its subdomains; the most specific enabled one serves the host.
      const domain = candidateDomains(host).find((c) => found.has(c));
      for (const w of waiting) w.resolve(domain ? { snapshot: found.get(domain)!, mark } : undefined);
    }
  };

  /** Send the hosts queued, then those queued meanwhile when it answers; idle once none are. */
  const send = (): void => {
    const hosts = queued;
    queued = undefined;
    busy = hosts !== undefined;
    if (hosts) void run(hosts).then(send);
  };

  return (host) =>
    new Promise((resolve, reject) => {
      queued ??= new Map();
      const waiting = queued.get(host);
      if (waiting) waiting.push({ resolve, reject });
      else queued.set(host, [{ resolve, reject }]);
      if (!busy) {
        busy = true;
        setImmediate(send);
      }
    });
}
