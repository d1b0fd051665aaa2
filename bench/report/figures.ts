/**
 * A figure on the performance page: one measured value as a ratio to a baseline measured in the
 * same run, the baseline named (machines differ and are shared, so only in-run ratios compare
 * across runs). The helpers read a bench's result defensively: a bench's result format is its
 * own, and a member it does not write is left out, never guessed.
 */
import { isRecord } from '@vrpkit/core';
import type { TopLevelSpec } from 'vega-lite';

export interface Figure {
  /** What was measured: the bench's row and the quantity. */
  name: string;
  /** The value in `unit`, or null where the bench writes only the ratio. */
  value: number | null;
  unit: string;
  /** The in-run baseline the ratio is taken to, by the bench's own name for it. */
  baseline: string;
  baseline_value: number | null;
  /** `value / baseline_value` (or the bench's own ratio), two decimals. */
  ratio: number;
  /** Which way is better for this ratio, where the section knows it. */
  better?: 'higher' | 'lower';
  /** The target as the issue states it (`≥ 0.5×`), where there is one. */
  target?: string;
  /** Shown on the trend chart across the kept runs. */
  headline?: boolean;
}

/** A chart of one section: a Vega-Lite spec rendered to `docs/performance/<id>.svg`. */
export interface Chart {
  id: string;
  title: string;
  spec: TopLevelSpec;
}

/** What a bench's result gives the page. */
export interface Extracted {
  figures: Figure[];
  charts: Chart[];
}

/** A result's member as a record, or undefined. */
export const recordOf = (v: unknown): Record<string, unknown> | undefined => (isRecord(v) ? v : undefined);
/** A member as a finite number, or undefined. */
export const numberOf = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** The records of an array member (anything else in it skipped). */
export const recordsOf = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
/** Two decimals, as the page prints ratios. */
export const round2 = (v: number) => Math.round(v * 100) / 100;

/** Keep the figures that could be taken (a missing baseline gives none). */
export const present = (figures: (Figure | null)[]) => figures.filter((f): f is Figure => f !== null);

/** A figure from a measured value and its baseline's (null when the baseline is not a positive number). */
export function ratioFigure(
  f: Omit<Figure, 'ratio' | 'value' | 'baseline_value'> & { value: number; baseline_value: number },
): Figure | null {
  if (!(f.baseline_value > 0)) return null;
  return { ...f, value: f.value, baseline_value: f.baseline_value, ratio: round2(f.value / f.baseline_value) };
}

/** Members that are not a row's name: the row it is compared to, and ranges written as text (`0.68–0.71`). */
const NOT_NAMES = /^(baseline|baseline_row|.*_spread)$/;

/** A row's label: its string members joined (`stdio sqlite enforce`), as the bench named it. */
export function labelOf(row: Record<string, unknown>): string {
  return Object.entries(row)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '' && !NOT_NAMES.test(e[0]))
    .map(([, v]) => v)
    .join(' ');
}

/** The latency percentiles (`p50`, `p99`, `p999`) of a stats member, in order, with their values in ms. */
export function percentilesOf(stats: unknown): [string, number][] {
  const r = recordOf(stats);
  if (!r) return [];
  return Object.entries(r)
    .filter((e): e is [string, number] => /^p\d+$/.test(e[0]) && numberOf(e[1]) !== undefined)
    .sort((a, b) => percentileValue(a[0]) - percentileValue(b[0]));
}

/** `p50` → 50, `p99` → 99, `p999` → 99.9. */
export function percentileValue(key: string): number {
  const digits = key.slice(1);
  return digits.length <= 2 ? Number(digits) : Number(`${digits.slice(0, 2)}.${digits.slice(2)}`);
}

/** The baseline a ratio member names (`ratio_vs_bare` → `bare`, `rps_ratio_to_node` → `node`), else `fallback`. */
export function baselineFromKey(key: string, fallback: string): string {
  const m = /(?:ratio_(?:to|vs)_|(?:^|_)vs_|_over_)(.+)$/.exec(key);
  return m ? (m[1] as string).replaceAll('_', ' ') : fallback;
}

/** Members that hold a bench's rows: a row is named by its own label, not by them. */
const ROW_LISTS = new Set(['rows', 'results']);

/**
 * The figures of a result no section knows: every numeric member whose name says it is a ratio
 * (`ratio_to_plain`, `cost_ratio`, `vs_reference` under a ratio member), in rows or nested
 * objects, named by the row and the member, its baseline named by the member or the result's
 * own `baseline`. Values are not known here, only the ratios the bench took.
 */
export function genericFigures(result: unknown): Figure[] {
  const top = recordOf(result)?.baseline;
  const fallback = typeof top === 'string' ? top : 'the bench’s in-run baseline';
  const figures: Figure[] = [];
  // The baseline of a ratio member: the row's own `baseline` (`baseline_row`) member, else what the member's name says, else the result's.
  const baselineOf = (r: Record<string, unknown>, key: string) => {
    const own = r.baseline ?? r.baseline_row;
    if (typeof own === 'string') return own;
    const named = baselineFromKey(key, fallback);
    return named === 'baseline' ? fallback : named;
  };
  const visit = (value: unknown, path: string, ratioContext: string | null, depth: number) => {
    if (depth > 4) return;
    if (Array.isArray(value)) {
      value.forEach((row, i) => {
        if (isRecord(row)) visit(row, `${path}${path ? ' ' : ''}${labelOf(row) || i}`.trim(), null, depth + 1);
      });
      return;
    }
    const r = recordOf(value);
    if (!r) return;
    for (const [key, v] of Object.entries(r)) {
      // A target is what a figure is judged against, not a figure.
      if (key.startsWith('target')) continue;
      const isRatio = /ratio|(^|_)vs_/.test(key) && !/samples/.test(key);
      const n = numberOf(v);
      if (n !== undefined && (isRatio || ratioContext)) {
        const baseline = baselineOf(r, isRatio ? key : (ratioContext as string));
        figures.push({ name: `${path}${path ? ': ' : ''}${key}`, value: null, unit: '', baseline, baseline_value: null, ratio: round2(n) });
      } else if (typeof v === 'object' && v !== null) {
        // A list of rows is named by its rows, not by the member holding them.
        const inner = Array.isArray(v) && ROW_LISTS.has(key) ? path : path ? `${path} ${key}` : key;
        visit(v, inner, isRatio ? key : null, depth + 1);
      }
    }
  };
  visit(result, '', null, 0);
  return figures;
}
