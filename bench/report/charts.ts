/**
 * The performance page's charts: Vega-Lite specs, compiled with `vega-lite` and rendered to SVG
 * headless with `vega` (`View.toSVG()`, no browser, no canvas). One spec builder per kind of
 * chart the page shows; the sections fill them with their data.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Chart } from './figures.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v5.json';
/** Fixed fonts and sizes so an SVG changes only when its numbers do. */
const CONFIG = {
  font: 'sans-serif',
  view: { stroke: null },
  axis: { labelLimit: 360 },
  axisY: { labelLimit: 360 },
  legend: { labelLimit: 360 },
} as const;

/** Render a Vega-Lite spec to SVG text. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Horizontal bars of `value` per `label`, in the order given, coloured by `group`, each labelled with `note`. */
export function barChart(title: string, rows: { label: string; value: number; group: string; note: string }[], axis: string): TopLevelSpec {
  const y = { field: 'label', type: 'nominal', sort: null, title: null } as const;
  return {
    $schema: SCHEMA,
    title,
    config: CONFIG,
    data: { values: rows },
    width: 420,
    layer: [
      {
        mark: 'bar',
        encoding: { y, x: { field: 'value', type: 'quantitative', title: axis }, color: { field: 'group', type: 'nominal', title: null } },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4 },
        encoding: { y, x: { field: 'value', type: 'quantitative' }, text: { field: 'note', type: 'nominal' } },
      },
    ],
  };
}

/**
 * Lines with points of `y` over `x`, one line per `series`; optionally one small chart per
 * `facet` (columns of three), a log `y` scale and a dashed rule at `rule` (the baseline).
 */
export function lineChart(
  title: string,
  points: { x: number | string; y: number; series: string; facet?: string }[],
  opts: { x: string; y: string; xType?: 'quantitative' | 'ordinal'; xLog?: boolean; yLog?: boolean; rule?: number },
): TopLevelSpec {
  const x = { field: 'x', type: opts.xType ?? 'quantitative', title: opts.x, ...(opts.xLog ? { scale: { type: 'log' } } : {}) } as const;
  const y = { field: 'y', type: 'quantitative', title: opts.y, ...(opts.yLog ? { scale: { type: 'log' } } : {}) } as const;
  const layer: TopLevelSpec[] = [
    { mark: { type: 'line', point: true }, encoding: { x, y, color: { field: 'series', type: 'nominal', title: null } } } as TopLevelSpec,
  ];
  if (opts.rule !== undefined) {
    layer.push({
      data: { values: [{ y: opts.rule }] },
      mark: { type: 'rule', strokeDash: [4, 4] },
      encoding: { y: { field: 'y', type: 'quantitative' } },
    } as TopLevelSpec);
  }
  const faceted = points.some((p) => p.facet !== undefined);
  const inner = { width: faceted ? 200 : 420, height: faceted ? 150 : 240, layer };
  return (
    faceted
      ? {
          $schema: SCHEMA,
          title,
          config: CONFIG,
          data: { values: points },
          facet: { field: 'facet', type: 'nominal', title: null },
          columns: 3,
          spec: inner,
        }
      : { $schema: SCHEMA, title, config: CONFIG, data: { values: points }, ...inner }
  ) as TopLevelSpec;
}

/** The chart `id` drawn from `data` by `spec`, or none when the result gave no data for it. */
export function chartOf<T>(id: string, title: string, data: T[], spec: (data: T[]) => TopLevelSpec): Chart[] {
  return data.length ? [{ id, title, spec: spec(data) }] : [];
}
