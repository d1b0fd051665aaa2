/**
 * The tenants section: the list (search by domain or node id, status filter, keyset paging:
 * reads.ts `tenantPage`), one tenant (its feeds with their freshness and last error, its keys with
 * their ages, its recent errors and changes), and its changes — disable, enable, rotate the signing
 * key — each behind a confirmation step and each made by the very store call the CLI makes
 * (`vrp platform tenants disable|enable`, `vrp platform keys rotate --domain`), audited alike with
 * the console's actor.
 */
import {
  type Change,
  confirmPage,
  consoleAge,
  escapeHtml as e,
  type FormSpec,
  mountChange,
  type PageContext,
  page,
  pageContext,
  scrollable,
  when,
} from '@vrpkit/node';
import type { Context, Hono } from 'hono';
import type { TenantDetail } from '../tenants.js';
import { type Operator, type OperatorConsoleOptions, operatorOf } from './context.js';
import { type AuditLine, auditTrail, type TenantPage, tenantPage } from './reads.js';

export const STATUS_FORM: FormSpec = { action: '/tenants/status', bound: ['domain', 'status'] };
export const ROTATE_FORM: FormSpec = { action: '/tenants/rotate', bound: ['domain'] };

/** Longest search text taken (a domain is at most 253). */
const MAX_QUERY = 253;

const tenantPath = (domain: string) => `/tenants/${encodeURIComponent(domain)}`;

function searchForm(q: string, status: string): string {
  const option = (v: string, label: string) => `<option value="${v}"${v === status ? ' selected' : ''}>${label}</option>`;
  return `<form method="get" action="/tenants" role="search"><label for="q">Domain or node id</label>
<input id="q" name="q" type="search" value="${e(q)}" maxlength="${MAX_QUERY}" autocomplete="off">
<label for="status">Status</label><select id="status" name="status">${option('', 'any')}${option('active', 'active')}${option('disabled', 'disabled')}</select>
<p><button type="submit">Search</button></p></form>`;
}

function tenantTable(list: TenantPage, q: string, status: string): string {
  if (list.rows.length === 0) return '<p>No tenant matches.</p>';
  const rows = list.rows
    .map(
      (t) =>
        `<tr><td><a href="${e(tenantPath(t.domain))}">${e(t.domain)}</a></td><td class="status-${t.status === 'active' ? 'fresh' : 'failed'}">${e(t.status)}</td><td class="mono">${e(t.node_id)}</td><td>${when(t.updated_at)}</td></tr>`,
    )
    .join('');
  const next = list.next
    ? `<p><a href="/tenants?${new URLSearchParams({ q, status, after: list.next }).toString()}" rel="next">Next page</a></p>`
    : '';
  return `${scrollable(
    'Tenants',
    `<table><caption>Tenants</caption><thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Node id</th>
<th scope="col">Last change</th></tr></thead><tbody>${rows}</tbody></table>`,
  )}${next}`;
}

function feedsTable(t: TenantDetail): string {
  if (t.feeds.length === 0) return '<h2>Feeds</h2><p>No calendar feed.</p>';
  const rows = t.feeds
    .map(
      (
        f,
      ) => `<tr><td>${e(f.name)}</td><td class="status-${f.state}">${f.state}</td><td>${when(f.last_success_at)}</td><td>${when(f.stale_at)}</td>
<td class="mono">${e(f.last_error_code ?? '—')}</td><td>${f.failures}</td><td>${when(f.next_due_at)}</td><td class="mono">${e(f.url)}</td></tr>`,
    )
    .join('');
  return `<h2>Feeds</h2>${scrollable(
    'Feeds',
    `<table><caption>Feeds</caption><thead><tr><th scope="col">Feed</th><th scope="col">Freshness</th><th scope="col">Last success</th>
<th scope="col">Stale from</th><th scope="col">Last error</th><th scope="col">Failures in a row</th><th scope="col">Next sync</th><th scope="col">URL (redacted)</th></tr></thead><tbody>${rows}</tbody></table>`,
  )}`;
}

function keysTable(t: TenantDetail, now: number): string {
  const rows = t.keys
    .map(
      (k) =>
        `<tr><td class="mono">${e(k.kid)}</td><td>${e(k.status === 'retired' ? 'retained' : k.status)}</td><td>${consoleAge(k.created_at, now)}</td><td>${k.retired_at ? consoleAge(k.retired_at, now) : '—'}</td><td>${when(k.revoked_at)}</td></tr>`,
    )
    .join('');
  return `<h2>Keys</h2>${scrollable(
    'Signing keys',
    `<table><caption>Signing keys</caption><thead><tr><th scope="col">Key id</th><th scope="col">State</th><th scope="col">Age</th>
<th scope="col">Retired for</th><th scope="col">Revoked</th></tr></thead><tbody>${rows}</tbody></table>`,
  )}`;
}

/** The tenant's recent errors (its feeds' last failures) and the latest changes made to it. */
function recentSection(t: TenantDetail, trail: AuditLine[]): string {
  const errors = t.feeds.filter((f) => f.last_error_code !== null);
  const errorList = errors.length
    ? `<ul>${errors.map((f) => `<li>${when(f.last_attempt_at)}: feed ${e(f.name)} failed with <span class="mono">${e(f.last_error_code)}</span> (${f.failures} in a row)</li>`).join('')}</ul>`
    : '<p>No recent error.</p>';
  const changes = trail.length
    ? scrollable(
        'Changes',
        `<table><caption>Changes (audit trail)</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead><tbody>${trail
          .map(
            (a) =>
              `<tr><td>${when(a.at)}</td><td class="mono">${e(a.actor)}</td><td>${e(a.action)}</td><td class="mono">${e(a.detail ?? '—')}</td></tr>`,
          )
          .join('')}</tbody></table>`,
      )
    : '<p>No change recorded.</p>';
  return `<h2>Recent errors</h2>${errorList}<h2>Changes</h2>${changes}`;
}

function actions(t: TenantDetail, who: Operator): string {
  if (who.role !== 'operator') return '<h2>Actions</h2><p>You are signed in with the support role: read only.</p>';
  const base = tenantPath(t.domain);
  const toggle =
    t.status === 'active'
      ? `<a href="${e(base)}/disable/confirm">Disable this tenant…</a>`
      : `<a href="${e(base)}/enable/confirm">Enable this tenant…</a>`;
  return `<h2>Actions</h2><ul><li>${toggle}</li><li><a href="${e(base)}/rotate/confirm">Rotate the signing key…</a></li></ul>`;
}

function tenantDetail(p: PageContext, t: TenantDetail, trail: AuditLine[], who: Operator): string {
  const row = (k: string, v: string) => `<tr><th scope="row">${k}</th><td>${v}</td></tr>`;
  return `<table><caption>Tenant</caption><tbody>${row('Domain', e(t.domain))}${row('Status', `<span class="status-${t.status === 'active' ? 'fresh' : 'failed'}">${e(t.status)}</span>`)}${row('Node id', `<span class="mono">${e(t.node_id)}</span>`)}${row('Property', `${e(t.name)} (<span class="mono">${e(t.property_id)}</span>)`)}${row('Revision', e(t.revision))}${row('Added', when(t.created_at))}</tbody></table>
${actions(t, who)}${feedsTable(t)}${keysTable(t, p.now)}${recentSection(t, trail)}<p><a href="/tenants">All tenants</a></p>`;
}

/** The tenant the path names, or the not-found page. */
async function withTenant(c: Context, o: OperatorConsoleOptions, show: (t: TenantDetail) => Promise<Response> | Response) {
  const domain = c.req.param('domain') ?? '';
  const found = await o.store.showTenant(domain).catch((err: unknown) => {
    if ((err as { code?: string }).code === 'unknown_tenant') return undefined;
    throw err;
  });
  if (!found) return c.notFound();
  return show(found);
}

function confirmations(app: Hono, o: OperatorConsoleOptions): void {
  const statusStep = (status: 'active' | 'disabled', title: string, what: (d: string) => string) =>
    app.get(`/tenants/:domain/${status === 'active' ? 'enable' : 'disable'}/confirm`, (c) =>
      withTenant(c, o, (t) =>
        c.html(
          confirmPage(pageContext(c, 'tenants'), title, what(t.domain), STATUS_FORM, { domain: t.domain, status }, tenantPath(t.domain)),
        ),
      ),
    );
  statusStep(
    'disabled',
    'Disable the tenant',
    (d) =>
      `Stop serving ${d}: every request to it is refused (421) by every serving process within seconds. Its keys, feeds and calendar are kept.`,
  );
  statusStep('active', 'Enable the tenant', (d) => `Serve ${d} again.`);
  app.get('/tenants/:domain/rotate/confirm', (c) =>
    withTenant(c, o, (t) =>
      c.html(
        confirmPage(
          pageContext(c, 'tenants'),
          'Rotate the key',
          `A new key signs ${t.domain}'s offers from now on; the current one stays published until every offer it signed has expired. Agents need do nothing.`,
          ROTATE_FORM,
          { domain: t.domain },
          tenantPath(t.domain),
        ),
      ),
    ),
  );
}

/** The changes, each the CLI's own store call with the signed-in person as its audited actor. */
function changes(app: Hono, o: OperatorConsoleOptions): void {
  mountChange(app, o, STATUS_FORM, (form, c): Change | string => {
    const domain = form.get('domain') ?? '';
    const status = form.get('status');
    if (status !== 'active' && status !== 'disabled') return tenantPath(domain);
    return {
      action: status === 'disabled' ? 'tenant_disable' : 'tenant_enable',
      target: domain,
      run: () => o.store.setTenantStatus(domain, status, operatorOf(c).actor),
      done: tenantPath(domain),
      back: tenantPath(domain),
    };
  });
  mountChange(app, o, ROTATE_FORM, (form, c): Change => {
    const domain = form.get('domain') ?? '';
    return {
      action: 'key_rotate',
      target: domain,
      run: async () => {
        await o.store.assertMasterKey(o.master);
        return o.store.rotateTenantKey(o.master, domain, undefined, operatorOf(c).actor);
      },
      done: tenantPath(domain),
      back: tenantPath(domain),
    };
  });
}

export function mountTenants(app: Hono, o: OperatorConsoleOptions): void {
  app.get('/tenants', async (c) => {
    const q = (c.req.query('q') ?? '').slice(0, MAX_QUERY);
    const raw = c.req.query('status') ?? '';
    const status = raw === 'active' || raw === 'disabled' ? raw : '';
    const after = c.req.query('after');
    const [list, active, disabled] = await Promise.all([
      tenantPage(o.store.db, { q, ...(status ? { status } : {}), ...(after ? { after } : {}) }),
      o.store.countTenants('active'),
      o.store.countTenants('disabled'),
    ]);
    const p = pageContext(c, 'tenants');
    const counts = `<p>${active} active, ${disabled} disabled.${after ? ` Showing tenants after <span class="mono">${e(after)}</span>.` : ''}</p>`;
    return c.html(page(p, 'Tenants', counts + searchForm(q, status) + tenantTable(list, q, status)));
  });
  app.get('/tenants/:domain', (c) =>
    withTenant(c, o, async (t) =>
      c.html(
        page(
          pageContext(c, 'tenants'),
          t.domain,
          tenantDetail(pageContext(c, 'tenants'), t, await auditTrail(o.store.db, t.domain), operatorOf(c)),
        ),
      ),
    ),
  );
  confirmations(app, o);
  changes(app, o);
}
