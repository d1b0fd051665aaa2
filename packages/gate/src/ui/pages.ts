/**
 * The approvals page's HTML. Every value is interpolated through hono/html's `html`, which
 * escapes it: tool arguments, definitions and ids render as text, never as markup (and app.ts
 * shows every control, bidi or invisible character in the page as a visible escape).
 */
import { html } from 'hono/html';
import type { AgentCandidateAct } from '../act.js';
import type { ApproverIdentity } from '../approvers/identity.js';
import type { ToolPinTable } from '../proxy/schema.js';
import type { EscalationRow } from '../store/ports.js';
import { AUDIT_KINDS, type AuditTrailEntry } from './audit.js';
import type { FormSubject } from './forms.js';

/**
 * The token of one form (forms.ts), made for the session that views the page; undefined for a
 * signed-in person without the approver role, who is shown the acts read-only (no form at all).
 */
export type FormTokens = ((subject: FormSubject) => string) | undefined;

export interface PendingView {
  row: EscalationRow;
  act: AgentCandidateAct;
  /** ok: the retained arguments, whose digest is the act's; absent: purged or never kept; mismatch: not the act's arguments. */
  args: { state: 'ok'; pretty: string } | { state: 'absent' } | { state: 'mismatch' };
  /** The tool's pin for the act's server identity (the definition when the pinned digest is the one seen now). */
  pin: { pinned_digest: string | null; seen_digest: string; definition: string | null } | null;
}

export const STYLESHEET = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 70rem; padding: 1rem 1.5rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
nav a { margin-right: 1rem; }
.act { border: 1px solid #c7c7cc; border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
.act h3 { margin: 0 0 .5rem; font-size: 1.05rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 .75rem; }
dt { color: #555; } dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
pre { background: #f5f5f7; padding: .6rem; border-radius: 4px; overflow: auto; max-height: 30rem; white-space: pre-wrap; word-break: break-all; }
.warn { color: #a00; font-weight: 600; }
form.decide { display: inline-block; margin-right: .5rem; }
button { font: inherit; padding: .35rem 1rem; border-radius: 4px; border: 1px solid #888; cursor: pointer; }
button.approve { background: #1f7a3a; color: #fff; border-color: #1f7a3a; }
button.reject { background: #fff; color: #a00; border-color: #a00; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e5e5ea; font-size: 13px; }
td.mono { font-family: ui-monospace, monospace; word-break: break-all; }
form.signin input { font: inherit; padding: .35rem; }
a.button { display: inline-block; text-decoration: none; padding: .35rem 1rem; border-radius: 4px; }
a.button.approve { background: #1f7a3a; color: #fff; }
@media (max-width: 600px) {
  body { padding: .75rem; }
  dl { grid-template-columns: 1fr; } dt { margin-top: .3rem; }
  form.decide { display: block; margin: .5rem 0; } form.decide button { width: 100%; padding: .6rem; }
  form.signin input { width: 100%; box-sizing: border-box; margin: .3rem 0; }
}
`;

const iso = (t: number | null) => (t === null ? '' : new Date(t).toISOString());

/**
 * A page; with `nonce`, it loads the passkey ceremony scripts (the response's CSP allows exactly
 * that nonce); with `refresh`, it goes on to that path of the page's own at once.
 */
function layout(title: string, body: unknown, nonce?: string, refresh?: string) {
  const scripts = nonce
    ? html`<script nonce="${nonce}" src="/assets/webauthn.js" defer></script><script nonce="${nonce}" src="/assets/approvals.js" defer></script>`
    : '';
  const head = refresh ? html`<meta http-equiv="refresh" content="0; url=${refresh}">${scripts}` : scripts;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · vrp gate</title><link rel="stylesheet" href="/style.css">${head}</head>
<body><nav><a href="/">Pending and decided acts</a><a href="/audit">Audit trail</a></nav>${body}</body></html>`;
}

/** A message; `code` is the refusal's stable code, shown as `#code`. */
export function messagePage(title: string, message: string, code?: string) {
  return layout(title, html`<h1>${title}</h1><p>${message}</p>${code ? html`<p>Code: <code id="code">${code}</code></p>` : ''}`);
}

/** Who is signed in, above the acts; a person without the approver role is told the page is read-only. */
function signedInAs(who: ApproverIdentity | undefined) {
  if (!who) return '';
  return html`<p id="who">Signed in as <strong>${who.subject}</strong> (${who.method}).${
    who.approver ? '' : html` <span class="warn" id="read-only">You are not an approver: the acts are shown read-only.</span>`
  }</p>`;
}

export function decisionPage(row: EscalationRow, decided: boolean) {
  const text = decided
    ? `${row.status === 'APPROVED' ? 'Approved' : 'Rejected'} candidate act ${row.candidate_act_id}.`
    : `Candidate act ${row.candidate_act_id} was already ${row.status.toLowerCase()}${row.status === 'PENDING' ? ' and has expired' : ''}; nothing changed.`;
  return layout(
    decided ? row.status.toLowerCase() : 'unchanged',
    html`<h1 id="decision">${text}</h1><p>Binding digest <code>${row.binding_digest}</code>.</p><p><a href="/">Back to the pending acts</a></p>`,
  );
}

/**
 * The approve or reject form of one act: its token binds the act, the binding digest and the
 * decision — and, on an approval link's page, the link, which the decision spends.
 */
function decideForm(row: EscalationRow, decision: 'approve' | 'reject', tokens: NonNullable<FormTokens>, link?: string) {
  const token = tokens(['/decide', row.candidate_act_id, row.binding_digest, decision, ...(link ? [link] : [])]);
  const linkField = link ? html`<input type="hidden" name="link" value="${link}">` : '';
  return html`<form class="decide" method="post" action="/decide"><input type="hidden" name="csrf" value="${token}"><input type="hidden" name="act" value="${row.candidate_act_id}"><input type="hidden" name="digest" value="${row.binding_digest}">${linkField}<button class="${decision}" name="decision" value="${decision}">${decision === 'approve' ? 'Approve' : 'Reject'}</button></form>`;
}

function pendingAct(v: PendingView, tokens: FormTokens, link?: string) {
  const { act, row } = v;
  const provenance = act.instruction_provenance
    ? JSON.stringify(act.instruction_provenance)
    : 'not declared (an MCP client does not say where the instruction came from)';
  const args =
    v.args.state === 'ok'
      ? html`<pre class="arguments">${v.args.pretty}</pre>`
      : v.args.state === 'absent'
        ? html`<p class="warn">The arguments were not retained (purged after the retention period, or never kept); only their digest is known.</p>`
        : html`<p class="warn">The retained arguments do not match the act's digest: do not approve.</p>`;
  const pin = !v.pin
    ? html`<p class="warn">No pin is recorded for this tool and server.</p>`
    : v.pin.definition !== null
      ? html`<details><summary>Pinned definition (digest <code>${v.pin.pinned_digest}</code>)</summary><pre>${v.pin.definition}</pre></details>`
      : html`<p class="warn">The tool's definition changed since it was pinned (pinned ${v.pin.pinned_digest ?? 'never'}, seen ${v.pin.seen_digest}).</p>`;
  // The approve button is offered only when the person can see exactly what would run, and may decide.
  const approve = tokens && v.args.state === 'ok' ? decideForm(row, 'approve', tokens, link) : '';
  const reject = tokens ? decideForm(row, 'reject', tokens, link) : '';
  return html`<section class="act" data-act="${row.candidate_act_id}">
<h3>${act.tool.tool_id}</h3>
<dl>
<dt>Server identity</dt><dd>${act.tool.tool_endpoint ?? ''}</dd>
<dt>Consequence class</dt><dd>${act.consequence_class}</dd>
<dt>Provenance</dt><dd>${provenance}</dd>
<dt>Agent</dt><dd>${act.agent.agent_id}</dd>
<dt>Candidate act</dt><dd>${row.candidate_act_id}</dd>
<dt>Requested</dt><dd>${iso(row.requested_at)}</dd>
<dt>Expires</dt><dd>${iso(row.expires_at)}</dd>
<dt>Arguments digest</dt><dd class="arguments-digest">${act.arguments_digest.value}</dd>
<dt>Binding digest</dt><dd class="binding-digest">${row.binding_digest}</dd>
</dl>
<h4>Arguments</h4>
${args}
${pin}
<p>${approve}${reject}</p>
</section>`;
}

function unpinnedTool(t: ToolPinTable, tokens: FormTokens) {
  const pinForm = tokens
    ? html`<form class="decide" method="post" action="/pin"><input type="hidden" name="csrf" value="${tokens(['/pin', t.server_id, t.tool_name, t.seen_digest])}"><input type="hidden" name="server" value="${t.server_id}"><input type="hidden" name="tool" value="${t.tool_name}"><input type="hidden" name="digest" value="${t.seen_digest}"><button class="approve">Pin this definition</button></form>`
    : '';
  return html`<section class="act" data-tool="${t.tool_name}">
<h3>${t.tool_name}</h3>
<dl>
<dt>Server identity</dt><dd>${t.server_id}</dd>
<dt>Server says it is</dt><dd>${t.server_info ?? ''}</dd>
<dt>State</dt><dd>${t.pinned_digest === null ? 'never pinned' : `changed since pinned (pinned ${t.pinned_digest})`}</dd>
<dt>Definition digest</dt><dd class="definition-digest">${t.seen_digest}</dd>
</dl>
<pre class="definition">${JSON.stringify(JSON.parse(t.seen_definition), null, 2)}</pre>
${pinForm}
</section>`;
}

export function pendingPage(
  pending: PendingView[],
  decided: EscalationRow[],
  unpinned: ToolPinTable[],
  tokens: FormTokens,
  now: number,
  who?: ApproverIdentity,
) {
  return layout(
    'Approvals',
    html`<h1>Acts waiting for a person</h1>${signedInAs(who)}
<p>Approving binds the binding digest shown: the act runs once, with exactly these arguments. As of ${iso(now)}.</p>
${pending.length ? pending.map((v) => pendingAct(v, tokens)) : html`<p id="none-pending">No act is waiting.</p>`}
<h2>Decided acts</h2>
<table><thead><tr><th>Decided</th><th>Decision</th><th>By</th><th>Tool</th><th>Candidate act</th><th>Binding digest</th></tr></thead><tbody>
${decided.map((r) => {
  const act = JSON.parse(r.act_json) as AgentCandidateAct;
  return html`<tr><td>${iso(r.decided_at)}</td><td>${r.status}</td><td>${r.approver ?? ''}</td><td>${act.tool.tool_id}</td><td class="mono">${r.candidate_act_id}</td><td class="mono">${r.binding_digest}</td></tr>`;
})}
</tbody></table>
<h2>Tools not pinned to their current definition</h2>
<p>A tool is listed to the agent and callable only with a definition a person pinned. Read the whole definition: its description is text the model follows.</p>
${unpinned.length ? unpinned.map((t) => unpinnedTool(t, tokens)) : html`<p>Every tool seen is pinned to its current definition.</p>`}`,
  );
}

/** An approval link's page: exactly its act, decided through the link (which the decision spends). */
export function actPage(v: PendingView, tokens: FormTokens, link: string, linkExpiresAt: number, who?: ApproverIdentity) {
  return layout(
    'Approve this act',
    html`<h1>An agent's call waits for a person</h1>${signedInAs(who)}
<p>This link decides this act only, once, until ${iso(linkExpiresAt)}. Approving binds the binding digest shown: the act runs once, with exactly these arguments.</p>
${pendingAct(v, tokens, link)}`,
  );
}

/**
 * The sign-in an approval link shows without a session: the link carries no credential, the
 * approver's token opens the session. The cookie is SameSite=Strict, so a link followed from
 * another site arrives without it: "Continue" is a same-site navigation that carries it.
 */
export function signInPage(link: string) {
  return layout(
    'Sign in',
    html`<h1>Sign in to decide this act</h1>
<p>An approval link opens the page at one act; deciding needs the approver's session. Enter the token printed when the approvals page started.</p>
<form class="signin" method="post" action="/signin"><input type="hidden" name="link" value="${link}"><label>Token <input type="password" name="token" autocomplete="off" required></label> <button class="approve">Sign in</button></form>
<p>Signed in already in this browser? <a id="continue" href="/act/${link}">Continue to the act</a>.</p>`,
  );
}

/** Which sign-ins the page offers to known approvers. */
export interface SignInMethods {
  oidc: boolean;
  passkey: boolean;
}

/**
 * The sign-in of known approvers (OpenID Connect, passkeys), shown for any page asked for without a
 * session; `returnTo` (one of the page's own paths, or an approval link's) is where it leads back.
 * With passkeys it loads the ceremony script under `nonce`.
 */
export function approverSignInPage(methods: SignInMethods, returnTo: string, nonce?: string) {
  const oidc = methods.oidc
    ? html`<p><a class="button approve" id="signin-oidc" href="/signin/oidc?return=${encodeURIComponent(returnTo)}">Sign in with your organization's account</a></p>`
    : '';
  const passkey = methods.passkey
    ? html`<p><button class="approve" id="signin-passkey" data-ceremony="signin" data-return="${returnTo}">Sign in with a passkey</button></p>`
    : '';
  return layout(
    'Sign in',
    html`<h1>Sign in to the approvals page</h1>
<p>Approvers are known people: sign in to see the acts waiting for a person${returnTo.startsWith('/act/') ? ' and decide this one' : ''}.</p>
${oidc}${passkey}<p id="ceremony-status" role="status" aria-live="polite"></p>`,
    methods.passkey ? nonce : undefined,
  );
}

/** A one-time enrollment link's page: create a passkey for `subject` (the link is spent by it). */
export function enrollPage(subject: string, token: string, nonce: string) {
  return layout(
    'Enroll a passkey',
    html`<h1>Enroll a passkey</h1>
<p>This link enrolls one passkey for <strong id="enroll-subject">${subject}</strong> on this approvals page, once.</p>
<p><button class="approve" id="enroll" data-ceremony="enroll" data-token="${token}">Create a passkey</button></p>
<p id="ceremony-status" role="status" aria-live="polite"></p>`,
    nonce,
  );
}

/**
 * After an OpenID Connect sign-in: the provider's redirect back is a cross-site navigation, and a
 * SameSite=Strict session cookie is not sent on the redirect that ends it; a refresh from this page
 * (and its link) is a same-site navigation that carries it.
 */
export function signedInPage(who: ApproverIdentity, next: string) {
  return layout(
    'Signed in',
    html`<h1>Signed in</h1>${signedInAs(who)}<p><a id="continue" href="${next}">Continue</a></p>`,
    undefined,
    next,
  );
}

export interface AuditFilterShown {
  kind: string;
  code: string;
  actor: string;
  act: string;
  since: string;
}

/** The audit chain as `vrp gate audit export` prints it (ids, codes, digests), newest first, filterable. */
export function auditPage(trail: { entries: AuditTrailEntry[]; chain: number }, f: AuditFilterShown, maxRows: number) {
  const { entries, chain } = trail;
  const filtered = Object.values(f).some((v) => v !== '');
  const count =
    entries.length === maxRows
      ? `The newest ${maxRows} matching entries of ${chain} in the chain.`
      : `${entries.length} ${filtered ? 'matching entries' : 'entries'} of ${chain} in the chain.`;
  return layout(
    'Audit trail',
    html`<h1>Audit trail</h1>
<p>The hash-chained audit log, as <code>vrp gate audit export</code> prints it (ids, codes and digests, never arguments); <code>vrp gate audit verify</code> checks the chain.</p>
<form method="get" action="/audit">
<label>Kind <select name="kind">${['', ...AUDIT_KINDS].map((k) => html`<option value="${k}"${k === f.kind ? ' selected' : ''}>${k || 'any'}</option>`)}</select></label>
<label>Code <input name="code" value="${f.code}" placeholder="EF_005"></label>
<label>Actor <input name="actor" value="${f.actor}"></label>
<label>Act id contains <input name="act" value="${f.act}"></label>
<label>Since (ISO date) <input name="since" value="${f.since}"></label>
<button>Filter</button>
</form>
<p id="audit-count">${count}</p>
<table><thead><tr><th>Seq</th><th>When</th><th>Kind</th><th>Code</th><th>Actor</th><th>Tool</th><th>Server</th><th>Candidate act</th><th>Digest</th></tr></thead><tbody>
${entries.map(
  (e) =>
    html`<tr data-seq="${e.seq}"><td>${e.seq}</td><td>${iso(e.at)}</td><td>${e.kind}</td><td>${e.code ?? ''}</td><td>${e.actor ?? ''}</td><td>${e.tool ?? ''}</td><td class="mono">${e.server ?? ''}</td><td class="mono">${e.act_id ?? ''}</td><td class="mono">${e.digest ?? ''}</td></tr>`,
)}
</tbody></table>`,
  );
}
