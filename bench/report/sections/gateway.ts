/**
 * bench/gateway and bench/gate-adapters on the performance page: a latency distribution against
 * the same call made directly, in the same run.
 */
import { chartOf, lineChart } from '../charts.js';
import { type Extracted, type Figure, labelOf, percentilesOf, present, ratioFigure, recordOf, recordsOf } from '../figures.js';

/**
 * A row of two latency distributions, the measured one and its baseline (`direct`): bench/gateway
 * (the proxied call vs the same call sent directly) and bench/gate-adapters (gated vs direct).
 * Each percentile the bench wrote is a figure.
 */
function pairedLatency(result: unknown, rowsKey: string, baselineName: string, targets: Record<string, string>) {
  const figures: (Figure | null)[] = [];
  const points: { x: string; y: number; series: string; facet: string }[] = [];
  for (const row of recordsOf(recordOf(result)?.[rowsKey])) {
    const measuredKey = Object.keys(row).find((k) => k !== 'direct' && percentilesOf(row[k]).length > 0);
    if (!measuredKey || !percentilesOf(row.direct).length) continue;
    const label = labelOf(row);
    const direct = new Map(percentilesOf(row.direct));
    for (const [p, ms] of percentilesOf(row[measuredKey])) {
      const base = direct.get(p);
      if (base === undefined) continue;
      // The targets are stated for the gate's own path on SQLite: its enforce rows' p99 is the headline.
      const headline = p === 'p99' && row.store === 'sqlite' && (row.mode ?? 'enforce') === 'enforce';
      figures.push(
        ratioFigure({
          name: `${label}: ${measuredKey} ${p}`,
          value: ms,
          unit: 'ms',
          baseline: baselineName,
          baseline_value: base,
          better: 'lower',
          ...(targets[p] ? { target: `${targets[p]} (added: ${(ms - base).toFixed(2)} ms)` } : {}),
          ...(headline ? { headline } : {}),
        }),
      );
      points.push({ x: p, y: ms, series: measuredKey, facet: label }, { x: p, y: base, series: 'direct', facet: label });
    }
  }
  return { figures: present(figures), points };
}

/** bench/gateway: the proxied call vs the same call sent directly, per side, store and mode. */
export function gateway(result: unknown): Extracted {
  const { figures, points } = pairedLatency(result, 'results', 'the same call sent directly, interleaved (same run)', {
    p50: 'added ≤ 1.5 ms',
    p99: 'added ≤ 4 ms',
  });
  const charts = chartOf('latency', 'Gate proxy vs direct: latency by percentile', points, (data) =>
    lineChart('Gate proxy vs direct call: round-trip latency by percentile (ms, log)', data, {
      x: 'percentile',
      y: 'ms',
      xType: 'ordinal',
      yLog: true,
    }),
  );
  return { figures, charts };
}

/** bench/gate-adapters: each framework adapter's gated call vs the tool called directly. */
export function gateAdapters(result: unknown): Extracted {
  return { figures: pairedLatency(result, 'rows', 'the tool called directly (same run)', {}).figures, charts: [] };
}
