/**
 * The approvals page: a small server-rendered page (hono, no front-end code) where a person
 * sees exactly what an escalated act would run and approves or rejects it, bound to the
 * digest shown ([I-D.das-agentic] EF-070; Tool-Use Binding draft, enforce() contract: "an
 * approved search cannot become a send"). Every decision goes through `decideEscalation`.
 *
 * Protection: a random token printed once at start opens a session (`?token=` sets an HttpOnly
 * SameSite=Strict cookie, then redirects the token out of the address bar); every POST must come
 * from the page's own origin and carry the token of exactly that form (forms.ts); everything
 * shown is escaped by hono/html, and every character of core's class for text from outside
 * (controls, bidi controls, separators, default-ignorables) is shown as a visible `\u{…}` escape;
 * the CSP allows no script at all and only the page's own stylesheet.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock, visibleEscapes } from '@vrpkit/core';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { AgentCandidateAct } from '../act.js';
import { digestArguments } from '../act.js';
import { decideEscalation } from '../escalation.js';
import type { ProxyTables } from '../proxy/tables.js';
import type { EscalationRow, Escalations } from '../store/ports.js';
import type { AuditTrailSource } from './audit.js';
import { crossSiteReason, type FormSubject, formToken, isFormToken } from './forms.js';
import { auditPage, decisionPage, messagePage, type PendingView, pendingPage, STYLESHEET } from './pages.js';
import type { PendingArguments } from './pending-arguments.js';

export const SESSION_COOKIE = 'vrp_gate_ui';

/** No script, no frames, no foreign origin: the page is HTML and its own stylesheet only. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ApprovalsAppOptions {
  escalations: Escalations;
  pins: ProxyTables;
  pendingArguments: PendingArguments;
  audit: AuditTrailSource;
  /** The random token printed at start. */
  token: string;
  /** Recorded as the approver of every decision made on this page. */
  approver: string;
  /** Arguments are purged this long after their act was decided (or expired). */
  retainArgumentsMs: number;
  clock?: Clock;
  /** Decisions, for the operator's log (ids and digests only). */
  onDecision?: (fields: Record<string, unknown>) => void;
}

interface Session {
  /** The secret each of this session's form tokens is made with (forms.ts). */
  formSecret: string;
}

const MAX_SESSIONS = 64;

/** Audit entries shown at most on one page (the newest that match the filter). */
const AUDIT_PAGE_ROWS = 500;

/** The pages a person opens (GET), where the token redirect may lead. */
const PAGE_ROUTES = ['/', '/audit'] as const;

/**
 * No script, no framing, no sniffing, no caching, no referrer off the page: on every answer.
 * `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the
 * page's own form posts, and the same-origin check (forms.ts) needs the real origin.
 */
const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
  c.header('X-Frame-Options', 'DENY');
};

/**
 * Issue 36 defect 4: markup is escaped by hono/html, but a control, bidi or invisible character
 * in a tool's arguments or definition (or any text from outside) would still reach the person
 * raw, and what they approve could read differently from what runs. Every page goes out with
 * each such character as a visible `\u{…}` escape, as the CLI prints it; the page's own newlines stay.
 */
const visibleText: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
  const shown = visibleEscapes(await c.res.text(), '\n');
  c.res = new Response(shown, { status: c.res.status, headers: c.res.headers });
};

/** A POST from anywhere but the page's own origin (forms.ts) is refused before it is read. */
const sameOriginPosts: MiddlewareHandler = async (c, next) => {
  if (c.req.method !== 'POST') return next();
  const why = crossSiteReason({ origin: c.req.header('origin'), fetchSite: c.req.header('sec-fetch-site') }, new URL(c.req.url).origin);
  if (why) return c.html(messagePage('Refused', `Only this page's own forms can decide: ${why}.`), 403);
  await next();
};

export function createApprovalsApp(o: ApprovalsAppOptions): Hono {
  const clock = o.clock ?? systemClock;
  const sessions = new Map<string, Session>();
  const app = new Hono();

  app.use('*', securityHeaders, visibleText);

  // The token opens a session, then leaves the address bar (and the history) at once.
  app.use('*', async (c, next) => {
    const given = c.req.query('token');
    if (given !== undefined) {
      if (!sameSecret(given, o.token)) return c.html(messagePage('Refused', 'The token is not valid.'), 401);
      const id = randomBytes(32).toString('base64url');
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
      sessions.set(id, { formSecret: randomBytes(32).toString('base64url') });
      setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: 'Strict', path: '/' });
      // Back to the page asked for only if it is one of this page's own routes: the Location is
      // always one of those fixed strings, never the request's path (`/%09/host` is an
      // off-origin `//host` to a browser, and a CR/LF in a header is an error).
      return c.redirect(PAGE_ROUTES.find((r) => r === c.req.path) ?? '/', 303);
    }
    const session = sessions.get(getCookie(c, SESSION_COOKIE) ?? '');
    if (!session)
      return c.html(messagePage('Refused', 'Open this page with the URL and token printed when the approvals page started.'), 401);
    c.set('session' as never, session as never);
    await next();
  });

  // State-changing forms: from the page's own origin only, each with its own token (forms.ts).
  app.use('*', sameOriginPosts);

  // No icon: answered so that a browser's automatic request leaves no error behind.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/style.css', (c) => c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }));

  app.get('/', async (c) => {
    const now = clock.now();
    await o.pendingArguments.purge(now, o.retainArgumentsMs);
    const pending = (await o.escalations.list('PENDING')).filter((r) => r.expires_at > now);
    const decided = await o.escalations.recentlyDecided(50);
    const views = await Promise.all(pending.map((r) => pendingView(o, r)));
    // Tools the proxies saw whose current definition no person pinned (never, or not since it changed).
    const unpinned = (await o.pins.listPins()).filter((p) => p.pinned_digest !== p.seen_digest);
    const secret = sessionOf(c).formSecret;
    return c.html(pendingPage(views, decided, unpinned, (subject) => formToken(secret, subject), now));
  });

  app.get('/audit', async (c) => {
    const q = c.req.query();
    const since = q.since ? Date.parse(q.since) : Number.NaN;
    const shown = { kind: q.kind ?? '', code: q.code ?? '', actor: q.actor ?? '', act: q.act ?? '', since: q.since ?? '' };
    const filter = {
      limit: AUDIT_PAGE_ROWS,
      ...(shown.kind ? { kind: shown.kind } : {}),
      ...(shown.code ? { code: shown.code } : {}),
      ...(shown.actor ? { actor: shown.actor } : {}),
      ...(shown.act ? { act: shown.act } : {}),
      ...(Number.isNaN(since) ? {} : { since }),
    };
    return c.html(auditPage(await o.audit.list(filter), shown, AUDIT_PAGE_ROWS));
  });

  app.post('/decide', async (c) => {
    const form = await c.req.parseBody();
    const field = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
    const decision = field('decision');
    if (!formTokenValid(c, ['/decide', field('act'), field('digest'), decision], field('csrf')))
      return c.html(messagePage('Refused', 'The form token is not valid.'), 403);
    if (decision !== 'approve' && decision !== 'reject') return c.html(messagePage('Refused', 'Choose approve or reject.'), 400);
    const actId = field('act');
    const digest = field('digest');
    if (!actId || !digest) return c.html(messagePage('Refused', 'The form names no act or digest.'), 400);
    // The decision binds exactly the digest the person was shown; another binding decides nothing.
    const d = await decideEscalation(o.escalations, {
      candidateActId: actId,
      status: decision === 'approve' ? 'APPROVED' : 'REJECTED',
      approver: o.approver,
      reviewedDigest: digest,
      now: clock.now(),
    });
    o.onDecision?.({
      candidate_act_id: actId,
      binding_digest: digest,
      decision,
      outcome: d.ok ? (d.decided ? d.escalation.status : `unchanged_${d.escalation.status}`) : d.code,
    });
    if (!d.ok && d.code === 'EF_002') return c.html(messagePage('Not found', 'No escalated act has this id.'), 404);
    if (!d.ok) return c.html(messagePage('Refused', 'This act is bound to another digest than the one shown; nothing was decided.'), 409);
    if (!d.decided) return c.html(decisionPage(d.escalation, false), 409);
    return c.html(decisionPage(d.escalation, true));
  });

  // Pin a tool's definition as reviewed: only if the definition seen still has the digest shown.
  app.post('/pin', async (c) => {
    const form = await c.req.parseBody();
    const field = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
    const [server, tool, digest] = [field('server'), field('tool'), field('digest')];
    if (!formTokenValid(c, ['/pin', server, tool, digest], field('csrf')))
      return c.html(messagePage('Refused', 'The form token is not valid.'), 403);
    if (!server || !tool || !digest) return c.html(messagePage('Refused', 'The form names no server, tool or digest.'), 400);
    const r = await o.pins.pin(server, tool, { by: o.approver, now: clock.now(), digest });
    o.onDecision?.({ pin: tool, server_id: server, digest, outcome: r.pinned ? 'pinned' : r.reason });
    if (!r.pinned && r.reason === 'unknown_tool') return c.html(messagePage('Not found', 'No such tool was seen for this server.'), 404);
    if (!r.pinned)
      return c.html(messagePage('Refused', 'The definition changed since it was shown; nothing was pinned. Review it again.'), 409);
    return c.html(messagePage('Pinned', `Pinned ${tool} (digest ${digest}) for ${server}.`));
  });

  return app;
}

function sessionOf(c: Context): Session {
  return c.get('session' as never) as Session;
}

/** True when the posted token is the one this session made for exactly this form. */
function formTokenValid(c: Context, subject: FormSubject, given: string): boolean {
  return isFormToken(sessionOf(c).formSecret, subject, given);
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One pending act as the page shows it: the act, its retained arguments (checked against the act's digest), its tool's pin. */
async function pendingView(o: ApprovalsAppOptions, row: EscalationRow): Promise<PendingView> {
  const act = JSON.parse(row.act_json) as AgentCandidateAct;
  const retained = await o.pendingArguments.get(row.candidate_act_id);
  let args: PendingView['args'] = { state: 'absent' };
  if (retained) {
    try {
      const parsed: unknown = JSON.parse(retained.arguments_json);
      // Shown only if they are exactly the arguments the act's digest covers (fail closed).
      args =
        digestArguments(parsed).value === act.arguments_digest.value
          ? { state: 'ok', pretty: JSON.stringify(parsed, null, 2) }
          : { state: 'mismatch' };
    } catch {
      args = { state: 'mismatch' };
    }
  }
  const server = act.tool.tool_endpoint;
  const pin = server ? await o.pins.getPin(server, act.tool.tool_id) : undefined;
  return {
    row,
    act,
    args,
    pin: pin
      ? {
          pinned_digest: pin.pinned_digest,
          seen_digest: pin.seen_digest,
          definition: pin.pinned_digest === pin.seen_digest ? JSON.stringify(JSON.parse(pin.seen_definition), null, 2) : null,
        }
      : null,
  };
}
