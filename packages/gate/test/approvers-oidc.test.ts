/**
 * Known approvers on the approvals page, signed in with OpenID Connect (issue 33 item 3), over real
 * HTTP against a real OpenID provider (`oidc-provider`, started here, with its own keys, codes and
 * ID tokens) on a real SQLite store whose escalations the real Gate makes:
 * - an approver signs in (authorization code + PKCE S256, state, nonce) and approves; the role comes
 *   from a listed subject or from the ID token's `groups` claim; the audit records `oidc:<subject>`
 *   with the decision, and the chain still verifies;
 * - a signed-in person without the role sees the acts read-only and cannot decide or pin (403
 *   `approver_role_required`, nothing decided);
 * - an approver cannot approve their own agent's act (403 `approver_self_approval`, nothing decided,
 *   the approval link not spent) unless the policy says `approval.self_approval: true`;
 * - a replayed callback (its state) and a replayed code sign no one in;
 * - an approval link opened without a session leads through the sign-in back to its act.
 * Without the token mode: no token opens a session.
 */
import { join } from 'node:path';
import {
  approvalLinkUrl,
  Gate,
  type GateStore,
  issueApprovalLink,
  loadPolicy,
  openSqliteStore,
  selfApprovalRule,
  verifyAuditChain,
} from '@vrpkit/gate';
import { signInAndConsent, startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalLinkDigest } from '../src/approvals/links.js';
import { type ApprovalsUi, startApprovalsUi } from '../src/ui/index.js';
import { escalatedPayout, freePort } from './approvers-support.js';
import { PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

const CLIENT_ID = 'approvals-page';
const CLIENT_SECRET = 'approvals-page-secret-for-tests';
// Real time: the provider's ID tokens are checked against the clock (iat, exp).
const clock = { now: () => Date.now() };
let as: TestAuthorizationServer;
let store: GateStore;
let gate: Gate;
/** Forbids self-approval (the test policy says nothing: the default). */
let ui: ApprovalsUi;
/** The same store under a policy with `approval.self_approval: true`. */
let lenient: ApprovalsUi;

/** An escalated payout by `principal`'s agent, its arguments kept for the page. */
const escalated = (principal?: string) => escalatedPayout(gate, store, clock.now(), principal);

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1) ?? '';

interface SignedIn {
  cookie: string;
  page: string;
  /** The callback URL the provider sent the browser to (code, state, iss). */
  callback: URL;
  /** The pending-sign-in cookie that callback was for. */
  pending: string;
}

/** Sign in on `page` as `login` at the provider, as a browser would (the provider's own sign-in and consent pages). */
async function signIn(page: ApprovalsUi, login: string, returnTo = '/'): Promise<SignedIn> {
  const start = await fetch(`${page.url}signin/oidc?return=${encodeURIComponent(returnTo)}`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const pending = cookieOf(start, 'vrp_gate_oidc');
  expect(start.headers.getSetCookie().join()).toMatch(/vrp_gate_oidc=[^;]+;.*HttpOnly.*SameSite=Lax/i);
  const callback = await signInAndConsent(start.headers.get('location')!, login, `${page.url}signin/oidc/callback`);
  const done = await fetch(callback, { headers: { cookie: pending }, redirect: 'manual' });
  expect(done.status).toBe(200);
  const cookie = cookieOf(done, 'vrp_gate_ui');
  expect(done.headers.getSetCookie().join()).toMatch(/vrp_gate_ui=[^;]+;.*HttpOnly.*SameSite=Strict/i);
  return { cookie, page: await done.text(), callback, pending };
}

/** The fields of `act`'s form whose button is `decision`, on `html`. */
function formOf(html: string, act: string, decision: 'approve' | 'reject'): Record<string, string> | undefined {
  const section = html.split('<section').find((s) => s.includes(`data-act="${act}"`));
  const form = section?.split('<form').find((f) => f.includes(`class="${decision}"`));
  return form ? Object.fromEntries([...form.matchAll(/name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!])) : undefined;
}

async function decide(page: ApprovalsUi, cookie: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${page.url}decide`, {
    method: 'POST',
    headers: { cookie, origin: new URL(page.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
}

/** Open the page as `cookie` and decide `act` with its own form. */
async function decideOnPage(page: ApprovalsUi, cookie: string, act: string, decision: 'approve' | 'reject'): Promise<Response> {
  const html = await (await fetch(page.url, { headers: { cookie } })).text();
  const form = formOf(html, act, decision);
  expect(form, `the ${decision} form of ${act}`).toBeDefined();
  return decide(page, cookie, { ...form!, decision });
}

beforeAll(async () => {
  const [port, lenientPort] = [await freePort(), await freePort()];
  as = await startAuthorizationServer({
    clients: [],
    extraClients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [port, lenientPort].map((p) => `http://127.0.0.1:${p}/signin/oidc/callback`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    // carol holds the role by the claim only; bob's group is another.
    accounts: { carol: { groups: ['approvers', 'staff'] }, bob: { groups: ['staff'] }, alice: { groups: ['staff'] } },
  });
  store = await openSqliteStore(join(tmpDir('approvers-oidc'), 'gate.db'));
  gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock });
  const approvers = {
    oidc: { issuer: as.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['groups'] },
    role: { subjects: ['alice'], claim: { name: 'groups', value: 'approvers' } },
  };
  const start = (p: number, selfApproval: boolean) =>
    startApprovalsUi({
      store,
      listen: { host: '127.0.0.1', port: p },
      approver: 'ops',
      approvers,
      selfApproval: selfApprovalRule(loadPolicy({ ...TEST_POLICY, approval: { self_approval: selfApproval } })),
      clock,
    });
  ui = await start(port, false);
  lenient = await start(lenientPort, true);
});
afterAll(async () => {
  await ui?.close();
  await lenient?.close();
  await store?.close();
  await as?.close();
  removeTmpDirs();
});

describe('approvers signed in with OpenID Connect', () => {
  it('no token exists and none opens a session; without a session every page is the sign-in, every POST refused', async () => {
    expect(ui.token).toBeUndefined();
    const page = await fetch(`${ui.url}?token=anything`, { redirect: 'manual' });
    expect(page.status).toBe(401);
    const html = await page.text();
    expect(html).toContain('href="/signin/oidc?return=%2F"');
    expect(page.headers.get('set-cookie')).toBeNull();
    const post = await decide(ui, '', { act: 'x', digest: 'y', decision: 'approve', csrf: 'z' });
    expect(post.status).toBe(401);
    expect(await post.text()).toContain('<code id="code">approver_signin_required</code>');
    expect((await fetch(`${ui.url}signin`, { method: 'POST', body: new URLSearchParams({ token: 'x' }) })).status).toBe(401);
  });

  it('an approver signs in (code + PKCE S256, state, nonce) and approves; the audit records oidc:alice and the chain verifies', async () => {
    const act = await escalated();
    const start = await fetch(`${ui.url}signin/oidc`, { redirect: 'manual' });
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(as.issuer);
    const q = authorize.searchParams;
    expect([q.get('response_type'), q.get('client_id'), q.get('code_challenge_method'), q.get('scope')]).toEqual([
      'code',
      CLIENT_ID,
      'S256',
      'openid groups',
    ]);
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get('redirect_uri')).toBe(`${ui.url}signin/oidc/callback`);

    const alice = await signIn(ui, 'alice');
    expect(alice.page).toContain('Signed in as <strong>alice</strong> (oidc).');
    expect(alice.page).toContain('<meta http-equiv="refresh" content="0; url=/">');
    const res = await decideOnPage(ui, alice.cookie, act.candidate_act_id, 'approve');
    expect(res.status).toBe(200);
    const row = await store.escalations.get(act.candidate_act_id);
    expect(row).toMatchObject({ status: 'APPROVED', approver: 'oidc:alice' });
    const entries = await store.audit.search({ kind: 'approve', act: act.candidate_act_id, limit: 5 });
    expect(entries.map((e) => e.actor)).toEqual(['oidc:alice']);
    expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({ ok: true });
  });

  it("the role from the ID token's claim: carol (groups holds approvers) decides", async () => {
    const act = await escalated();
    const carol = await signIn(ui, 'carol');
    expect(carol.page).not.toContain('read-only');
    expect((await decideOnPage(ui, carol.cookie, act.candidate_act_id, 'reject')).status).toBe(200);
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'REJECTED', approver: 'oidc:carol' });
  });

  it('a signed-in person without the role sees the acts read-only and cannot decide or pin: 403 approver_role_required, nothing decided', async () => {
    const act = await escalated();
    const bob = await signIn(ui, 'bob');
    const html = await (await fetch(ui.url, { headers: { cookie: bob.cookie } })).text();
    expect(html).toContain('id="read-only"');
    expect(html).toContain(`data-act="${act.candidate_act_id}"`);
    expect(html).not.toContain('<form class="decide"');
    // What an approver's form would post: refused before it is read.
    const row = (await store.escalations.get(act.candidate_act_id))!;
    for (const decision of ['approve', 'reject']) {
      const res = await decide(ui, bob.cookie, { act: act.candidate_act_id, digest: row.binding_digest, decision, csrf: 'x' });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('<code id="code">approver_role_required</code>');
    }
    const pin = await fetch(`${ui.url}pin`, {
      method: 'POST',
      headers: { cookie: bob.cookie, origin: new URL(ui.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ server: 's', tool: 't', digest: 'd', csrf: 'x' }),
    });
    expect(pin.status).toBe(403);
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'PENDING', approver: null });
  });

  it("an approver cannot approve their own agent's act (403 approver_self_approval; nothing decided, the link unspent) but may reject it", async () => {
    const own = await escalated('alice');
    const row = (await store.escalations.get(own.candidate_act_id))!;
    const { token } = await issueApprovalLink(store.approvalLinks, row, { now: clock.now() });
    const alice = await signIn(ui, 'alice', `/act/${token}`);
    expect(alice.page).toContain(`href="/act/${token}"`);
    const html = await (await fetch(approvalLinkUrl(ui.url, token), { headers: { cookie: alice.cookie } })).text();
    const form = formOf(html, own.candidate_act_id, 'approve')!;
    expect(form.link).toBe(token);
    const res = await decide(ui, alice.cookie, { ...form, decision: 'approve' });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<code id="code">approver_self_approval</code>');
    expect(await store.escalations.get(own.candidate_act_id)).toMatchObject({ status: 'PENDING', approver: null });
    expect((await store.audit.search({ act: own.candidate_act_id, kind: 'approve', limit: 5 })).length).toBe(0);
    // The link was not spent by the refusal: another approver decides through it.
    const carol = await signIn(ui, 'carol');
    const carolPage = await (await fetch(approvalLinkUrl(ui.url, token), { headers: { cookie: carol.cookie } })).text();
    expect((await decide(ui, carol.cookie, { ...formOf(carolPage, own.candidate_act_id, 'approve')!, decision: 'approve' })).status).toBe(
      200,
    );
    expect(await store.escalations.get(own.candidate_act_id)).toMatchObject({ status: 'APPROVED', approver: 'oidc:carol' });

    // Rejecting one's own act is no self-approval.
    const other = await escalated('alice');
    expect((await decideOnPage(ui, alice.cookie, other.candidate_act_id, 'reject')).status).toBe(200);
    expect(await store.escalations.get(other.candidate_act_id)).toMatchObject({ status: 'REJECTED', approver: 'oidc:alice' });
  });

  it('where the policy allows self-approval (approval.self_approval: true), the approver approves their own act', async () => {
    const own = await escalated('alice');
    const alice = await signIn(lenient, 'alice');
    expect((await decideOnPage(lenient, alice.cookie, own.candidate_act_id, 'approve')).status).toBe(200);
    expect(await store.escalations.get(own.candidate_act_id)).toMatchObject({ status: 'APPROVED', approver: 'oidc:alice' });
    expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({ ok: true });
  });

  it('a replayed callback (its state) and a replayed code sign no one in; a callback without its browser cookie neither', async () => {
    const first = await signIn(ui, 'alice');
    // The same callback again, with the same pending-sign-in cookie: the sign-in was taken.
    const replay = await fetch(first.callback, { headers: { cookie: first.pending }, redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('<code id="code">approver_oidc_state_invalid</code>');
    expect(cookieOf(replay, 'vrp_gate_ui')).toBe('');

    // The code replayed into a fresh sign-in (its own state, so only the code is old): the provider refuses it.
    const fresh = await fetch(`${ui.url}signin/oidc`, { redirect: 'manual' });
    const state = new URL(fresh.headers.get('location')!).searchParams.get('state')!;
    const forged = new URL(first.callback);
    forged.searchParams.set('state', state);
    const reused = await fetch(forged, { headers: { cookie: cookieOf(fresh, 'vrp_gate_oidc') }, redirect: 'manual' });
    expect(reused.status).toBe(401);
    expect(await reused.text()).toContain('<code id="code">approver_oidc_refused</code>');
    expect(cookieOf(reused, 'vrp_gate_ui')).toBe('');

    // A callback in a browser that did not start the sign-in (no cookie): nothing to finish.
    const started = await fetch(`${ui.url}signin/oidc`, { redirect: 'manual' });
    const callback = await signInAndConsent(started.headers.get('location')!, 'alice', `${ui.url}signin/oidc/callback`);
    const foreign = await fetch(callback, { redirect: 'manual' });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain('approver_oidc_state_invalid');
    // A state changed in transit: the sign-in it names is taken, and the state check refuses it.
    const again = await fetch(`${ui.url}signin/oidc`, { redirect: 'manual' });
    const tampered = await signInAndConsent(again.headers.get('location')!, 'alice', `${ui.url}signin/oidc/callback`);
    tampered.searchParams.set('state', 'another-state-value-entirely');
    const refused = await fetch(tampered, { headers: { cookie: cookieOf(again, 'vrp_gate_oidc') }, redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('approver_oidc_state_invalid');
  });

  it('an approval link opened without a session shows the sign-in, which leads back to exactly that act', async () => {
    const act = await escalated();
    const row = (await store.escalations.get(act.candidate_act_id))!;
    const { token } = await issueApprovalLink(store.approvalLinks, row, { now: clock.now() });
    const opened = await fetch(approvalLinkUrl(ui.url, token), { redirect: 'manual' });
    expect(opened.status).toBe(401);
    const signInHtml = await opened.text();
    expect(signInHtml).toContain(`href="/signin/oidc?return=%2Fact%2F${token}"`);
    expect(signInHtml).not.toContain(act.candidate_act_id);
    const alice = await signIn(ui, 'alice', `/act/${token}`);
    expect(alice.page).toContain(`<meta http-equiv="refresh" content="0; url=/act/${token}">`);
    const page = await (await fetch(approvalLinkUrl(ui.url, token), { headers: { cookie: alice.cookie } })).text();
    expect(page).toContain(`data-act="${act.candidate_act_id}"`);
    expect((await decide(ui, alice.cookie, { ...formOf(page, act.candidate_act_id, 'approve')!, decision: 'approve' })).status).toBe(200);
    expect(await store.approvalLinks.get(approvalLinkDigest(token))).toMatchObject({
      used_by: 'oidc:alice',
    });
  });
});
