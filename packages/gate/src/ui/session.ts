/**
 * The approvals page's sessions: a sign-in opens one — the random token printed at start (as
 * `?token=` on a page's URL, or posted by the sign-in form), OpenID Connect, or a passkey
 * (ui/sign-in.ts) — and an HttpOnly SameSite=Strict cookie carries it; each session knows who
 * signed in (subject, method, approver role) and has its own secret for its form tokens (forms.ts).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import { approvalLinkPath, isApprovalLinkToken } from '../approvals/links.js';
import type { ApproverIdentity } from '../approvers/identity.js';
import { type FormSubject, formToken, isFormToken } from './forms.js';
import type { FormTokens } from './pages.js';

export const SESSION_COOKIE = 'vrp_gate_ui';

export interface Session {
  /** The secret each of this session's form tokens is made with (forms.ts). */
  formSecret: string;
  /** Who signed in, how, and whether they may decide. */
  who: ApproverIdentity;
}

const MAX_SESSIONS = 64;

/** The pages a person opens (GET), where the token redirect may lead. */
const PAGE_ROUTES = ['/', '/audit'] as const;

/** Open a session (the oldest goes when there are too many) and set its cookie on the answer. */
export function startSession(c: Context, sessions: Map<string, Session>, who: ApproverIdentity): void {
  const id = randomBytes(32).toString('base64url');
  if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
  sessions.set(id, { formSecret: randomBytes(32).toString('base64url'), who });
  setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: 'Strict', path: '/' });
}

/**
 * Where a sign-in leads: the page asked for only if it is one of this page's own routes, or an
 * approval link's path rebuilt from a token of the link's shape. The Location is never the
 * request's path as given (`/%09/host` is an off-origin `//host` to a browser, and a CR/LF in a
 * header is an error).
 */
export function landingPath(path: string): string {
  const link = linkOfPath(path);
  if (link !== undefined) return approvalLinkPath(link);
  return PAGE_ROUTES.find((r) => r === path) ?? '/';
}

/** The link token of an approval link's path (`/act/<token>`), when the path is one. */
export function linkOfPath(path: string): string | undefined {
  const token = /^\/act\/([^/]+)$/.exec(path)?.[1];
  return token !== undefined && isApprovalLinkToken(token) ? token : undefined;
}

export function sessionOf(c: Context): Session {
  return c.get('session' as never) as Session;
}

/** The tokens of this session's forms, or undefined when its person may not decide (the page is read-only). */
export function formTokensOf(c: Context): FormTokens {
  const { formSecret, who } = sessionOf(c);
  return who.approver ? (subject) => formToken(formSecret, subject) : undefined;
}

/** True when the posted token is the one this session made for exactly this form. */
export function formTokenValid(c: Context, subject: FormSubject, given: string): boolean {
  return isFormToken(sessionOf(c).formSecret, subject, given);
}

/** The page's token compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
