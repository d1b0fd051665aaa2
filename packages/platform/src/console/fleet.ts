/**
 * Fleet health over the last hours (issue 35 item 2): once a minute the console samples the
 * metrics the platform already exports (its prom-client registry: signatures made, request
 * latency, TLS contexts held, signing key ages) and a few facts of the database (fleet.ts
 * `fleetFacts`: failing feeds by host, rotation progress), and keeps the samples in a bounded
 * ring in memory (`MAX_FLEET_SAMPLES`, six hours): a restart starts the plots over, as a scrape
 * of a fresh process does. Nothing a client sent is kept: counts, seconds and feed hosts only.
 */
import type { Kysely } from 'kysely';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { PlatformDatabase } from '../store/schema.js';
import { fleetFacts } from './reads.js';

/** Samples kept: one a minute for six hours. */
export const MAX_FLEET_SAMPLES = 360;
export const FLEET_SAMPLE_INTERVAL_MS = 60_000;

export interface FleetSample {
  /** When it was taken (ms since the epoch). */
  at: number;
  /** Signatures per second since the sample before (null for the first). */
  signaturesPerSecond: number | null;
  /** Request latency quantiles (ms) over the requests since the sample before, from the exported histogram; null without requests. */
  p50Ms: number | null;
  p99Ms: number | null;
  tlsContexts: number;
  oldestKeyDays: number | null;
  newestKeyDays: number | null;
  failingFeedsByHost: Record<string, number>;
  activeTenants: number;
  rotatedLastDay: number;
  retainedKeys: number;
}

type Values = MetricValue<string>[];

/** The values of the metric `name` in a registry's JSON. */
const valuesOf = (metrics: MetricObjectWithValues<MetricValue<string>>[], name: string): Values =>
  metrics.find((m) => m.name === name)?.values ?? [];

/** Cumulative bucket counts of a histogram by upper bound (`le`), `+Inf` last. */
function buckets(values: Values): [number, number][] {
  return values
    .filter((v) => (v as { metricName?: string }).metricName?.endsWith('_bucket'))
    .map((v): [number, number] => [v.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(v.labels.le), v.value])
    .sort((a, b) => a[0] - b[0]);
}

/**
 * The `q` quantile of the observations between two cumulative bucket snapshots, interpolated
 * linearly within its bucket as Prometheus's `histogram_quantile` does; the highest finite bound
 * when it falls in `+Inf`; null without observations.
 */
export function histogramQuantile(q: number, before: [number, number][], after: [number, number][]): number | null {
  const counts = after.map(([le, n], i) => [le, n - (before[i]?.[1] ?? 0)] as const);
  const total = counts[counts.length - 1]?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, n] of counts) {
    if (n >= rank) {
      if (le === Number.POSITIVE_INFINITY) return lower;
      return lower + (le - lower) * ((rank - below) / Math.max(n - below, 1e-9));
    }
    lower = le;
    below = n;
  }
  return lower;
}

export class FleetHistory {
  private readonly samples: FleetSample[] = [];
  private previous: { at: number; signatures: number; latency: [number, number][] } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly db: Kysely<PlatformDatabase>,
    private readonly now: () => number,
  ) {}

  /** Take one sample now (the registry's collectors run: the database gauges are read once). */
  async sample(): Promise<FleetSample> {
    const at = this.now();
    const [metrics, facts] = await Promise.all([this.registry.getMetricsAsJSON(), fleetFacts(this.db, at)]);
    const signatures = valuesOf(metrics, 'vrp_platform_signatures_total')[0]?.value ?? 0;
    const latency = buckets(valuesOf(metrics, 'vrp_platform_request_duration_seconds'));
    const ages = valuesOf(metrics, 'vrp_platform_signing_key_age_seconds');
    const days = (which: string) => {
      const v = ages.find((a) => a.labels.which === which)?.value;
      return v === undefined ? null : Math.round((v / 86_400) * 100) / 100;
    };
    const prev = this.previous;
    const ms = (s: number | null) => (s === null ? null : Math.round(s * 100_000) / 100);
    const sample: FleetSample = {
      at,
      signaturesPerSecond: prev && at > prev.at ? Math.round(((signatures - prev.signatures) / ((at - prev.at) / 1000)) * 100) / 100 : null,
      p50Ms: ms(histogramQuantile(0.5, prev?.latency ?? [], latency)),
      p99Ms: ms(histogramQuantile(0.99, prev?.latency ?? [], latency)),
      tlsContexts: valuesOf(metrics, 'vrp_platform_tls_contexts')[0]?.value ?? 0,
      oldestKeyDays: days('oldest'),
      newestKeyDays: days('newest'),
      ...facts,
    };
    this.previous = { at, signatures, latency };
    this.samples.push(sample);
    if (this.samples.length > MAX_FLEET_SAMPLES) this.samples.shift();
    return sample;
  }

  /** The samples kept, oldest first. */
  recent(): readonly FleetSample[] {
    return this.samples;
  }

  /** Sample now and every `intervalMs`; a failed sample is reported and the next one tried. */
  start(onError: (e: unknown) => void, intervalMs = FLEET_SAMPLE_INTERVAL_MS): void {
    const take = () => void this.sample().catch(onError);
    take();
    this.timer = setInterval(take, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
