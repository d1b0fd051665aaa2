/**
 * Signing in to the host console with a passkey (WebAuthn Level 3, through @simplewebauthn/server):
 * - enroll: `vrp node console enroll` prints a one-time link (`/enroll?token=…`); its page asks the
 *   browser to create a passkey for this console (registration ceremony, §7.1) and the token is
 *   used up when that passkey is verified; the person is then signed in;
 * - sign in: an authentication ceremony (§7.2) against the enrolled passkeys opens a session.
 * The four endpoints take JSON from the console's own script only: a JSON body is no "simple"
 * request, so a cross-site page cannot send one without a preflight this console never grants,
 * and a browser's `Sec-Fetch-Site`/`Origin` saying another site is refused as for every form.
 * The expected origin and relying-party id are the console's own (its Host passed the Host check).
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { isVrpError } from '@vrpkit/core';
import type { Context, Hono } from 'hono';
import { readBodyCapped } from '../http/body.js';
import { isCrossSite } from '../http/forms.js';
import type { ConsolePasskeyStore } from './passkeys.js';
import type { ConsoleSessions } from './sessions.js';

/** Largest ceremony body: an attestation with a few certificates is far below this. */
const MAX_CEREMONY_BYTES = 64 * 1024;

export interface CeremonyContext {
  credentials: ConsolePasskeyStore;
  sessions: ConsoleSessions;
  now: () => number;
  /** The relying party's name the authenticator shows (`villa.example host console`). */
  rpName: string;
  /** The account name the authenticator shows for a new passkey. */
  userName: string;
  /** The console's origin for a request that passed the Host check. */
  originOf: (c: Context) => string;
}

/** The JSON body of a ceremony POST, or the answer that refuses it. */
async function ceremonyBody(
  c: Context,
  origin: string,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; res: Response }> {
  const refuse = (status: number, code: string) => ({ ok: false as const, res: c.json({ error: { code } }, status as 400) });
  if (isCrossSite(c, origin)) return refuse(403, 'cross_site_request');
  if (c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() !== 'application/json')
    return refuse(415, 'unsupported_media_type');
  const read = await readBodyCapped(c, MAX_CEREMONY_BYTES);
  if (!read.ok) return refuse(413, 'body_too_large');
  try {
    const body: unknown = JSON.parse(read.text);
    if (body && typeof body === 'object' && !Array.isArray(body)) return { ok: true, body: body as Record<string, unknown> };
  } catch {
    // not JSON: refused below
  }
  return refuse(400, 'invalid_json');
}

const rpId = (origin: string) => new URL(origin).hostname;

type CeremonyHandler = (c: Context, body: Record<string, unknown>, origin: string) => Promise<Response>;

/** `POST path`: a ceremony step, its JSON body read and checked (ceremonyBody) before `handle` sees it. */
function ceremonyStep(app: Hono, x: CeremonyContext, path: string, handle: CeremonyHandler): void {
  app.post(path, async (c) => {
    const origin = x.originOf(c);
    const read = await ceremonyBody(c, origin);
    return read.ok ? handle(c, read.body, origin) : read.res;
  });
}

/** `POST /enroll/options` and `/enroll/verify`: a passkey enrolled through a one-time link. */
export function mountEnrollment(app: Hono, x: CeremonyContext): void {
  ceremonyStep(app, x, '/enroll/options', async (c, body, origin) => {
    const token = typeof body.token === 'string' ? body.token : '';
    if (!(await x.credentials.isEnrollment(token, x.now()))) return c.json({ error: { code: 'console_enrollment_invalid' } }, 403);
    const options = await generateRegistrationOptions({
      rpName: x.rpName,
      rpID: rpId(origin),
      userName: x.userName,
      attestationType: 'none',
      excludeCredentials: (await x.credentials.passkeys()).map((p) => ({ id: p.id })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    });
    x.sessions.begin(c, { challenge: options.challenge, enrollment: token }, x.now());
    return c.json(options);
  });

  ceremonyStep(app, x, '/enroll/verify', async (c, body, origin) => {
    const now = x.now();
    const ceremony = x.sessions.finish(c, now);
    if (!ceremony?.enrollment || !(await x.credentials.isEnrollment(ceremony.enrollment, now)))
      return c.json({ error: { code: 'console_enrollment_invalid' } }, 403);
    const verified = await verifyRegistrationResponse({
      response: body.response as RegistrationResponseJSON,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId(origin),
      requireUserVerification: false,
    }).catch(() => undefined);
    if (!verified?.verified || !verified.registrationInfo) return c.json({ error: { code: 'console_passkey_refused' } }, 400);
    const { credential } = verified.registrationInfo;
    const passkey = {
      id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      created_at: new Date(now).toISOString(),
      last_used_at: null,
    };
    // The link is used up with the passkey kept under it; a link another tab used meanwhile enrolls nothing.
    const enrolled = await Promise.resolve(x.credentials.enrollPasskey(ceremony.enrollment, passkey, now)).then(
      () => true,
      (e: unknown) => {
        if (isVrpError(e) && e.code === 'console_enrollment_invalid') return false;
        throw e;
      },
    );
    if (!enrolled) return c.json({ error: { code: 'console_enrollment_invalid' } }, 403);
    x.sessions.open(c, credential.id, now);
    return c.json({ ok: true });
  });
}

/** `POST /signin/options` and `/signin/verify`: a session for an enrolled passkey. */
export function mountSignIn(app: Hono, x: CeremonyContext): void {
  ceremonyStep(app, x, '/signin/options', async (c, _body, origin) => {
    const options = await generateAuthenticationOptions({
      rpID: rpId(origin),
      allowCredentials: (await x.credentials.passkeys()).map((p) => ({ id: p.id })),
      userVerification: 'preferred',
    });
    x.sessions.begin(c, { challenge: options.challenge }, x.now());
    return c.json(options);
  });

  ceremonyStep(app, x, '/signin/verify', async (c, body, origin) => {
    const now = x.now();
    const ceremony = x.sessions.finish(c, now);
    const response = body.response as AuthenticationResponseJSON | undefined;
    const passkey = typeof response?.id === 'string' ? await x.credentials.passkey(response.id) : undefined;
    if (!ceremony || ceremony.enrollment !== undefined || !passkey || !response)
      return c.json({ error: { code: 'console_signin_refused' } }, 403);
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId(origin),
      credential: { id: passkey.id, publicKey: Buffer.from(passkey.public_key, 'base64url'), counter: passkey.counter },
      requireUserVerification: false,
    }).catch(() => undefined);
    if (!verified?.verified) return c.json({ error: { code: 'console_signin_refused' } }, 403);
    await x.credentials.recordUse(passkey.id, verified.authenticationInfo.newCounter, now);
    x.sessions.open(c, passkey.id, now);
    return c.json({ ok: true });
  });
}
