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
 * One chart as an SVG element named by `title` (the table beside it carries the numbers): a
 * Vega-Lite spec with `rows` inline, drawn 320 wide and scaled by the page's stylesheet (the SVG
 * has a viewBox), so it fits a 390 px phone.
 */
export async function renderChart(
  rows: Row[],
  title: string,
  mark: string | { type: string; point?: boolean },
  encoding: object,
): Promise<string> {
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: 320,
    height: 140,
    data: { values: rows },
    config: { font: 'sans-serif', view: { stroke: null } },
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

const DAY_AXIS = { field: 'day', type: 'ordinal', title: 'day (UTC)' };

export const offersChart = (rows: Row[]) =>
  renderChart(rows, 'Offer requests per surface per day', 'bar', {
    x: DAY_AXIS,
    y: { field: 'requests', type: 'quantitative', title: 'offer requests' },
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
    y: { field: 'code', type: 'nominal', title: 'code' },
    x: { field: 'refusals', type: 'quantitative', title: 'refusals' },
  });
