/**
 * How a person signs in to the approvals page when approvers are known people (issue 33 item 3):
 * - OpenID Connect (approvers/oidc.ts): `GET /signin/oidc` sends the browser to the provider with
 *   a fresh state, nonce and PKCE challenge, the key of that sign-in in a short-lived cookie;
 *   `GET /signin/oidc/callback` finishes it once. The cookie is SameSite=Lax because the provider's
 *   redirect back is a cross-site navigation, which carries no Strict cookie; it holds only a
 *   random key to the sign-in in progress, never a token.
 * - Passkeys (WebAuthn Level 3, through @simplewebauthn/server): `vrp gate approvers enroll` prints
 *   a one-time link (`/approvers/enroll?token=…`) whose page creates a passkey for the link's subject
 *   (registration ceremony, §7.1); `POST /signin/passkey/*` signs in with one (authentication
 *   ceremony, §7.2). The ceremony endpoints take JSON from the page's own script only: a JSON body
 *   is no "simple" request, so another site cannot send one without a preflight this page never
 *   grants, and a browser's `Sec-Fetch-Site`/`Origin` naming another site is refused as for every form.
 *   The relying party is the page's own origin; WebAuthn needs a domain there (`localhost`, not an IP).
 * Either way the session records the subject, the method and whether the subject holds the
 * approver role (a listed subject, or the ID token's claim).
 */
import { randomBytes } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Clock } from '@vrpkit/core';
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { type ApproverIdentity, type ApproverRole, holdsApproverRole } from '../approvers/identity.js';
import { type ApproverOidc, OidcSignInError } from '../approvers/oidc.js';
import { type ApproverPasskeys, enrollmentDigest } from '../approvers/passkeys.js';
import { APPROVALS_SCRIPT, simpleWebAuthnBundle } from './assets.js';
import { crossSiteReason } from './forms.js';
import { enrollPage, messagePage, signedInPage } from './pages.js';
import { landingPath, type Session, startSession } from './session.js';

/** The sign-in methods of known approvers, and who holds the approver role. */
export interface ApproverSignIn {
  oidc?: ApproverOidc;
  passkeys?: ApproverPasskeys;
  role: ApproverRole;
}

export interface SignInContext extends ApproverSignIn {
  sessions: Map<string, Session>;
  clock: Clock;
  /** Set the response's CSP nonce (app.ts) and return it, for a page that loads the ceremony script. */
  scriptNonce: (c: Context) => string;
}

/** The cookie that names an OpenID Connect sign-in in progress (Lax: it must survive the provider's redirect back). */
const OIDC_COOKIE = 'vrp_gate_oidc';
const OIDC_PATH = '/signin/oidc';
/** The cookie that names a passkey ceremony in progress (its challenge waits server-side). */
const CEREMONY_COOKIE = 'vrp_gate_ceremony';
const CEREMONY_TTL_MS = 5 * 60_000;
const MAX_CEREMONIES = 256;
/** Largest ceremony body: an attestation with a few certificates is far below this. */
const MAX_CEREMONY_BYTES = 64 * 1024;

interface Ceremony {
  challenge: string;
  /** For a registration: the digest of the enrollment link's token. */
  enrollment?: string;
  expiresAt: number;
}

const rpIdOf = (origin: string) => new URL(origin).hostname;
const originOf = (c: Context) => new URL(c.req.url).origin;
const jsonError = (c: Context, status: 400 | 403 | 413 | 415, code: string) => c.json({ error: { code } }, status);

export function mountSignIn(app: Hono, x: SignInContext): void {
  app.get('/assets/webauthn.js', (c) => c.body(simpleWebAuthnBundle(), 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/assets/approvals.js', (c) => c.body(APPROVALS_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  if (x.oidc) mountOidc(app, x, x.oidc);
  if (x.passkeys) mountPasskeys(app, x, x.passkeys);
}

/** Open the session, then show where to go on: a page link and an immediate same-site refresh (the session cookie is Strict). */
function signedIn(c: Context, x: SignInContext, who: ApproverIdentity, returnTo: string) {
  startSession(c, x.sessions, who);
  return c.html(signedInPage(who, landingPath(returnTo)));
}

function mountOidc(app: Hono, x: SignInContext, oidc: ApproverOidc): void {
  app.get(OIDC_PATH, async (c) => {
    const returnTo = landingPath(c.req.query('return') ?? '/');
    let started: { url: URL; key: string };
    try {
      started = await oidc.start(`${originOf(c)}${OIDC_PATH}/callback`, returnTo, x.clock.now());
    } catch (e) {
      const code = e instanceof OidcSignInError ? e.code : 'approver_oidc_unavailable';
      return c.html(messagePage('Sign-in unavailable', 'The OpenID provider could not be reached; nothing was signed in.', code), 502);
    }
    setCookie(c, OIDC_COOKIE, started.key, { httpOnly: true, sameSite: 'Lax', path: OIDC_PATH, maxAge: 600 });
    return c.redirect(started.url.href, 302);
  });

  app.get(`${OIDC_PATH}/callback`, async (c) => {
    const key = getCookie(c, OIDC_COOKIE) ?? '';
    deleteCookie(c, OIDC_COOKIE, { path: OIDC_PATH });
    try {
      const done = await oidc.finish(key, new URL(c.req.url).searchParams, x.clock.now());
      const who: ApproverIdentity = {
        subject: done.subject,
        method: 'oidc',
        approver: holdsApproverRole(x.role, done.subject, done.claims),
      };
      return signedIn(c, x, who, done.returnTo);
    } catch (e) {
      const code = e instanceof OidcSignInError ? e.code : 'approver_oidc_refused';
      const status = code === 'approver_oidc_unavailable' ? 502 : code === 'approver_oidc_state_invalid' ? 400 : 401;
      return c.html(messagePage('Not signed in', 'The sign-in could not be completed; nothing was signed in. Start again.', code), status);
    }
  });
}

/** Ceremonies in progress, by their cookie's random key (taken once). */
class Ceremonies {
  readonly #waiting = new Map<string, Ceremony>();

  begin(c: Context, ceremony: Ceremony): void {
    const key = randomBytes(32).toString('base64url');
    for (const [k, w] of this.#waiting) if (w.expiresAt <= ceremony.expiresAt - CEREMONY_TTL_MS) this.#waiting.delete(k);
    if (this.#waiting.size >= MAX_CEREMONIES) this.#waiting.delete(this.#waiting.keys().next().value as string);
    this.#waiting.set(key, ceremony);
    setCookie(c, CEREMONY_COOKIE, key, { httpOnly: true, sameSite: 'Strict', path: '/' });
  }

  take(c: Context, now: number): Ceremony | undefined {
    const key = getCookie(c, CEREMONY_COOKIE) ?? '';
    const w = this.#waiting.get(key);
    this.#waiting.delete(key);
    deleteCookie(c, CEREMONY_COOKIE, { path: '/' });
    return w && w.expiresAt > now ? w : undefined;
  }
}

type CeremonyStep = (c: Context, body: Record<string, unknown>) => Promise<Response>;

/** A ceremony POST: same-origin JSON of bounded size, or refused before `step` sees it. */
function ceremony(step: CeremonyStep) {
  return async (c: Context) => {
    if (crossSiteReason({ origin: c.req.header('origin'), fetchSite: c.req.header('sec-fetch-site') }, originOf(c)))
      return jsonError(c, 403, 'cross_site_request');
    if (c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() !== 'application/json')
      return jsonError(c, 415, 'unsupported_media_type');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return jsonError(c, 400, 'invalid_json');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) return jsonError(c, 400, 'invalid_json');
    return step(c, body as Record<string, unknown>);
  };
}

const limit = bodyLimit({ maxSize: MAX_CEREMONY_BYTES, onError: (c) => jsonError(c, 413, 'body_too_large') });

function mountPasskeys(app: Hono, x: SignInContext, passkeys: ApproverPasskeys): void {
  const ceremonies = new Ceremonies();

  // The enrollment link's page: open while the link is unused and unexpired; spent by the passkey it enrolls.
  app.get('/approvers/enroll', async (c) => {
    const token = c.req.query('token') ?? '';
    const digest = enrollmentDigest(token);
    const open = digest ? await passkeys.openEnrollment(digest, x.clock.now()) : undefined;
    if (!open)
      return c.html(messagePage('Link not valid', 'This enrollment link is unknown, used or expired.', 'approver_enrollment_invalid'), 403);
    return c.html(enrollPage(open.subject, token, x.scriptNonce(c)));
  });

  app.post(
    '/approvers/enroll/options',
    limit,
    ceremony(async (c, body) => {
      const now = x.clock.now();
      const digest = enrollmentDigest(typeof body.token === 'string' ? body.token : '');
      const open = digest ? await passkeys.openEnrollment(digest, now) : undefined;
      if (!digest || !open) return jsonError(c, 403, 'approver_enrollment_invalid');
      const origin = originOf(c);
      const options = await generateRegistrationOptions({
        rpName: 'vrp gate approvals',
        rpID: rpIdOf(origin),
        userName: open.subject,
        attestationType: 'none',
        excludeCredentials: (await passkeys.credentialIdsOf(open.subject)).map((id) => ({ id })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      ceremonies.begin(c, { challenge: options.challenge, enrollment: digest, expiresAt: now + CEREMONY_TTL_MS });
      return c.json(options);
    }),
  );

  app.post(
    '/approvers/enroll/verify',
    limit,
    ceremony(async (c, body) => {
      const now = x.clock.now();
      const waiting = ceremonies.take(c, now);
      if (!waiting?.enrollment) return jsonError(c, 403, 'approver_enrollment_invalid');
      const origin = originOf(c);
      const verified = await verifyRegistrationResponse({
        response: body.response as RegistrationResponseJSON,
        expectedChallenge: waiting.challenge,
        expectedOrigin: origin,
        expectedRPID: rpIdOf(origin),
        requireUserVerification: false,
      }).catch(() => undefined);
      if (!verified?.verified || !verified.registrationInfo) return jsonError(c, 400, 'approver_passkey_refused');
      const { credential } = verified.registrationInfo;
      // The link is spent and the passkey recorded together, or neither (a link used meanwhile enrolls nothing).
      const spent = await passkeys.enroll(
        waiting.enrollment,
        {
          credential_id: credential.id,
          public_key: Buffer.from(credential.publicKey).toString('base64url'),
          counter: credential.counter,
          transports: JSON.stringify(credential.transports ?? []),
          created_at: now,
          last_used_at: null,
        },
        now,
      );
      if (!spent) return jsonError(c, 403, 'approver_enrollment_invalid');
      startSession(c, x.sessions, passkeyIdentity(x.role, spent.subject));
      return c.json({ ok: true, next: '/' });
    }),
  );

  app.post(
    '/signin/passkey/options',
    limit,
    ceremony(async (c) => {
      const now = x.clock.now();
      // Discoverable credentials: the authenticator offers the approver's passkey; the page names no subject.
      const options = await generateAuthenticationOptions({ rpID: rpIdOf(originOf(c)), userVerification: 'preferred' });
      ceremonies.begin(c, { challenge: options.challenge, expiresAt: now + CEREMONY_TTL_MS });
      return c.json(options);
    }),
  );

  app.post(
    '/signin/passkey/verify',
    limit,
    ceremony(async (c, body) => {
      const now = x.clock.now();
      const waiting = ceremonies.take(c, now);
      const response = body.response as AuthenticationResponseJSON | undefined;
      const passkey = typeof response?.id === 'string' ? await passkeys.passkey(response.id) : undefined;
      if (!waiting || waiting.enrollment !== undefined || !passkey || !response) return jsonError(c, 403, 'approver_passkey_refused');
      const origin = originOf(c);
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: waiting.challenge,
        expectedOrigin: origin,
        expectedRPID: rpIdOf(origin),
        credential: {
          id: passkey.credential_id,
          publicKey: Buffer.from(passkey.public_key, 'base64url'),
          counter: Number(passkey.counter),
        },
        requireUserVerification: false,
      }).catch(() => undefined);
      if (!verified?.verified) return jsonError(c, 403, 'approver_passkey_refused');
      // The counter moves only from the value checked: a concurrent sign-in with a cloned key loses.
      if (!(await passkeys.recordUse(passkey.credential_id, Number(passkey.counter), verified.authenticationInfo.newCounter, now)))
        return jsonError(c, 403, 'approver_passkey_refused');
      startSession(c, x.sessions, passkeyIdentity(x.role, passkey.subject));
      const next = landingPath(typeof body.return === 'string' ? body.return : '/');
      return c.json({ ok: true, next });
    }),
  );
}

/** A passkey's subject holds the role only when listed by name: a passkey carries no claims. */
function passkeyIdentity(role: ApproverRole, subject: string): ApproverIdentity {
  return { subject, method: 'passkey', approver: holdsApproverRole(role, subject) };
}
