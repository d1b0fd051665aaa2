/**
 * The console's passkeys (issue 35 item 3, sign-in that fits a host): each enrolled passkey with
 * when it was made and last used (and its role, on the platform), and its removal behind a
 * confirmation step — the same rule as `vrp node console passkeys remove`: the last passkey that
 * may change anything (the host's last, the platform's last operator) is not removed, so nobody
 * locks everyone out. A session whose passkey is removed is signed out at its next request (app.ts
 * `admit`). Mounted by any console built on the shell (the host console, the operator console).
 */
import type { Hono } from 'hono';
import type { NodeStoreOptions } from '../admin/store.js';
import { readNodeConfig } from '../datadir.js';
import { NodeError } from '../errors.js';
import type { FormSpec } from '../http/forms.js';
import { escapeHtml as e } from '../http/html.js';
import { type ConsoleDeps, mountChange, pageContext } from './context.js';
import { confirmPage, link, type PageContext, page, scrollable, when } from './pages.js';
import { ConsoleCredentials, type ConsolePasskey, type ConsolePasskeyStore } from './passkeys.js';

export const REMOVE_PASSKEY_FORM: FormSpec = { action: '/passkeys/remove', bound: ['id'] };
/** The confirmation step's path (a support session may not open it: platform app.ts `isChange`). */
const REMOVE_CONFIRM_PATH = '/passkeys/remove/confirm';

/** A passkey as listed: with its role where the console has roles (the platform's). */
export type ListedPasskey = ConsolePasskey & { role?: string };

/** A store whose passkeys can be removed. */
export interface RemovablePasskeys extends ConsolePasskeyStore {
  passkeys(): ListedPasskey[] | Promise<ListedPasskey[]>;
  /** Remove passkey `id`; whether it was there. */
  removePasskey(id: string): boolean | Promise<boolean>;
}

/** A passkey may change things unless its role says otherwise (the host console has no roles: every passkey is the host's). */
const mayChange = (p: ListedPasskey) => p.role === undefined || p.role === 'operator';

/**
 * Remove passkey `id` (`vrp node console passkeys remove`, the consoles' removal): unknown is
 * `console_passkey_not_found`; the last one that may change anything is `console_last_passkey`.
 */
export async function removeConsolePasskey(store: RemovablePasskeys, id: string): Promise<void> {
  const all = await store.passkeys();
  const target = all.find((p) => p.id === id);
  if (!target) throw new NodeError('console_passkey_not_found', { id });
  if (mayChange(target) && all.filter(mayChange).length === 1) throw new NodeError('console_last_passkey');
  if (!(await store.removePasskey(id))) throw new NodeError('console_passkey_not_found', { id });
}

/** `vrp node console passkeys`: the host console's passkeys, oldest first. */
export function listConsolePasskeys(o: Pick<NodeStoreOptions, 'dataDir'>): ListedPasskey[] {
  // The data directory must be a node's: a typo must not create a console folder somewhere else.
  readNodeConfig(o.dataDir);
  return new ConsoleCredentials(o.dataDir).passkeys();
}

/** `vrp node console passkeys remove ID`: as the console removes one (not the last). */
export function removeHostConsolePasskey(o: Pick<NodeStoreOptions, 'dataDir'>, id: string): Promise<void> {
  readNodeConfig(o.dataDir);
  return removeConsolePasskey(new ConsoleCredentials(o.dataDir), id);
}

/** A short, stable label for a credential id (the id itself is long and means nothing to a person). */
export const passkeyLabel = (id: string) => `passkey ${id.slice(0, 8)}…`;

function passkeysTable(at: PageContext, rows: ListedPasskey[]): string {
  const roles = rows.some((p) => p.role !== undefined);
  const body = rows
    .map(
      (
        p,
      ) => `<tr><td>${e(passkeyLabel(p.id))}${p.id === at.session.passkeyId ? ' (this session)' : ''}</td>${roles ? `<td>${e(p.role ?? '')}</td>` : ''}
<td>${when(p.created_at)}</td><td>${when(p.last_used_at)}</td><td>${e(p.transports.join(', ') || '—')}</td>
<td><a href="${e(link(at, `${REMOVE_CONFIRM_PATH}?id=${encodeURIComponent(p.id)}`))}" aria-label="Remove ${e(passkeyLabel(p.id))}">Remove</a></td></tr>`,
    )
    .join('');
  return scrollable(
    'Passkeys',
    `<table><caption>Enrolled passkeys</caption><thead><tr><th scope="col">Passkey</th>${roles ? '<th scope="col">Role</th>' : ''}
<th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Transports</th><th scope="col">Action</th></tr></thead><tbody>${body}</tbody></table>`,
  );
}

export function mountPasskeys(app: Hono, o: { credentials: RemovablePasskeys } & Pick<ConsoleDeps, 'onAction'>): void {
  app.get('/passkeys', async (c) => {
    const p = pageContext(c, 'passkeys');
    const rows = await o.credentials.passkeys();
    const hint = `<p>Enroll another with <code>${e(p.frame.enrollCommand)}</code>. The last passkey that may make changes cannot be removed.</p>`;
    return c.html(page(p, 'Passkeys', passkeysTable(p, rows) + hint));
  });

  app.get(REMOVE_CONFIRM_PATH, (c) => {
    const id = c.req.query('id') ?? '';
    const what = `Remove ${passkeyLabel(id)}: it can no longer sign in, and a session opened with it ends.`;
    return c.html(confirmPage(pageContext(c, 'passkeys'), 'Remove the passkey', what, REMOVE_PASSKEY_FORM, { id }, '/passkeys'));
  });

  mountChange(app, o, REMOVE_PASSKEY_FORM, (form) => {
    const id = form.get('id') ?? '';
    return {
      action: 'passkey_remove',
      // The log names the passkey by its label, never its whole credential id.
      target: passkeyLabel(id),
      run: () => removeConsolePasskey(o.credentials, id),
      done: '/passkeys',
      back: '/passkeys',
    };
  });
}
