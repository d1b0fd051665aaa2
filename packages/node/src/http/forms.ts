/**
 * State-changing forms refuse cross-site posts (issue 36 defect 5): a form-encoded `POST /book`
 * from any page made its visitors' browsers hold a host's dates. One guard for every form a node
 * (or the platform) serves, run before the handler reads anything else:
 * - cross-site: a browser sends `Sec-Fetch-Site` (Fetch Metadata) and `Origin` with a form POST;
 *   anything but `same-origin` (or `none`: typed by the person), or another origin than the
 *   form's own, is refused (`cross_site_request`);
 * - a per-form token: an HMAC-SHA256 under the node's form secret of the form's action and
 *   origin, an expiry, a nonce made at the render, and the values of the hidden fields the form
 *   binds (for `/book`: the signed offer and the idempotency key of that page view), so a token
 *   works for exactly one rendered form, until it expires (`invalid_form_token`). A client that
 *   sends neither header (curl, a script) is no cross-site browser; it still needs a rendered form.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'hono';
import { readBodyCapped } from './body.js';

/** The hidden field that carries a form's token. */
export const FORM_TOKEN_FIELD = 'form_token';
/** How long a rendered form may be posted (ms). */
export const FORM_TOKEN_TTL_MS = 3_600_000;
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
const TOKEN_VERSION = 'vrpkit-form-v1';

/** A state-changing form: where it posts, and the hidden fields its token binds (as rendered). */
export interface FormSpec {
  action: string;
  bound: readonly string[];
  /** Largest body this form may post, where it is larger than its page's default (a pasted document). */
  maxBytes?: number;
}

/** Why a form post was refused before its handler saw it. */
export type FormRefusal = 'cross_site_request' | 'unsupported_media_type' | 'body_too_large' | 'invalid_form_token';

export interface FormGuard {
  /** The token for a form rendered on `origin` at `now` with these values of its bound fields. */
  token(origin: string, values: Readonly<Record<string, string>>, now: number): string;
  /** A POST of the form checked (cross-site, media type, size, token) and parsed, or why it is refused. */
  read(c: Context, origin: string, now: number): Promise<{ ok: true; form: URLSearchParams } | { ok: false; refusal: FormRefusal }>;
}

/** Whether the browser says a request does not come from a page of `origin` itself (Fetch Metadata, `Origin`). */
export function isCrossSite(c: Context, origin: string): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const from = c.req.header('origin');
  return from !== undefined && from !== origin;
}

/** The guard of form `spec`, its tokens made with `secret`, its bodies capped at `maxBytes`. */
export function formGuard(spec: FormSpec, secret: Uint8Array, maxBytes: number): FormGuard {
  // Joined by NUL: the number of parts is fixed, so a posted value holding a NUL adds one and can never equal another split.
  const mac = (origin: string, expires: string, nonce: string, values: readonly string[]) =>
    createHmac('sha256', secret)
      .update([TOKEN_VERSION, spec.action, origin, expires, nonce, ...values].join('\0'))
      .digest('base64url');
  const boundValues = (get: (name: string) => string | undefined) => spec.bound.map((name) => get(name) ?? '');
  return {
    token(origin, values, now) {
      const expires = String(Math.floor((now + FORM_TOKEN_TTL_MS) / 1000));
      const nonce = randomBytes(12).toString('base64url');
      return `${expires}.${nonce}.${mac(
        origin,
        expires,
        nonce,
        boundValues((n) => values[n]),
      )}`;
    },
    async read(c, origin, now) {
      if (isCrossSite(c, origin)) return { ok: false, refusal: 'cross_site_request' };
      if (c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase() !== FORM_MEDIA_TYPE)
        return { ok: false, refusal: 'unsupported_media_type' };
      const read = await readBodyCapped(c, maxBytes);
      if (!read.ok) return { ok: false, refusal: 'body_too_large' };
      const form = new URLSearchParams(read.text);
      const single = (name: string) => (form.getAll(name).length === 1 ? (form.get(name) ?? undefined) : undefined);
      const [expires = '', nonce = '', given = ''] = (single(FORM_TOKEN_FIELD) ?? '').split('.');
      const expected = Buffer.from(mac(origin, expires, nonce, boundValues(single)));
      const valid =
        /^\d{1,12}$/.test(expires) &&
        Number(expires) * 1000 > now &&
        given.length === expected.length &&
        timingSafeEqual(Buffer.from(given), expected);
      return valid ? { ok: true, form } : { ok: false, refusal: 'invalid_form_token' };
    },
  };
}

/**
 * The node's form secret, kept beside its signing keys (`<keysDir>/form-token.secret`, created
 * once, owner-only), so every worker and every restart checks the tokens the others rendered.
 * Written under a temporary name and linked into place: of two processes starting together one
 * creates it and both read the same bytes.
 */
export function loadFormSecret(keysDir: string): Uint8Array {
  const file = join(keysDir, 'form-token.secret');
  try {
    return readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const temp = `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`; // `.tmp-`: never taken into a backup
  writeFileSync(temp, randomBytes(32), { mode: 0o600 });
  try {
    linkSync(temp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(temp);
  }
  return readFileSync(file);
}
