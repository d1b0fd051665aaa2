/**
 * bench/surfaces on the performance page: round trips per second per surface, each to the plain
 * endpoint with the same cache setting (the row's `baseline`), and the server's CPU per round
 * trip likewise.
 */
import { barChart, chartOf } from '../charts.js';
import { type Extracted, type Figure, numberOf, present, ratioFigure, recordOf, recordsOf } from '../figures.js';

/** The figures and the requests-per-second chart of a bench/surfaces result. */
export function surfaces(result: unknown): Extracted {
  const rows = recordsOf(recordOf(result)?.rows).filter((r) => typeof r.surface === 'string' && numberOf(r.rps) !== undefined);
  const byName = new Map(rows.map((r) => [r.surface as string, r]));
  const baselineOf = (r: Record<string, unknown>) =>
    typeof r.baseline === 'string' ? r.baseline : String(r.surface).endsWith('cache off') ? 'plain, cache off' : 'plain';
  const figures: (Figure | null)[] = [];
  for (const r of rows) {
    const name = r.surface as string;
    const base = byName.get(baselineOf(r));
    if (!base || base === r) continue;
    const target = numberOf(r.target_ratio_min);
    figures.push(
      ratioFigure({
        name: `${name}: round trips/s`,
        value: r.rps as number,
        unit: 'req/s',
        baseline: `${base.surface} (same run)`,
        baseline_value: base.rps as number,
        better: 'higher',
        ...(target === undefined ? {} : { target: `≥ ${target}×`, headline: true }),
      }),
    );
    const cpu = numberOf(r.server_cpu_us);
    const baseCpu = numberOf(base.server_cpu_us);
    if (cpu !== undefined && baseCpu !== undefined)
      figures.push(
        ratioFigure({
          name: `${name}: server CPU per round trip`,
          value: cpu,
          unit: 'µs',
          baseline: `${base.surface} (same run)`,
          baseline_value: baseCpu,
          better: 'lower',
          // On a loaded machine a row's CPU per call moves less than its throughput: both are on the trend.
          ...(target === undefined ? {} : { headline: true }),
        }),
      );
  }
  const bars = rows.map((r) => {
    const base = byName.get(baselineOf(r));
    const ratio = base && numberOf(base.rps) ? (r.rps as number) / (base.rps as number) : undefined;
    const group = base === r ? 'baseline (plain endpoint)' : String(r.surface).startsWith('floor') ? 'floor (no protocol code)' : 'surface';
    return { label: String(r.surface), value: r.rps as number, group, note: ratio === undefined ? '' : `${ratio.toFixed(2)}×` };
  });
  const charts = chartOf('rps', 'Requests per second per surface', bars, (data) =>
    barChart('Requests per second per surface (ratio to the plain endpoint, same cache setting)', data, 'round trips per second'),
  );
  return { figures: present(figures), charts };
}
