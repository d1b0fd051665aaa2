/**
 * bench/node-offer on the performance page: each row's offers per second against the bare JSON
 * endpoint, and its server CPU per request against the static offer-sized body, both served by
 * the same stack in the same run (the bench's two baselines), each row's median round.
 */
import { barChart, chartOf } from '../charts.js';
import { type Extracted, type Figure, numberOf, present, ratioFigure, recordOf, recordsOf } from '../figures.js';

/** The bench's two baselines, by the names its rows carry. */
const BARE = 'bare JSON (baseline)';
const STATIC = 'static offer-sized body (baseline 2)';
/** Issue 37's record of the cache-hit targets (met last round), kept as the trend's headline. */
const HIT_TARGETS: Record<string, string> = { [BARE]: '≥ 0.6×', [STATIC]: '≥ 0.9×' };

/** The figures and the requests-per-second chart of a bench/node-offer result. */
export function nodeOffer(result: unknown): Extracted {
  const rows = recordsOf(recordOf(result)?.rows)
    .map((r) => ({ name: r.name, median: recordOf(r.median) }))
    .filter(
      (r): r is { name: string; median: Record<string, unknown> } => typeof r.name === 'string' && numberOf(r.median?.rps) !== undefined,
    );
  const byName = new Map(rows.map((r) => [r.name, r.median]));
  const [bare, same] = [byName.get(BARE), byName.get(STATIC)];
  const figures: (Figure | null)[] = [];
  for (const { name, median } of rows) {
    const hit = name === 'signed offer, cache hit';
    for (const [baseName, base] of [
      [BARE, bare],
      [STATIC, same],
    ] as const) {
      if (!base || base === median) continue;
      const target = hit ? { target: HIT_TARGETS[baseName], headline: true } : {};
      figures.push(
        ratioFigure({
          name: `${name}: offers/s`,
          value: Math.round(median.rps as number),
          unit: 'req/s',
          baseline: `${baseName} (same run)`,
          baseline_value: Math.round(base.rps as number),
          better: 'higher',
          ...target,
        }),
      );
    }
    const [cpu, baseCpu] = [numberOf(median.server_cpu_us_per_request), numberOf(same?.server_cpu_us_per_request)];
    if (same && same !== median && cpu !== undefined && baseCpu !== undefined)
      figures.push(
        ratioFigure({
          name: `${name}: server CPU per request`,
          value: Math.round(cpu),
          unit: 'µs',
          baseline: `${STATIC} (same run)`,
          baseline_value: Math.round(baseCpu),
          better: 'lower',
        }),
      );
  }
  const bars = rows.map(({ name, median }) => ({
    label: name,
    value: Math.round(median.rps as number),
    group: name.includes('baseline') ? 'baseline (same stack)' : name.includes('floor') ? 'floor' : 'signed offer',
    note: bare ? `${((median.rps as number) / (bare.rps as number)).toFixed(2)}×` : '',
  }));
  const charts = chartOf('rps', 'Offers per second per row', bars, (data) =>
    barChart('Node offer endpoint: requests per second (ratio to the bare JSON endpoint, same run)', data, 'requests per second'),
  );
  return { figures: present(figures), charts };
}
