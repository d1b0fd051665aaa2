/**
 * The calendar: a month grid of nights (free, booked, held, blocked by a feed, blocked by hand),
 * the host's own blocks with a form to add and remove one (`vrp node calendar block|unblock`),
 * and each feed's freshness as `/readyz` judges it (Core VRP v0.1 §7 `calendar_freshness`) with
 * "sync now" (`vrp node calendar sync`).
 */
import type { Hono } from 'hono';
import type { BookingRequestRecord } from '../booking/ports.js';
import { dayNumber } from '../dates.js';
import type { FeedReadiness } from '../health.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import type { BlockedRange, CalendarFeed } from '../store/store.js';
import { type ConsoleDeps, mountChange, pageContext } from './context.js';
import { formFields, link, type PageContext, page, scrollable, when } from './pages.js';

export const BLOCK_FORM: FormSpec = { action: '/calendar/block', bound: [] };
export const UNBLOCK_FORM: FormSpec = { action: '/calendar/unblock', bound: ['block_id'] };
export const SYNC_FORM: FormSpec = { action: '/calendar/sync', bound: [] };

/** What a night is, as the grid shows it. */
export type NightState =
  | { state: 'free' }
  | { state: 'booked' | 'held'; booking: string }
  | { state: 'feed'; feed: string }
  | { state: 'hand'; note: string | null };

const DAY_MS = 86_400_000;
const iso = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** Each night of `month` (YYYY-MM) and what holds it; a booking range is held or booked by its request's status. */
export function monthNights(month: string, blocks: BlockedRange[], bookings: Map<string, BookingRequestRecord>): [string, NightState][] {
  const first = dayNumber(`${month}-01`) as number;
  const [y, m] = month.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return Array.from({ length: days }, (_, i) => {
    const night = iso(first + i);
    const b = blocks.find((r) => r.start_date <= night && night < r.end_date);
    if (!b) return [night, { state: 'free' }];
    if (b.kind === 'import') return [night, { state: 'feed', feed: b.feed_name ?? '' }];
    if (b.kind === 'block') return [night, { state: 'hand', note: b.note }];
    return [night, { state: bookings.get(b.id)?.status === 'pending' ? 'held' : 'booked', booking: b.id }];
  });
}

const LABEL = { free: 'free', booked: 'booked', held: 'held', feed: 'blocked by feed', hand: 'blocked by hand' } as const;

function grid(p: PageContext, nights: [string, NightState][]): string {
  const lead = (new Date(`${nights[0]?.[0]}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday first
  const cells = [...Array<string>(lead).fill('<td></td>')];
  for (const [night, n] of nights) {
    // On a phone a column is ~50 px: the state in words, its feed's name, and a link to the request (the id is its accessible name).
    const detail =
      n.state === 'feed'
        ? ` ${e(n.feed)}`
        : n.state === 'booked' || n.state === 'held'
          ? ` <a href="${e(link(p, `/inbox/${encodeURIComponent(n.booking)}`))}" aria-label="request ${e(n.booking)}">request</a>`
          : '';
    cells.push(`<td class="${n.state}"><span class="day">${Number(night.slice(8))}</span>${LABEL[n.state]}${detail}</td>`);
  }
  while (cells.length % 7) cells.push('<td></td>');
  const rows = Array.from({ length: cells.length / 7 }, (_, i) => `<tr>${cells.slice(i * 7, i * 7 + 7).join('')}</tr>`).join('');
  const head = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => `<th scope="col">${d}</th>`).join('');
  return scrollable(
    'Month grid',
    `<table class="grid"><caption>Nights of ${e(nights[0]?.[0].slice(0, 7))}</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`,
  );
}

function handBlocks(p: PageContext, blocks: BlockedRange[]): string {
  const own = blocks.filter((b) => b.kind === 'block');
  const rows = own
    .map(
      (b) => `<li>${e(b.start_date)} → ${e(b.end_date)}${b.note ? ` <span class="guest">(${e(b.note)})</span>` : ''}
<form class="inline" method="post" action="${link(p, UNBLOCK_FORM.action)}">${formFields(p, UNBLOCK_FORM, { block_id: b.id })}<button class="secondary" type="submit">Remove block ${e(b.start_date)}</button></form></li>`,
    )
    .join('');
  return `<h2>Blocked by hand</h2>${own.length ? `<ul>${rows}</ul>` : '<p>None.</p>'}
<form method="post" action="${link(p, BLOCK_FORM.action)}">${formFields(p, BLOCK_FORM)}
<label for="from">First blocked night</label><input id="from" name="from" type="date" required>
<label for="to">First free night after</label><input id="to" name="to" type="date" required>
<label for="note">Note (optional)</label><input id="note" name="note" maxlength="200">
<p><button type="submit">Block these nights</button></p></form>`;
}

/** The next background sync of a feed as the host reads it: a time, or why there is none. */
function nextSyncText(nextSync: ConsoleDeps['nextSync'], feed: string): string {
  if (!nextSync) return 'not scheduled (serve with --sync-interval)';
  const at = nextSync(feed);
  return at === undefined ? 'with the next pass' : when(new Date(at).toISOString());
}

function feedsSection(p: PageContext, feeds: CalendarFeed[], judged: FeedReadiness[], nextSync: ConsoleDeps['nextSync']): string {
  if (feeds.length === 0) return '<h2>Calendar feeds</h2><p>No feeds.</p>';
  const rows = feeds
    .map((f) => {
      const status = judged.find((j) => j.name === f.name)?.status ?? 'failed';
      return `<tr><td>${e(f.name)}</td><td class="status-${status}">${status}</td><td>${when(f.last_success_at)}</td><td>${when(
        f.last_attempt_at,
      )}</td><td>${nextSyncText(nextSync, f.name)}</td><td class="mono">${e(f.last_error ?? '—')}</td></tr>`;
    })
    .join('');
  return `<h2>Calendar feeds</h2>${scrollable(
    'Feeds',
    `<table><caption>Feed freshness</caption><thead><tr><th scope="col">Feed</th><th scope="col">Status</th>
<th scope="col">Last success</th><th scope="col">Last attempt</th><th scope="col">Next sync</th><th scope="col">Last error</th></tr></thead><tbody>${rows}</tbody></table>`,
  )}
<form method="post" action="${link(p, SYNC_FORM.action)}">${formFields(p, SYNC_FORM)}<p><button type="submit">Sync now</button></p></form>`;
}

const monthOf = (asked: string | undefined, now: number) =>
  asked && /^\d{4}-(0[1-9]|1[0-2])$/.test(asked) ? asked : new Date(now).toISOString().slice(0, 7);

function monthLinks(p: PageContext, month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const at = (d: Date) => d.toISOString().slice(0, 7);
  return `<p><a href="${link(p, `/calendar?month=${at(new Date(Date.UTC(y, m - 2, 1)))}`)}">Previous month</a> · <a href="${link(p, `/calendar?month=${at(new Date(Date.UTC(y, m, 1)))}`)}">Next month</a></p>`;
}

export function mountCalendar(app: Hono, x: ConsoleDeps): void {
  app.get('/calendar', async (c) => {
    const p = pageContext(c, 'calendar');
    const month = monthOf(c.req.query('month'), p.now);
    const [blocks, bookings, feeds, ready] = await Promise.all([
      x.reads.listBlocks(),
      x.reads.bookingRequests(),
      x.reads.feeds(),
      x.readiness(),
    ]);
    const nights = monthNights(month, blocks, new Map(bookings.map((b) => [b.booking_id, b])));
    const body =
      monthLinks(p, month) + grid(p, nights) + handBlocks(p, blocks) + feedsSection(p, feeds, ready.checks.calendar.feeds, x.nextSync);
    return c.html(page(p, 'Calendar', body));
  });

  mountChange(app, x, BLOCK_FORM, (form) => {
    const [from, to, note] = ['from', 'to', 'note'].map((k) => form.get(k) ?? '') as [string, string, string];
    return {
      action: 'calendar_block',
      target: `${from}/${to}`,
      run: () => x.actions.addBlock(from, to, note.slice(0, 200) || undefined),
      done: `/calendar?month=${encodeURIComponent(from.slice(0, 7))}`,
      back: '/calendar',
    };
  });
  mountChange(app, x, UNBLOCK_FORM, (form) => {
    const id = form.get('block_id') ?? '';
    return { action: 'calendar_unblock', target: id, run: () => x.actions.removeBlock(id), done: '/calendar', back: '/calendar' };
  });
  mountChange(app, x, SYNC_FORM, () => ({
    action: 'calendar_sync',
    target: null,
    run: () => x.actions.syncFeeds(),
    done: '/calendar',
    back: '/calendar',
  }));
}
