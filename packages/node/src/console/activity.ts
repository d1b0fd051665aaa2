/**
 * The console's activity counters (issue 35, "activity with plots"): offers asked per surface,
 * signed-offer cache hits and misses, and refusals by code, added up per UTC hour for the last
 * `ACTIVITY_HOURS` hours. Bounded by construction (a fixed number of hours, a fixed set of
 * surfaces, at most `MAX_REFUSAL_CODES` codes a bucket) and free of guest data: a request adds one
 * to a counter named by its path and its status, nothing of the request is kept.
 *
 * Counting sits outside the node's app, on its `fetch`, and keeps an answer that is ready in the
 * same turn ready in the same turn (the offer endpoint's fast path): one Map lookup and one
 * increment per request. A refused request's body is read for its code from a clone, after the
 * answer has gone.
 */
import { A2A_JSONRPC_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH, WEBMCP_TOOL_CALL_PATH } from '@vrpkit/protocol';
import type { Hono } from 'hono';

/** Hours of activity kept (two weeks). */
export const ACTIVITY_HOURS = 14 * 24;
/** Distinct refusal codes kept per hour, `other` included: past the first `MAX_REFUSAL_CODES - 1` a code counts as `other`. */
export const MAX_REFUSAL_CODES = 32;
const HOUR_MS = 3_600_000;

export const SURFACES = ['http', 'mcp', 'a2a', 'webmcp'] as const;
export type Surface = (typeof SURFACES)[number];

/** The surface a request path belongs to (Node Tool Binding v0.1: one bound tool on each). */
const SURFACE_OF_PATH: ReadonlyMap<string, Surface> = new Map([
  [OFFER_ENDPOINT_PATH, 'http'],
  [MCP_ENDPOINT_PATH, 'mcp'],
  [A2A_JSONRPC_PATH, 'a2a'],
  [WEBMCP_TOOL_CALL_PATH, 'webmcp'],
]);

export interface ActivityHour {
  /** The hour's start, epoch ms (UTC). */
  hour: number;
  requests: Record<Surface, number>;
  refusals: Map<string, number>;
  cacheHits: number;
  cacheMisses: number;
}

/** The signed-offer cache's running totals (`OfferCache.hits` / `.misses`), read at each sample. */
export interface CacheTotals {
  hits: number;
  misses: number;
}

export class Activity {
  private readonly hours = new Map<number, ActivityHour>();
  private seenCache: CacheTotals = { hits: 0, misses: 0 };

  constructor(
    private readonly now: () => number,
    private readonly cache?: CacheTotals | null,
  ) {}

  private bucket(t: number): ActivityHour {
    const hour = t - (t % HOUR_MS);
    let b = this.hours.get(hour);
    if (!b) {
      b = { hour, requests: { http: 0, mcp: 0, a2a: 0, webmcp: 0 }, refusals: new Map(), cacheHits: 0, cacheMisses: 0 };
      this.hours.set(hour, b);
      for (const h of this.hours.keys()) if (h <= hour - ACTIVITY_HOURS * HOUR_MS) this.hours.delete(h);
    }
    return b;
  }

  /** One request to `surface` answered with `status`. */
  count(surface: Surface, status: number): void {
    const b = this.bucket(this.now());
    b.requests[surface]++;
    if (status >= 400) this.refused(b, `http_${status}`);
  }

  /** A refusal's code, read from its body after the answer went (replaces the status it was first counted under). */
  refusalCode(status: number, code: string, at: number): void {
    const b = this.bucket(at);
    const byStatus = `http_${status}`;
    const left = (b.refusals.get(byStatus) ?? 0) - 1;
    if (left > 0) b.refusals.set(byStatus, left);
    else b.refusals.delete(byStatus);
    this.refused(b, /^[a-z0-9_]{1,64}$/.test(code) ? code : 'other');
  }

  private refused(b: ActivityHour, code: string): void {
    const key = b.refusals.has(code) || b.refusals.size < MAX_REFUSAL_CODES - 1 ? code : 'other';
    b.refusals.set(key, (b.refusals.get(key) ?? 0) + 1);
  }

  /** Add the cache's hits and misses since the last sample to the current hour. */
  sampleCache(): void {
    if (!this.cache) return;
    const { hits, misses } = this.cache;
    const b = this.bucket(this.now());
    b.cacheHits += Math.max(0, hits - this.seenCache.hits);
    b.cacheMisses += Math.max(0, misses - this.seenCache.misses);
    this.seenCache = { hits, misses };
  }

  /** The kept hours from `hoursBack` hours ago until now, oldest first. */
  recent(hoursBack: number): ActivityHour[] {
    this.sampleCache();
    const since = this.now() - hoursBack * HOUR_MS;
    return [...this.hours.values()].filter((b) => b.hour > since - HOUR_MS).sort((a, b) => a.hour - b.hour);
  }
}

type Fetch = Hono['fetch'];

/** `fetch` with every request to a surface counted in `activity` (see the module comment). */
export function countedFetch(fetch: Fetch, activity: Activity, now: () => number): Fetch {
  const note = (surface: Surface, res: Response) => {
    activity.count(surface, res.status);
    if (res.status >= 400 && res.headers.get('content-type')?.includes('json')) {
      const at = now();
      res
        .clone()
        .json()
        .then((b: { error?: { code?: unknown } }) => {
          if (typeof b?.error?.code === 'string') activity.refusalCode(res.status, b.error.code, at);
        })
        .catch(() => {});
    }
    return res;
  };
  return (req, env, ctx) => {
    const res = fetch(req, env, ctx);
    const surface = SURFACE_OF_PATH.get(pathOf(req.url));
    if (!surface) return res;
    return 'then' in res ? res.then((r) => note(surface, r)) : note(surface, res);
  };
}

/** The path of an absolute URL without parsing it whole (the counter runs on every request). */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}
