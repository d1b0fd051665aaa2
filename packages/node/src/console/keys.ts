/**
 * Keys and health: the signing keys (active, pending, retired and retained, revoked) with their
 * ages, rotate and revoke each behind a confirmation step (`vrp node keys rotate|revoke`, Core VRP
 * v0.1 §3.1), and the node's `/readyz` checks as a supervisor sees them.
 */
import type { Hono } from 'hono';
import type { KeyListing } from '../admin/keys.js';
import type { ReadinessReport } from '../health.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import { type CertificateView, type ConsoleDeps, mountChange, pageContext } from './context.js';
import { confirmPage, link, type PageContext, page, scrollable, when } from './pages.js';

export const ROTATE_FORM: FormSpec = { action: '/keys/rotate', bound: [] };
export const REVOKE_FORM: FormSpec = { action: '/keys/revoke', bound: ['kid'] };

/** An age as the host reads it: minutes, hours or days. */
export function age(fromIso: string, now: number): string {
  const minutes = Math.max(0, Math.floor((now - Date.parse(fromIso)) / 60_000));
  if (minutes < 120) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h`;
  return `${Math.floor(minutes / 1440)} days`;
}

function keysTable(p: PageContext, keys: KeyListing[]): string {
  const rows = keys
    .map(
      (
        k,
      ) => `<tr><td class="mono">${e(k.kid)}</td><td>${e(k.status)}${k.published ? ' (published)' : ''}</td><td>${age(k.created_at, p.now)}</td>
<td>${when(k.retain_until)}</td><td>${k.revoked_at ? when(k.revoked_at) : k.status === 'revoked' ? '—' : `<a href="${e(link(p, `/keys/revoke?kid=${encodeURIComponent(k.kid)}`))}">Revoke…</a>`}</td></tr>`,
    )
    .join('');
  return `${scrollable(
    'Signing keys',
    `<table><caption>Signing keys</caption><thead><tr><th scope="col">Key id</th><th scope="col">State</th><th scope="col">Age</th>
<th scope="col">Published until</th><th scope="col">Revoke</th></tr></thead><tbody>${rows}</tbody></table>`,
  )}
<p><a href="${e(link(p, '/keys/rotate'))}">Rotate the signing key…</a></p>`;
}

function readinessTable(r: ReadinessReport): string {
  const row = (name: string, ok: boolean, code?: string) =>
    `<tr><td>${name}</td><td class="status-${ok ? 'fresh' : 'failed'}">${ok ? 'ok' : 'failing'}</td><td>${e(code ?? '—')}</td></tr>`;
  return `<h2>Readiness (/readyz)</h2><p>The node is <strong>${r.ready ? 'ready' : 'not ready'}</strong> to sign quoteable offers.</p>
<table><caption>Checks</caption><thead><tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">Code</th></tr></thead><tbody>
${row('store', r.checks.store.ok, r.checks.store.code)}${row('signing key', r.checks.signing_key.ok, r.checks.signing_key.code)}${row(
  'calendar',
  r.checks.calendar.ok,
  r.checks.calendar.code,
)}</tbody></table>`;
}

function certificateSection(cert: CertificateView | null, now: number): string {
  if (!cert) return '<h2>TLS certificate</h2><p>Held by the reverse proxy in front of the node.</p>';
  const left = Math.floor((Date.parse(cert.not_after) - now) / 86_400_000);
  const renewal = cert.acme
    ? `<p>Renewed by ACME at two thirds of its lifetime: ${cert.acme.renewals} renewal(s), ${cert.acme.renewal_failures} failure(s)${
        cert.acme.last_error ? `; last error: <span class="mono">${e(cert.acme.last_error)}</span>` : ''
      }.</p>`
    : '<p>Not renewed by the node: replace the files before it expires.</p>';
  return `<h2>TLS certificate</h2><p>Expires ${when(cert.not_after)} (<span class="${left < 14 ? 'status-failed' : 'status-fresh'}">in ${left} days</span>).</p>${renewal}`;
}

export function mountKeys(app: Hono, x: ConsoleDeps): void {
  app.get('/keys', async (c) => {
    const p = pageContext(c, 'keys');
    const [keys, ready] = await Promise.all([x.actions.listKeys(), x.readiness()]);
    return c.html(page(p, 'Keys and health', keysTable(p, keys) + readinessTable(ready) + certificateSection(x.certificate(), p.now)));
  });

  app.get(ROTATE_FORM.action, (c) =>
    c.html(
      confirmPage(
        pageContext(c, 'keys'),
        'Rotate the key',
        'A new key signs from now on; the current one stays published until every offer it signed has expired. Agents need do nothing.',
        ROTATE_FORM,
        {},
        '/keys',
      ),
    ),
  );

  app.get(REVOKE_FORM.action, (c) => {
    const kid = c.req.query('kid') ?? '';
    const what = `Revoke key ${kid}: it leaves the JWKS at once and every offer it signed stops verifying. Do this only for a key that may have leaked.`;
    return c.html(confirmPage(pageContext(c, 'keys'), 'Revoke the key', what, REVOKE_FORM, { kid }, '/keys'));
  });

  mountChange(app, x, ROTATE_FORM, () => ({
    action: 'key_rotate',
    target: null,
    run: () => x.actions.rotateKey(),
    done: '/keys',
    back: '/keys',
  }));
  mountChange(app, x, REVOKE_FORM, (form) => {
    const kid = form.get('kid') ?? '';
    return { action: 'key_revoke', target: kid, run: () => x.actions.revokeKey(kid), done: '/keys', back: '/keys' };
  });
}
