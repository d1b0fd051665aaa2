/**
 * The platform operator console (issue 35 item 2): the node console's shell (passkey sign-in,
 * sessions, per-form tokens, CSP, Host check, visible escapes: `createConsoleShell`) with the
 * platform's sections — tenants (tenants.ts: search, paging, one tenant, disable/enable and
 * rotate behind a confirmation step) and fleet health (fleet-page.ts). Roles (issue 35 item 3):
 * each passkey was enrolled as `operator` (changes) or `support` (reads only); a support session's
 * every change, and every confirmation step leading to one, is refused 403 `console_read_only`
 * before its form is read. A session whose passkey was removed from the database is signed out.
 */
import { createHash } from 'node:crypto';
import { type ConsoleFrame, type ConsoleSession, createConsoleShell, messagePage, mountPasskeys } from '@vrpkit/node';
import type { Context, Hono } from 'hono';
import { PLATFORM_CODES } from '../errors.js';
import { type OperatorConsoleOptions, setOperator } from './context.js';
import { mountFleet } from './fleet-page.js';
import { mountTenants } from './tenants-page.js';

export function operatorFrame(subject: string): ConsoleFrame {
  return {
    product: 'operator console',
    subject,
    enrollCommand: 'vrp platform console enroll --role operator|support',
    sections: [
      ['tenants', 'Tenants'],
      ['fleet', 'Fleet health'],
      ['passkeys', 'Passkeys'],
    ],
  };
}

/** Whether a request asks for a change or for the confirmation step of one (a support session may do neither). */
const isChange = (c: Context) => (c.req.method === 'POST' && c.req.path !== '/signout') || c.req.path.endsWith('/confirm');

function readOnlyRefusal(c: Context): Response {
  const text = `${PLATFORM_CODES.console_read_only.message} (console_read_only).`;
  return c.html(messagePage('Read only', text, '/tenants'), 403, { 'x-vrp-error-code': 'console_read_only' });
}

export function createOperatorConsole(o: OperatorConsoleOptions): Hono {
  const admit = async (c: Context, session: ConsoleSession) => {
    const passkey = await o.credentials.passkey(session.passkeyId);
    if (!passkey) return c.redirect('/signin', 303);
    const digest = createHash('sha256').update(passkey.id).digest('hex').slice(0, 12);
    setOperator(c, { role: passkey.role, actor: `console:${passkey.role}:${digest}` });
    return passkey.role !== 'operator' && isChange(c) ? readOnlyRefusal(c) : undefined;
  };
  const app = createConsoleShell({
    frame: operatorFrame(o.subject),
    credentials: o.credentials,
    scheme: o.scheme,
    hosts: o.hosts,
    userName: 'operator',
    now: o.now,
    admit,
    ...(o.onError ? { onError: o.onError } : {}),
  });
  mountTenants(app, o);
  mountFleet(app, o);
  mountPasskeys(app, o);
  return app;
}
