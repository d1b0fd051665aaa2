/**
 * What every console route shares: the deps it was built with, the request's signed-in context
 * (set by app.ts after the Host and session checks), reading a posted form through its guard, and
 * answering a change the CLI's operation refused with that operation's own message.
 */
import { isVrpError } from '@vrpkit/core';
import type { Context } from 'hono';
import type { ReadinessReport } from '../health.js';
import { type FormSpec, formGuard } from '../http/forms.js';
import type { NodePublisher } from '../service/index.js';
import type { Activity } from './activity.js';
import { MAX_FORM_BYTES, messagePage, type PageContext, type Section } from './pages.js';
import type { ConsoleActions, ConsoleReads } from './ports.js';
import type { ConsoleSession } from './sessions.js';

/** One line per change made in the console (ids and codes only: never guest details or keys). */
export interface ConsoleActionEntry {
  event: 'console_action';
  action: string;
  target: string | null;
  outcome: 'done' | string;
}

export interface ConsoleDeps {
  reads: ConsoleReads;
  actions: ConsoleActions;
  readiness: () => Promise<ReadinessReport>;
  activity: Activity;
  publisher: Pick<NodePublisher, 'canonicalDomain' | 'activeSigner' | 'property'>;
  now: () => number;
  onAction?: (entry: ConsoleActionEntry) => void;
}

/** The request's context once it is signed in. */
export interface RequestContext {
  origin: string;
  now: number;
  session: ConsoleSession;
}

const KEY = 'vrp_console' as never;

export function setRequestContext(c: Context, r: RequestContext): void {
  c.set(KEY, r as never);
}

export function pageContext(c: Context, section: Section): PageContext {
  return { ...(c.get(KEY) as RequestContext), section };
}

/** The posted form of `spec`, or the page refusing it (cross-site, wrong media type, too large, no valid token). */
export async function readForm(c: Context, spec: FormSpec): Promise<URLSearchParams | Response> {
  const r = c.get(KEY) as RequestContext;
  const read = await formGuard(spec, r.session.formSecret, MAX_FORM_BYTES).read(c, r.origin, r.now);
  if (read.ok) return read.form;
  const status = read.refusal === 'body_too_large' ? 413 : read.refusal === 'unsupported_media_type' ? 415 : 403;
  return c.html(messagePage('Refused', `This form was refused (${read.refusal}): reload the page and try again.`, '/'), status);
}

/**
 * Run one change and log it: `done` on success; a coded refusal of the CLI's operation is shown
 * with its message (409), anything else is rethrown for the app's error page.
 */
export async function act<T>(
  c: Context,
  x: ConsoleDeps,
  what: { action: string; target: string | null; back: string },
  run: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; res: Response }> {
  try {
    const value = await run();
    x.onAction?.({ event: 'console_action', action: what.action, target: what.target, outcome: 'done' });
    return { ok: true, value };
  } catch (e) {
    if (!isVrpError(e)) throw e;
    x.onAction?.({ event: 'console_action', action: what.action, target: what.target, outcome: e.code });
    return { ok: false, res: c.html(messagePage('Not done', e.message, what.back), 409) };
  }
}
