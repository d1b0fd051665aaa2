/**
 * bench/platform on the performance page: each row's throughput, p99 and server CPU per request
 * against its baseline row (a row's `baseline` member naming it, else the row named
 * `… (baseline)`: the single-domain node in the same run), and throughput against the tenant
 * count the row's name gives.
 */
import { chartOf, lineChart } from '../charts.js';
import { type Extracted, type Figure, numberOf, present, ratioFigure, recordOf, recordsOf } from '../figures.js';

/** The tenant count a row names (`platform, 10,000 tenants …` → 10000, `1,000 cold tenants` → 1000), or undefined. */
export function tenantsOf(name: string): number | undefined {
  const m = /([\d,]+) (?:[a-z]+ )?tenants?/.exec(name);
  return m ? Number((m[1] as string).replaceAll(',', '')) : undefined;
}

const METRICS = [
  ['rps', 'throughput', 'req/s', 'higher'],
  ['p99_ms', 'p99', 'ms', 'lower'],
  ['server_cpu_ms_per_req', 'server CPU per request', 'ms', 'lower'],
] as const;

/** The figures and the throughput-vs-tenants chart of a bench/platform result. */
export function platform(result: unknown): Extracted {
  const rows = recordsOf(recordOf(result)?.rows).filter((r) => typeof r.row === 'string' && numberOf(r.rps) !== undefined);
  const named = new Map(rows.map((r) => [r.row as string, r]));
  const fallback = rows.find((r) => String(r.row).includes('(baseline)')) ?? rows[0];
  const figures: (Figure | null)[] = [];
  const points: { x: number; y: number; series: string }[] = [];
  for (const r of rows) {
    const base = (typeof r.baseline === 'string' ? named.get(r.baseline) : undefined) ?? fallback;
    if (!base || base === r) continue;
    const tenants = tenantsOf(r.row as string);
    for (const [key, what, unit, better] of METRICS) {
      const [v, b] = [numberOf(r[key]), numberOf(base[key])];
      if (v === undefined || b === undefined) continue;
      const target = key === 'rps' && tenants !== undefined ? { target: '≥ 0.8×', headline: true } : {};
      figures.push(
        ratioFigure({
          name: `${r.row}: ${what}`,
          value: v,
          unit,
          baseline: `${base.row} (same run)`,
          baseline_value: b,
          better,
          ...target,
        }),
      );
    }
    if (tenants !== undefined)
      points.push({
        x: tenants,
        y: (r.rps as number) / (base.rps as number),
        series: /postgres/i.test(r.row as string) ? 'PostgreSQL' : 'SQLite',
      });
  }
  const charts = chartOf('tenants', 'Platform throughput vs tenant count', points, (data) =>
    lineChart('Platform throughput vs tenant count (ratio to the single-domain node, same run)', data, {
      x: 'tenants (log)',
      y: 'throughput ÷ node',
      xLog: true,
      rule: 1,
    }),
  );
  return { figures: present(figures), charts };
}
