/**
 * Fleet health: the last hours of fleet.ts's samples as server-rendered charts (the node console's
 * Vega-Lite renderer: SVG made on the server, no script, no request elsewhere), each followed by
 * its numbers in a table — signatures per second, request latency p50/p99, failing feeds by host,
 * signing key ages, rotation progress, TLS contexts held.
 */
import { type ChartRow, chartNumbers, escapeHtml as e, page, pageContext, renderChart } from '@vrpkit/node';
import type { Hono } from 'hono';
import type { OperatorConsoleOptions } from './context.js';
import type { FleetSample } from './fleet.js';

/** Feed hosts plotted (the most failing ones now); the rest are summed as `other`. */
const MAX_FEED_HOSTS = 6;

const minute = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');
const MINUTE_MS = 60_000;
/** Minutes between time ticks: a chart takes the least giving at most `MAX_TIME_TICKS` over its rows' span. */
const TICK_STEPS_MIN = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];
const MAX_TIME_TICKS = 5;

/**
 * The time axis of a chart of `rows` (in time order), labelled `HH:MM` in UTC whatever the
 * server's time zone (a `utc` scale), with its ticks on whole minutes: left to Vega, a span of a
 * few minutes gets ticks every 15 s, each labelled with the same minute. The span is the chart's
 * own rows', not the samples': a series with no value in the first samples starts later, and a
 * tick before its start would not be drawn.
 */
function timeAxis(rows: readonly ChartRow[]) {
  const from = Number(rows[0]?.time ?? 0);
  const to = Number(rows.at(-1)?.time ?? from);
  const step = (TICK_STEPS_MIN.find((m) => (to - from) / (m * MINUTE_MS) < MAX_TIME_TICKS) ?? 1440) * MINUTE_MS;
  const values: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) values.push(t);
  // Rows all within one minute: one label, at the first.
  if (values.length === 0) values.push(from);
  return { field: 'time', type: 'temporal', title: 'time (UTC)', scale: { type: 'utc' }, axis: { format: '%H:%M', values } };
}

/** Long rows (time, series, value) of the samples' values `pick` names, nulls left out. */
function series(samples: readonly FleetSample[], pick: (s: FleetSample) => Record<string, number | null>): ChartRow[] {
  const rows: ChartRow[] = [];
  for (const s of samples)
    for (const [name, value] of Object.entries(pick(s)))
      if (value !== null) rows.push({ time: s.at, minute: minute(s.at), series: name, value });
  return rows;
}

function feedHosts(samples: readonly FleetSample[]): (s: FleetSample) => Record<string, number> {
  const last = samples[samples.length - 1]?.failingFeedsByHost ?? {};
  const top = Object.entries(last)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_FEED_HOSTS)
    .map(([h]) => h);
  // No feed failing now: one series of all hosts (zero now), so the plot says so rather than vanishing.
  if (top.length === 0) return (s) => ({ 'all hosts': Object.values(s.failingFeedsByHost).reduce((a, n) => a + n, 0) });
  return (s) => {
    const out: Record<string, number> = Object.fromEntries(top.map((h) => [h, 0]));
    for (const [h, n] of Object.entries(s.failingFeedsByHost))
      if (top.includes(h)) out[h] = n;
      else out.other = (out.other ?? 0) + n;
    return out;
  };
}

interface Plot {
  title: string;
  unit: string;
  pick: (s: FleetSample) => Record<string, number | null>;
}

function plots(samples: readonly FleetSample[]): Plot[] {
  return [
    { title: 'Signatures per second', unit: 'signatures/s', pick: (s) => ({ signatures: s.signaturesPerSecond }) },
    { title: 'Request latency', unit: 'ms', pick: (s) => ({ p50: s.p50Ms, p99: s.p99Ms }) },
    { title: 'Failing feeds by host', unit: 'feeds', pick: feedHosts(samples) },
    { title: 'Signing key ages', unit: 'days', pick: (s) => ({ oldest: s.oldestKeyDays, newest: s.newestKeyDays }) },
    {
      title: 'Rotation progress',
      unit: 'tenants',
      pick: (s) => ({
        'keys under a day old': s.rotatedLastDay,
        'enabled tenants': s.activeTenants,
        'retired keys still published': s.retainedKeys,
      }),
    },
    { title: 'TLS contexts held', unit: 'contexts', pick: (s) => ({ contexts: s.tlsContexts }) },
  ];
}

async function figure(samples: readonly FleetSample[], plot: Plot): Promise<string> {
  const rows = series(samples, plot.pick);
  const chart = rows.length
    ? await renderChart(
        rows,
        plot.title,
        { type: 'line', point: true },
        {
          x: timeAxis(rows),
          y: { field: 'value', type: 'quantitative', title: plot.unit },
          color: { field: 'series', type: 'nominal', title: null },
        },
      )
    : '';
  const table = chartNumbers(
    plot.title,
    rows.map((r) => ({ minute: r.minute ?? '', series: r.series ?? '', value: r.value ?? '' })),
    ['minute', 'series', 'value'],
  );
  return `<h2>${e(plot.title)}</h2><figure>${chart}<figcaption>${e(plot.title)} (${e(plot.unit)}), sampled each minute (UTC)</figcaption></figure>${table}`;
}

export function mountFleet(app: Hono, o: OperatorConsoleOptions): void {
  app.get('/fleet', async (c) => {
    const samples = o.fleet.recent();
    const intro = samples.length
      ? `<p>${samples.length} samples, from ${minute(samples[0]!.at)} to ${minute(samples[samples.length - 1]!.at)} UTC, of this serving process's metrics and the database's facts.</p>`
      : '<p>No sample yet: the first is taken when the console starts.</p>';
    const figures = [];
    for (const plot of plots(samples)) figures.push(await figure(samples, plot));
    return c.html(page(pageContext(c, 'fleet'), 'Fleet health', intro + figures.join('')));
  });
}
