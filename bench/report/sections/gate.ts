/**
 * bench/gate on the performance page: enforce against the raw durable compare-and-set on the
 * same store (target ≤ 2× at p99), the hot path against an ungated invoke, and enforce with N
 * concurrent enforcers against one enforcer on the same store (latency and throughput).
 */
import { chartOf, lineChart } from '../charts.js';
import { type Extracted, type Figure, numberOf, percentilesOf, present, ratioFigure, recordOf, recordsOf } from '../figures.js';

/** Per store: enforce p50/p99 to the raw durable CAS's, the hot path's p50 to an ungated invoke's. */
function perStore(result: unknown): (Figure | null)[] {
  const figures: (Figure | null)[] = [];
  for (const r of recordsOf(recordOf(result)?.results)) {
    const store = String(r.store ?? 'store');
    const pairs = [
      ['enforce', 'raw_durable_cas', 'the raw durable compare-and-set, same store (same run)'],
      ['hot_path', 'ungated_invoke', 'an ungated invoke (same run)'],
    ] as const;
    for (const [measured, baseline, baselineName] of pairs) {
      const base = new Map(percentilesOf(r[baseline]));
      for (const [p, ms] of percentilesOf(r[measured])) {
        const b = base.get(p);
        // The hot path is compared at p50, as the bench's summary does (its p99 is the store's).
        if (b === undefined || (p !== 'p50' && p !== 'p99') || (measured === 'hot_path' && p !== 'p50')) continue;
        const target = measured === 'enforce' && p === 'p99' && store !== 'memory' ? { target: '≤ 2×', headline: true } : {};
        figures.push(
          ratioFigure({
            name: `${store}: ${measured.replace('_', ' ')} ${p}`,
            value: ms,
            unit: 'ms',
            baseline: baselineName,
            baseline_value: b,
            better: 'lower',
            ...target,
          }),
        );
      }
    }
  }
  return figures;
}

/**
 * The concurrent rows (`concurrent`: enforcers, enforce stats, throughput) by store; the bench
 * runs them on PostgreSQL, where a row names no store.
 */
function concurrency(result: unknown): { figures: (Figure | null)[]; points: { x: number; y: number; series: string }[] } {
  const rows = recordsOf(recordOf(result)?.concurrent).filter((c) => numberOf(c.enforcers) !== undefined);
  const storeOf = (c: Record<string, unknown>) => String(c.store ?? 'postgres');
  const figures: (Figure | null)[] = [];
  const points: { x: number; y: number; series: string }[] = [];
  for (const c of rows) {
    const one = rows.find((o) => o.enforcers === 1 && storeOf(o) === storeOf(c));
    const stats = new Map(percentilesOf(c.enforce));
    for (const [p, ms] of stats) points.push({ x: c.enforcers as number, y: ms, series: `${storeOf(c)} ${p}` });
    if (!one || one === c) continue;
    const base = new Map(percentilesOf(one.enforce));
    const name = `${storeOf(c)}: enforce with ${c.enforcers} concurrent enforcers`;
    const baseline = `1 enforcer, same store (same run)`;
    for (const p of ['p50', 'p99']) {
      const [ms, b] = [stats.get(p), base.get(p)];
      if (ms !== undefined && b !== undefined)
        figures.push(
          ratioFigure({
            name: `${name}, ${p}`,
            value: ms,
            unit: 'ms',
            baseline,
            baseline_value: b,
            better: 'lower',
            ...(p === 'p99' ? { headline: true, ...(storeOf(c) === 'postgres' ? { target: 'p99 ≤ 5 ms' } : {}) } : {}),
          }),
        );
    }
    const [t, tb] = [numberOf(c.throughput_per_s), numberOf(one.throughput_per_s)];
    if (t !== undefined && tb !== undefined)
      figures.push(
        ratioFigure({
          name: `${name}, throughput`,
          value: Math.round(t),
          unit: 'enforces/s',
          baseline,
          baseline_value: Math.round(tb),
          better: 'higher',
        }),
      );
  }
  return { figures, points };
}

/** The figures and the enforce-latency-vs-concurrency chart of a bench/gate result. */
export function gate(result: unknown): Extracted {
  const { figures, points } = concurrency(result);
  const charts = chartOf('concurrency', 'Enforce latency vs concurrent enforcers', points, (data) =>
    lineChart('Gate enforce latency vs concurrent enforcers (ms)', data, { x: 'concurrent enforcers', y: 'ms', xType: 'ordinal' }),
  );
  return { figures: present([...perStore(result), ...figures]), charts };
}
