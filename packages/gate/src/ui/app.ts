/**
 * The approvals page: a small server-rendered page (hono, no front-end code) where a person
 * sees exactly what an escalated act would run and approves or rejects it, bound to the
 * digest shown ([I-D.das-agentic] EF-070; Tool-Use Binding draft, enforce() contract: "an
 * approved search cannot become a send"). Every decision goes through `decideEscalation`.
 *
 * Sign-in: a random token printed once at start opens a session (`?token=` sets an HttpOnly
 * SameSite=Strict cookie, then redirects the token out of the address bar) — the single-user mode;
 * or, when approvers are known people, OpenID Connect or a passkey (sign-in.ts; issue 33 item 3),
 * with the approver role from a claim or a list: a person without it sees the acts read-only, and
 * an approver cannot approve their own act unless its policy allows it.
 *
 * Protection: every POST must come
 * from the page's own origin and carry the token of exactly that form (forms.ts); everything
 * shown is escaped by hono/html, and every character of core's class for text from outside
 * (controls, bidi controls, separators, default-ignorables) is shown as a visible `\u{…}` escape;
 * the CSP allows no script at all and only the page's own stylesheet — except on the passkey
 * sign-in and enrollment pages, whose CSP allows the page's own two scripts under a fresh nonce.
 */

import { randomBytes } from 'node:crypto';
import { type Clock, systemClock, visibleEscapes } from '@vrpkit/core';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { AgentCandidateAct } from '../act.js';
import type { ApprovalLinks } from '../approvals/links.js';
import { APPROVER_CODES, type ApproverIdentity, approverActor, isOwnAct, type SelfApprovalRule } from '../approvers/identity.js';
import { decideEscalation } from '../escalation.js';
import type { ProxyTables } from '../proxy/tables.js';
import type { Escalations } from '../store/ports.js';
import { actLinkRoute, signInRoute, spendLink } from './act-link.js';
import type { AuditTrailSource } from './audit.js';
import { crossSiteReason } from './forms.js';
import { approverSignInPage, auditPage, decisionPage, messagePage, pendingPage, STYLESHEET, signInPage } from './pages.js';
import type { PendingArguments } from './pending-arguments.js';
import { pendingView } from './pending-view.js';
import {
  formTokensOf,
  formTokenValid,
  landingPath,
  linkOfPath,
  SESSION_COOKIE,
  type Session,
  sameSecret,
  sessionOf,
  startSession,
} from './session.js';
import { type ApproverSignIn, mountSignIn } from './sign-in.js';

export { SESSION_COOKIE };

/** No script, no frames, no foreign origin: the page is HTML and its own stylesheet only. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The passkey pages' CSP: the page's own scripts named by this response's nonce, and requests to the page itself. */
export function scriptPolicy(nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

export interface ApprovalsAppOptions {
  escalations: Escalations;
  pins: ProxyTables;
  pendingArguments: PendingArguments;
  /** The single-use approval links a URL-mode elicitation sends a person with (approvals/links.ts). */
  links: ApprovalLinks;
  audit: AuditTrailSource;
  /**
   * The random token printed at start: the single-user sign-in. Absent when approvers sign in as
   * known people (`signIn`): the printed token would otherwise bypass their role.
   */
  token?: string;
  /** The token mode's approver: recorded (as `token:<approver>`) with every decision made on a token session. */
  approver: string;
  /** Known approvers: OpenID Connect and/or passkeys, and who holds the approver role. */
  signIn?: ApproverSignIn;
  /** Whether an approver may approve their own act (the act's policy `approval.self_approval`); default never. */
  selfApproval?: SelfApprovalRule;
  /** Arguments are purged this long after their act was decided (or expired). */
  retainArgumentsMs: number;
  clock?: Clock;
  /** Decisions, for the operator's log (ids and digests only). */
  onDecision?: (fields: Record<string, unknown>) => void;
}

/** Audit entries shown at most on one page (the newest that match the filter). */
const AUDIT_PAGE_ROWS = 500;

/**
 * No script, no framing, no sniffing, no caching, no referrer off the page: on every answer.
 * `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the
 * page's own form posts, and the same-origin check (forms.ts) needs the real origin.
 */
const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const nonce = c.get('cspNonce' as never) as string | undefined;
  c.header('Content-Security-Policy', nonce ? scriptPolicy(nonce) : CONTENT_SECURITY_POLICY);
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

/** A fresh CSP nonce for this response (securityHeaders puts it in the policy). */
function scriptNonce(c: Context): string {
  const nonce = randomBytes(16).toString('base64');
  c.set('cspNonce' as never, nonce as never);
  return nonce;
}

/** A refusal of a signed-in person's decision, with its stable code; nothing was decided. */
function refusal(c: Context, code: string, message: string) {
  return c.html(messagePage('Refused', message, code), 403);
}

export function createApprovalsApp(o: ApprovalsAppOptions): Hono {
  const clock = o.clock ?? systemClock;
  const sessions = new Map<string, Session>();
  const app = new Hono();
  const token = o.signIn ? undefined : o.token;
  const tokenIdentity: ApproverIdentity = { subject: o.approver, method: 'token', approver: true };
  const selfApproval = o.selfApproval ?? (() => false);

  app.use('*', securityHeaders, visibleText);
  // No icon: answered so that a browser's automatic request leaves no error behind. The
  // stylesheet is the same for everyone, and the sign-in pages shown without a session use it.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/style.css', (c) => c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }));
  // The sign-ins: before the session check, which they exist to pass.
  if (token !== undefined) app.post('/signin', signInRoute(token, sessions, tokenIdentity));
  if (o.signIn) mountSignIn(app, { ...o.signIn, sessions, clock, scriptNonce });

  // The token opens a session, then leaves the address bar (and the history) at once.
  app.use('*', async (c, next) => {
    const given = c.req.query('token');
    if (given !== undefined && token !== undefined) {
      if (!sameSecret(given, token)) return c.html(messagePage('Refused', 'The token is not valid.'), 401);
      startSession(c, sessions, tokenIdentity);
      return c.redirect(landingPath(c.req.path), 303);
    }
    const session = sessions.get(getCookie(c, SESSION_COOKIE) ?? '');
    if (session) {
      c.set('session' as never, session as never);
      return next();
    }
    if (o.signIn) {
      // Known approvers sign in first, then come back to the page asked for (an approval link's act included).
      if (c.req.method === 'GET') {
        const methods = { oidc: !!o.signIn.oidc, passkey: !!o.signIn.passkeys };
        return c.html(approverSignInPage(methods, landingPath(c.req.path), methods.passkey ? scriptNonce(c) : undefined), 401);
      }
      return c.html(messagePage('Refused', 'Sign in first; nothing was decided.', 'approver_signin_required'), 401);
    }
    // An approval link opened without a session: the approver signs in, the link itself signs no one in.
    const link = linkOfPath(c.req.path);
    if (link !== undefined && c.req.method === 'GET') return c.html(signInPage(link), 401);
    return c.html(messagePage('Refused', 'Open this page with the URL and token printed when the approvals page started.'), 401);
  });

  // State-changing forms: from the page's own origin only, each with its own token (forms.ts).
  app.use('*', sameOriginPosts);

  app.get('/', async (c) => {
    const now = clock.now();
    await o.pendingArguments.purge(now, o.retainArgumentsMs);
    const pending = (await o.escalations.list('PENDING')).filter((r) => r.expires_at > now);
    const decided = await o.escalations.recentlyDecided(50);
    const views = await Promise.all(pending.map((r) => pendingView(o, r)));
    // Tools the proxies saw whose current definition no person pinned (never, or not since it changed).
    const unpinned = (await o.pins.listPins()).filter((p) => p.pinned_digest !== p.seen_digest);
    return c.html(pendingPage(views, decided, unpinned, formTokensOf(c), now, sessionOf(c).who));
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

  // An approval link: the approvals page at exactly its act (act-link.ts).
  app.get('/act/:link', actLinkRoute(o, clock));

  app.post('/decide', async (c) => {
    const who = sessionOf(c).who;
    // Signed in without the approver role: read-only, nothing is read or decided.
    if (!who.approver) return refusal(c, APPROVER_CODES.role, 'You are not an approver; nothing was decided.');
    const form = await c.req.parseBody();
    const field = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
    const decision = field('decision');
    const link = field('link');
    if (!formTokenValid(c, ['/decide', field('act'), field('digest'), decision, ...(link ? [link] : [])], field('csrf')))
      return c.html(messagePage('Refused', 'The form token is not valid.'), 403);
    if (decision !== 'approve' && decision !== 'reject') return c.html(messagePage('Refused', 'Choose approve or reject.'), 400);
    const actId = field('act');
    const digest = field('digest');
    if (!actId || !digest) return c.html(messagePage('Refused', 'The form names no act or digest.'), 400);
    // No approval of one's own act unless its policy allows it — checked before a link is spent.
    // The token mode is one person approving their own agent's acts: the rule is for known approvers.
    if (decision === 'approve' && who.method !== 'token') {
      const row = await o.escalations.get(actId);
      const act = row ? (JSON.parse(row.act_json) as AgentCandidateAct) : undefined;
      if (act && isOwnAct(act, who) && !selfApproval(act))
        return refusal(
          c,
          APPROVER_CODES.self,
          "This act is your own agent's: its policy does not allow you to approve it; nothing was decided.",
        );
    }
    const actor = approverActor(who);
    // Through a link: the link is spent first, for exactly this act and binding, or nothing is decided.
    if (link) {
      const refused = await spendLink(o.links, link, { candidate_act_id: actId, binding_digest: digest }, actor, clock.now());
      if (refused) return c.html(messagePage(refused.title, refused.message), refused.status);
    }
    // The decision binds exactly the digest the person was shown; another binding decides nothing.
    const d = await decideEscalation(o.escalations, {
      candidateActId: actId,
      status: decision === 'approve' ? 'APPROVED' : 'REJECTED',
      approver: actor,
      reviewedDigest: digest,
      now: clock.now(),
    });
    o.onDecision?.({
      candidate_act_id: actId,
      binding_digest: digest,
      decision,
      approver: actor,
      ...(link ? { via: 'approval_link' } : {}),
      outcome: d.ok ? (d.decided ? d.escalation.status : `unchanged_${d.escalation.status}`) : d.code,
    });
    if (!d.ok && d.code === 'EF_002') return c.html(messagePage('Not found', 'No escalated act has this id.'), 404);
    if (!d.ok) return c.html(messagePage('Refused', 'This act is bound to another digest than the one shown; nothing was decided.'), 409);
    if (!d.decided) return c.html(decisionPage(d.escalation, false), 409);
    return c.html(decisionPage(d.escalation, true));
  });

  // Pin a tool's definition as reviewed: only if the definition seen still has the digest shown.
  app.post('/pin', async (c) => {
    const who = sessionOf(c).who;
    if (!who.approver) return refusal(c, APPROVER_CODES.role, 'You are not an approver; nothing was pinned.');
    const form = await c.req.parseBody();
    const field = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
    const [server, tool, digest] = [field('server'), field('tool'), field('digest')];
    if (!formTokenValid(c, ['/pin', server, tool, digest], field('csrf')))
      return c.html(messagePage('Refused', 'The form token is not valid.'), 403);
    if (!server || !tool || !digest) return c.html(messagePage('Refused', 'The form names no server, tool or digest.'), 400);
    const r = await o.pins.pin(server, tool, { by: approverActor(who), now: clock.now(), digest });
    o.onDecision?.({ pin: tool, server_id: server, digest, outcome: r.pinned ? 'pinned' : r.reason });
    if (!r.pinned && r.reason === 'unknown_tool') return c.html(messagePage('Not found', 'No such tool was seen for this server.'), 404);
    if (!r.pinned)
      return c.html(messagePage('Refused', 'The definition changed since it was shown; nothing was pinned. Review it again.'), 409);
    return c.html(messagePage('Pinned', `Pinned ${tool} (digest ${digest}) for ${server}.`));
  });

  return app;
}
