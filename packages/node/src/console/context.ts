/**
 * What every console route shares: the deps it was built with, the request's signed-in context
 * (set by app.ts after the Host and session checks), reading a posted form through its guard, and
 * answering a change the CLI's operation refused with that operation's own message.
 */
import { isVrpError } from '@vrpkit/core';
import type { Context, Hono } from 'hono';
import type { AcmeStatus } from '../acme.js';
import type { ReadinessReport } from '../health.js';
import { type FormSpec, formGuard } from '../http/forms.js';
import type { NodePublisher } from '../service/index.js';
import type { Activity } from './activity.js';
import { type ConsoleFrame, link, MAX_FORM_BYTES, messagePage, type PageContext, type Section } from './pages.js';
import type { ConsoleActions, ConsoleReads } from './ports.js';
import type { ConsoleSession } from './sessions.js';

/** One line per change made in the console (ids and codes only: never guest details or keys). */
export interface ConsoleActionEntry {
  event: 'console_action';
  action: string;
  target: string | null;
  outcome: 'done' | string;
}

/** The certificate the node serves with: its expiry and, with ACME, the renewals (acme.ts `AcmeStatus`). */
export interface CertificateView {
  not_after: string;
  acme: AcmeStatus | null;
}

export interface ConsoleDeps {
  reads: ConsoleReads;
  /** Null behind a proxy (the proxy holds the certificate). */
  certificate: () => CertificateView | null;
  actions: ConsoleActions;
  readiness: () => Promise<ReadinessReport>;
  activity: Activity;
  publisher: Pick<NodePublisher, 'canonicalDomain' | 'origin' | 'activeSigner' | 'property' | 'preview'>;
  now: () => number;
  /** When the background sync (`--sync-interval`) next fetches a feed; absent when this process runs none. */
  nextSync?: (feed: string) => number | undefined;
  onAction?: (entry: ConsoleActionEntry) => void;
}

/** The request's context once it is signed in. */
export interface RequestContext {
  origin: string;
  now: number;
  session: ConsoleSession;
  frame: ConsoleFrame;
  /** The console's base path (pages.ts `PageContext.base`). */
  base: string;
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
  const read = await formGuard(spec, r.session.formSecret, spec.maxBytes ?? MAX_FORM_BYTES).read(c, r.origin, r.now);
  if (read.ok) return read.form;
  const status = read.refusal === 'body_too_large' ? 413 : read.refusal === 'unsupported_media_type' ? 415 : 403;
  return c.html(messagePage('Refused', `This form was refused (${read.refusal}): reload the page and try again.`, '/', r.base), status);
}

/** One change a posted form asks for: what it is (for the log), how to run it, where to go after. */
export interface Change {
  action: string;
  target: string | null;
  run: () => Promise<unknown>;
  /** Where the page goes once it is done (303): a console path, sent under the base path. */
  done: string;
  /** The page to go back to from a refusal. */
  back: string;
}

/**
 * `POST spec.action`: the form read through its guard, the change it asks for run and logged
 * (`done` or the refusing code). `plan` answers a path instead where the form asks for nothing
 * (an unknown choice): the page goes there unchanged. A coded refusal of the CLI's operation is
 * shown with its message (409); anything else goes to the app's error page.
 */
export function mountChange(
  app: Hono,
  x: Pick<ConsoleDeps, 'onAction'>,
  spec: FormSpec,
  plan: (form: URLSearchParams, c: Context) => Change | string,
): void {
  app.post(spec.action, async (c) => {
    const form = await readForm(c, spec);
    if (!(form instanceof URLSearchParams)) return form;
    const at = c.get(KEY) as RequestContext;
    const change = plan(form, c);
    if (typeof change === 'string') return c.redirect(link(at, change), 303);
    const log = (outcome: string) => x.onAction?.({ event: 'console_action', action: change.action, target: change.target, outcome });
    try {
      await change.run();
    } catch (e) {
      if (!isVrpError(e)) throw e;
      log(e.code);
      return c.html(messagePage('Not done', e.message, change.back, at.base), 409);
    }
    log('done');
    return c.redirect(link(at, change.done), 303);
  });
}
