/**
 * The host console's app (issue 35): server-rendered pages behind a passkey sign-in, on the
 * console's own listener (listen.ts). Protection, as the gate's approvals page has it:
 * - only the Host names the console was started for are answered (421 otherwise);
 * - without a session every page answers the sign-in page and nothing else (401);
 * - sessions are HttpOnly SameSite=Strict cookies (sessions.ts); every change is a form POST from
 *   the console's own origin carrying the token of exactly that form in this session
 *   (http/forms.ts); the passkey ceremonies take JSON from the console's own script only;
 * - the CSP allows scripts, styles and images from the console itself only (the one script runs
 *   the passkey ceremonies), no framing, no sniffing, no caching;
 * - everything from outside is escaped, and every control, bidi or invisible character is shown
 *   as a visible `\u{…}` escape, so guest text is inert and reads as sent.
 */
import { visibleEscapes } from '@vrpkit/core';
import { Hono, type MiddlewareHandler } from 'hono';
import { mountActivity } from './activity-page.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLESHEET, webauthnBrowserBundle } from './assets.js';
import { mountCalendar } from './calendar.js';
import { type ConsoleDeps, readForm, setRequestContext } from './context.js';
import { mountInbox } from './inbox.js';
import { mountKeys } from './keys.js';
import { hostCheck } from './listen.js';
import { enrollPage, messagePage, SIGNOUT_FORM, signInPage } from './pages.js';
import type { ConsoleCredentials } from './passkeys.js';
import { mountProperty } from './property.js';
import { ConsoleSessions } from './sessions.js';
import { mountEnrollment, mountSignIn } from './webauthn.js';

export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleAppOptions extends ConsoleDeps {
  credentials: ConsoleCredentials;
  scheme: 'http' | 'https';
  /** The Host header values the console answers (listen.ts `consoleHosts`). */
  hosts: Set<string>;
  onError?: (e: unknown) => void;
}

/**
 * On every answer: the CSP, no sniffing, no caching, no framing; `same-origin` referrers, not
 * `no-referrer` (under it a browser posts the page's own forms with `Origin: null`).
 */
const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) c.header(name, value);
};

/** Every control, bidi or invisible character on a page as a visible escape (the gate's rule, issue 36 defect 4). */
const visibleText: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
  const shown = visibleEscapes(await c.res.text(), '\n');
  c.res = new Response(shown, { status: c.res.status, headers: c.res.headers });
};

/** The pages and assets anyone reaching the console may load: sign-in, enrollment, the ceremonies. */
function mountPublic(
  app: Hono,
  o: ConsoleAppOptions,
  sessions: ConsoleSessions,
  originOf: (c: { req: { header(n: string): string | undefined } }) => string,
) {
  const bundle = webauthnBrowserBundle();
  const js = { 'content-type': 'text/javascript; charset=utf-8' };
  app.get('/assets/console.css', (c) => c.body(CONSOLE_STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }));
  app.get('/assets/console.js', (c) => c.body(CONSOLE_SCRIPT, 200, js));
  app.get('/assets/webauthn.js', (c) => c.body(bundle, 200, js));
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/signin', (c) => c.html(signInPage(o.publisher.canonicalDomain, o.credentials.passkeys().length > 0)));
  app.get('/enroll', (c) => {
    const token = c.req.query('token') ?? '';
    if (!o.credentials.isEnrollment(token, o.now()))
      return c.html(
        messagePage(
          'Link not valid',
          'This enrollment link was used, has expired or is not one the node made. Run vrp node console enroll again.',
        ),
        403,
      );
    return c.html(enrollPage(o.publisher.canonicalDomain, token));
  });
  const ceremonies = { credentials: o.credentials, sessions, now: o.now, rpName: o.publisher.canonicalDomain, originOf };
  mountEnrollment(app, ceremonies);
  mountSignIn(app, ceremonies);
}

export function createConsoleApp(o: ConsoleAppOptions): Hono {
  const sessions = new ConsoleSessions(o.scheme === 'https');
  const originOf = (c: { req: { header(n: string): string | undefined } }) => `${o.scheme}://${c.req.header('host')}`;
  const app = new Hono();
  app.use('*', securityHeaders, visibleText);
  mountPublic(app, o, sessions, originOf);

  // Past this point a session is required: without one, the sign-in page and nothing else.
  app.use('*', async (c, next) => {
    const now = o.now();
    const session = sessions.current(c, now);
    if (!session) return c.html(signInPage(o.publisher.canonicalDomain, o.credentials.passkeys().length > 0), 401);
    setRequestContext(c, { origin: originOf(c), now, session });
    await next();
  });
  app.get('/', (c) => c.redirect('/inbox', 303));
  app.post(SIGNOUT_FORM.action, async (c) => {
    const form = await readForm(c, SIGNOUT_FORM);
    if (!(form instanceof URLSearchParams)) return form;
    sessions.close(c, o.now());
    return c.redirect('/signin', 303);
  });
  mountInbox(app, o);
  mountCalendar(app, o);
  mountProperty(app, o);
  mountKeys(app, o);
  mountActivity(app, o);
  app.notFound((c) => c.html(messagePage('Not found', 'No such page in the console.', '/inbox'), 404));
  app.onError((e, c) => {
    o.onError?.(e);
    return c.html(messagePage('Something went wrong', 'The console could not complete this; the node logged why.', '/inbox'), 500);
  });
  const guarded = hostCheck(o.hosts);
  const route = app.fetch;
  app.fetch = (req, env, ctx) => guarded(req) ?? route(req, env, ctx);
  return app;
}
