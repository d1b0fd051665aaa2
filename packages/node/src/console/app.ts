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
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { mountActivity } from './activity-page.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLESHEET, webauthnBrowserBundle } from './assets.js';
import { mountCalendar } from './calendar.js';
import { type ConsoleDeps, readForm, setRequestContext } from './context.js';
import { mountInbox } from './inbox.js';
import { mountKeys } from './keys.js';
import { consoleNameOf, hostCheck } from './listen.js';
import { type ConsoleFrame, enrollPage, hostConsoleFrame, messagePage, SIGNOUT_FORM, signInPage } from './pages.js';
import type { ConsolePasskeyStore } from './passkeys.js';
import { mountPasskeys, type RemovablePasskeys } from './passkeys-page.js';
import { mountProperty } from './property.js';
import { type ConsoleSession, ConsoleSessions } from './sessions.js';
import { mountEnrollment, mountSignIn } from './webauthn.js';

export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * What any console built on this shell is given (the host console here, the platform's operator
 * console over its own database): its frame, where its passkeys are kept, its scheme and the Host
 * names it answers, and its clock.
 */
export interface ConsoleShellOptions {
  frame: ConsoleFrame;
  credentials: ConsolePasskeyStore;
  scheme: 'http' | 'https';
  /** The Host header values the console answers (listen.ts `consoleHosts`). */
  hosts: Set<string>;
  /** The account name a new passkey is shown under by the authenticator. */
  userName: string;
  now: () => number;
  onError?: (e: unknown) => void;
  /**
   * Run for every signed-in request before its handler: an answer refuses it (the platform's roles,
   * a passkey removed since its session opened); undefined lets it through.
   */
  admit?: (c: Context, session: ConsoleSession) => Response | undefined | Promise<Response | undefined>;
  /** Mounted behind the node's reverse proxy at a path (`--console-path`) instead of on a listener of its own. */
  proxied?: ConsoleMount;
}

/**
 * A console mounted at `base` on the node's main listener behind its reverse proxy (serve.ts): the
 * requests reach it only from a trusted proxy, with `base` taken off their path; every link,
 * redirect, asset URL and cookie `Path` is under `base`, and the name checked (and the origin the
 * forms and passkey ceremonies expect) is the proxy's `X-Forwarded-Host`, the name the browser
 * asked for, not the upstream Host the proxy connects to.
 */
export interface ConsoleMount {
  base: string;
}

export interface ConsoleAppOptions extends ConsoleDeps {
  credentials: RemovablePasskeys;
  scheme: 'http' | 'https';
  /** The Host header values the console answers (listen.ts `consoleHosts`). */
  hosts: Set<string>;
  onError?: (e: unknown) => void;
  proxied?: ConsoleMount;
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
function mountPublic(app: Hono, o: ConsoleShellOptions, sessions: ConsoleSessions, originOf: (c: Context) => string, base: string) {
  const bundle = webauthnBrowserBundle();
  const js = { 'content-type': 'text/javascript; charset=utf-8' };
  const enrolled = async () => (await o.credentials.passkeys()).length > 0;
  app.get('/assets/console.css', (c) => c.body(CONSOLE_STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }));
  app.get('/assets/console.js', (c) => c.body(CONSOLE_SCRIPT, 200, js));
  app.get('/assets/webauthn.js', (c) => c.body(bundle, 200, js));
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/signin', async (c) => c.html(signInPage(o.frame, await enrolled(), base)));
  app.get('/enroll', async (c) => {
    const token = c.req.query('token') ?? '';
    if (!(await o.credentials.isEnrollment(token, o.now())))
      return c.html(
        messagePage(
          'Link not valid',
          `This enrollment link was used, has expired or is not one this console made. Run ${o.frame.enrollCommand} again.`,
          undefined,
          base,
        ),
        403,
      );
    return c.html(enrollPage(o.frame, token, base));
  });
  const ceremonies = {
    credentials: o.credentials,
    sessions,
    now: o.now,
    rpName: `${o.frame.subject} ${o.frame.product}`,
    userName: o.userName,
    originOf,
  };
  mountEnrollment(app, ceremonies);
  mountSignIn(app, ceremonies);
  return enrolled;
}

/**
 * A console's app before its sections: the Host check, the security headers, visible escapes, the
 * public pages and passkey ceremonies, then — for every other path — a session or the sign-in
 * page (401), `admit`, `/` to the first section, sign-out, and the not-found and error pages. The
 * caller mounts its sections on the app it returns (each page through `page`, each change through
 * `mountChange`).
 */
export function createConsoleShell(o: ConsoleShellOptions): Hono {
  const base = o.proxied?.base ?? '';
  const sessions = new ConsoleSessions(o.scheme === 'https', base || '/');
  const nameOf = consoleNameOf(o.proxied);
  const originOf = (c: Context) => `${o.scheme}://${nameOf(c.req.raw)}`;
  const home = `/${o.frame.sections[0]?.[0] ?? ''}`;
  const app = new Hono();
  app.use('*', securityHeaders, visibleText);
  const enrolled = mountPublic(app, o, sessions, originOf, base);

  // Past this point a session is required: without one, the sign-in page and nothing else.
  app.use('*', async (c, next) => {
    const now = o.now();
    const session = sessions.current(c, now);
    if (!session) return c.html(signInPage(o.frame, await enrolled(), base), 401);
    setRequestContext(c, { origin: originOf(c), now, session, frame: o.frame, base });
    const refused = await o.admit?.(c, session);
    if (refused) return refused;
    await next();
  });
  app.get('/', (c) => c.redirect(base + home, 303));
  app.post(SIGNOUT_FORM.action, async (c) => {
    const form = await readForm(c, SIGNOUT_FORM);
    if (!(form instanceof URLSearchParams)) return form;
    sessions.close(c, o.now());
    return c.redirect(`${base}/signin`, 303);
  });
  app.notFound((c) => c.html(messagePage('Not found', 'No such page in the console.', home, base), 404));
  app.onError((e, c) => {
    o.onError?.(e);
    return c.html(messagePage('Something went wrong', 'The console could not complete this; the server logged why.', home, base), 500);
  });
  const guarded = hostCheck(o.hosts, nameOf);
  const route = app.fetch;
  app.fetch = (req, env, ctx) => guarded(req) ?? route(req, env, ctx);
  return app;
}

/** The host console: the shell with the node's sections. */
export function createConsoleApp(o: ConsoleAppOptions): Hono {
  const app = createConsoleShell({
    frame: hostConsoleFrame(o.publisher.canonicalDomain),
    credentials: o.credentials,
    scheme: o.scheme,
    hosts: o.hosts,
    userName: 'host',
    now: o.now,
    // A session whose passkey was removed (here or by `vrp node console passkeys remove`) is signed out.
    admit: async (c, session) =>
      (await o.credentials.passkey(session.passkeyId)) ? undefined : c.redirect(`${o.proxied?.base ?? ''}/signin`, 303),
    ...(o.onError ? { onError: o.onError } : {}),
    ...(o.proxied ? { proxied: o.proxied } : {}),
  });
  mountInbox(app, o);
  mountCalendar(app, o);
  mountProperty(app, o);
  mountKeys(app, o);
  mountActivity(app, o);
  mountPasskeys(app, o);
  return app;
}
