/**
 * The activity page's charts: Vega-Lite specifications compiled and rendered to SVG on the node
 * (vega's headless `View`, renderer `none`), so the page needs no script and makes no request
 * elsewhere. Each chart is drawn from the aggregated hours of activity.ts only.
 */
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { type ActivityHour, SURFACES } from './activity.js';

const DAY_MS = 86_400_000;
const day = (t: number) => new Date(t - (t % DAY_MS)).toISOString().slice(0, 10);

/** Rows of one chart: a category, a value, and where it goes on the x axis. */
export type ChartRow = Record<string, string | number>;
type Row = ChartRow;

/**
 * Text sizes and the legend's place, chosen for a 390 px phone: the page's stylesheet scales an
 * SVG down to the column's width (366 px there), so anything drawn beside the plot shrinks every
 * label with it. With the legend under the plot and the whole chart, axes included, fitted to
 * `CHART_WIDTH` (narrower than that column), its 12 px labels stay 12 px (WCAG 1.4.4 asks text
 * to stay legible; 6 px axis labels beside a right-hand legend were not).
 */
const PHONE_CONFIG = {
  font: 'sans-serif',
  view: { stroke: null },
  axis: { labelFontSize: 12, titleFontSize: 12 },
  // One entry a line: headless Vega estimates text widths (no canvas), generously, and cut two-column labels mid-word.
  legend: { orient: 'bottom', direction: 'vertical', labelFontSize: 12, titleFontSize: 12, labelLimit: 300 },
} as const;
/** Width of a whole chart (plot, axes and their titles) in px: `autosize: fit-x` shrinks the plot to make room for long labels. */
const CHART_WIDTH = 350;

/**
 * One chart as an SVG element named by `title` (the table beside it carries the numbers): a
 * Vega-Lite spec with `rows` inline, `CHART_WIDTH` wide with its legend underneath (`PHONE_CONFIG`).
 */
export async function renderChart(
  rows: Row[],
  title: string,
  mark: string | { type: string; point?: boolean },
  encoding: object,
): Promise<string> {
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: CHART_WIDTH,
    height: 140,
    autosize: { type: 'fit-x', contains: 'padding' },
    data: { values: rows },
    config: PHONE_CONFIG,
    mark,
    encoding,
  } as TopLevelSpec;
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    const out = await view.toSVG();
    return out.replace('<svg ', `<svg role="img" aria-label="${title.replace(/[^A-Za-z0-9 ,()-]/g, '')}" `);
  } finally {
    view.finalize();
  }
}

/** Offers asked per surface per day (stacked bars). */
export function offersPerSurfaceRows(hours: ActivityHour[]): Row[] {
  const rows = new Map<string, Row>();
  for (const h of hours)
    for (const s of SURFACES) {
      const key = `${day(h.hour)} ${s}`;
      const row = rows.get(key) ?? { day: day(h.hour), surface: s, requests: 0 };
      row.requests = Number(row.requests) + h.requests[s];
      rows.set(key, row);
    }
  return [...rows.values()];
}

/** The signed-offer cache's hit ratio per day (days with no offer asked are left out). */
export function cacheRatioRows(hours: ActivityHour[]): Row[] {
  const days = new Map<string, { hits: number; misses: number }>();
  for (const h of hours) {
    const d = days.get(day(h.hour)) ?? { hits: 0, misses: 0 };
    d.hits += h.cacheHits;
    d.misses += h.cacheMisses;
    days.set(day(h.hour), d);
  }
  return [...days]
    .filter(([, d]) => d.hits + d.misses > 0)
    .map(([d, { hits, misses }]) => ({ day: d, ratio: Math.round((hits / (hits + misses)) * 1000) / 1000 }));
}

/** Refusals by code over the hours shown. */
export function refusalRows(hours: ActivityHour[]): Row[] {
  const codes = new Map<string, number>();
  for (const h of hours) for (const [code, n] of h.refusals) codes.set(code, (codes.get(code) ?? 0) + n);
  return [...codes].map(([code, refusals]) => ({ code, refusals }));
}

/** Days upright as month-day (the title says UTC; the year is in the table): seven fit across the plot at 12 px. */
const DAY_AXIS = { field: 'day', type: 'ordinal', title: 'day (UTC)', axis: { labelAngle: 0, labelExpr: 'slice(datum.label, 5)' } };

/**
 * A count's axis: whole numbers only, so no tick count above the scale's span (Vega would put
 * ticks at 0.5 on a scale of one; its `tickMinStep` is not honoured under `autosize: fit-x`).
 */
const countAxis = (scale: 'x' | 'y') => ({ format: 'd', tickCount: { expr: `min(5, span(domain('${scale}')))` } });

export const offersChart = (rows: Row[]) =>
  renderChart(rows, 'Offer requests per surface per day', 'bar', {
    x: DAY_AXIS,
    y: { field: 'requests', type: 'quantitative', title: 'offer requests', axis: countAxis('y') },
    color: { field: 'surface', type: 'nominal', scale: { domain: [...SURFACES] } },
  });

export const cacheChart = (rows: Row[]) =>
  renderChart(
    rows,
    'Signed-offer cache hit ratio per day',
    { type: 'line', point: true },
    {
      x: DAY_AXIS,
      y: { field: 'ratio', type: 'quantitative', title: 'cache hit ratio', scale: { domain: [0, 1] } },
    },
  );

export const refusalsChart = (rows: Row[]) =>
  renderChart(rows, 'Refusals by code', 'bar', {
    // The heading names the axis; without its title the codes keep the width.
    y: { field: 'code', type: 'nominal', title: null, axis: { labelLimit: 180 } },
    x: { field: 'refusals', type: 'quantitative', title: 'refusals', axis: countAxis('x') },
  });
