/**
 * The activity page: the last days of activity.ts's hourly counters as three server-rendered
 * charts (charts.ts), each followed by its numbers in a table for a screen reader or a copy.
 */
import type { Hono } from 'hono';
import { escapeHtml as e } from '../http/html.js';
import { cacheChart, cacheRatioRows, offersChart, offersPerSurfaceRows, refusalRows, refusalsChart } from './charts.js';
import { type ConsoleDeps, pageContext } from './context.js';
import { page, scrollable } from './pages.js';

/** Days the page shows. */
export const ACTIVITY_PAGE_DAYS = 7;

type Row = Record<string, string | number>;

/** A chart's numbers as a table under a disclosure, for a screen reader or a copy. */
export function chartNumbers(caption: string, rows: Row[], columns: string[]): string {
  if (rows.length === 0) return '<p>Nothing counted yet.</p>';
  const head = columns.map((k) => `<th scope="col">${e(k)}</th>`).join('');
  const body = rows.map((r) => `<tr>${columns.map((k) => `<td>${e(r[k] ?? '')}</td>`).join('')}</tr>`).join('');
  return `<details><summary>${e(caption)}: the numbers</summary>${scrollable(
    caption,
    `<table><caption>${e(caption)}</caption>
<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
  )}</details>`;
}

export function mountActivity(app: Hono, x: ConsoleDeps): void {
  app.get('/activity', async (c) => {
    const hours = x.activity.recent(ACTIVITY_PAGE_DAYS * 24);
    const offers = offersPerSurfaceRows(hours).filter((r) => Number(r.requests) > 0);
    const ratio = cacheRatioRows(hours);
    const refusals = refusalRows(hours);
    const figure = async (title: string, rows: Row[], chart: (rows: Row[]) => Promise<string>, columns: string[]) =>
      `<h2>${e(title)}</h2><figure>${rows.length ? await chart(rows) : ''}<figcaption>${e(title)}, last ${ACTIVITY_PAGE_DAYS} days (UTC, counted per hour since the node started)</figcaption></figure>${chartNumbers(
        title,
        rows,
        columns,
      )}`;
    const body = [
      await figure('Offer requests per surface', offers, offersChart, ['day', 'surface', 'requests']),
      await figure('Signed-offer cache hit ratio', ratio, cacheChart, ['day', 'ratio']),
      await figure('Refusals by code', refusals, refusalsChart, ['code', 'refusals']),
    ].join('');
    return c.html(page(pageContext(c, 'activity'), 'Activity', body));
  });
}
