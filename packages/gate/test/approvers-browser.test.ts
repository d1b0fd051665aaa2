/**
 * Known approvers on the approvals page in real Chromium (issue 33 item 3), against a real OpenID
 * provider (`oidc-provider`) and a real SQLite store whose escalations the real Gate makes:
 * - a passkey enrolled through the one-time link `vrp gate approvers enroll` prints, with Chromium's
 *   virtual authenticator (CDP `WebAuthn.addVirtualAuthenticator`); the link works once; the
 *   approver signs in with the passkey from an approval link and approves that act;
 * - an approver signs in with OpenID Connect from an approval link (the provider's own sign-in and
 *   consent pages) and lands back at the act, and approves it;
 * - a signed-in person without the role sees the act without any button;
 * - the page runs only its own scripts, named by the response's CSP nonce; nothing is loaded from
 *   another origin; the audit records `passkey:dave` and `oidc:alice`, and the chain verifies.
 * Without Chromium (`VRPKIT_CHROMIUM`) the file is skipped, saying so.
 */
import { join } from 'node:path';
import {
  approvalLinkUrl,
  enrollmentUrl,
  Gate,
  type GateStore,
  issueApprovalLink,
  issueApproverEnrollment,
  loadPolicy,
  openSqliteStore,
  selfApprovalRule,
  verifyAuditChain,
} from '@vrpkit/gate';
import { contextWithAuthenticator, hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ApprovalsUi, startApprovalsUi } from '../src/ui/index.js';
import { escalatedPayout, freePort } from './approvers-support.js';
import { PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const BROWSER = hasChromium('gate approvers');
const clock = { now: () => Date.now() };

describe.skipIf(!BROWSER)('approvers sign in to the approvals page in Chromium', () => {
  let as: TestAuthorizationServer;
  let store: GateStore;
  let gate: Gate;
  let ui: ApprovalsUi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** The page as the browser opens it: a passkey's relying party must be a domain, so localhost, not 127.0.0.1. */
  let origin: string;
  /** Requests our page made to any other origin than its own and the provider's (none expected; the provider's own dev pages load fonts). */
  const foreign: string[] = [];
  const cspErrors: string[] = [];

  /** An escalated act and the approval link to it, on the browser's origin. */
  async function linkTo(principal?: string) {
    const act = await escalatedPayout(gate, store, clock.now(), principal);
    const row = (await store.escalations.get(act.candidate_act_id))!;
    const { token } = await issueApprovalLink(store.approvalLinks, row, { now: clock.now() });
    return { act, url: approvalLinkUrl(`${origin}/`, token) };
  }

  async function approveOnPage(actId: string) {
    await page.locator(`section[data-act="${actId}"] button.approve`).click();
    expect(await page.locator('#decision').textContent()).toBe(`Approved candidate act ${actId}.`);
  }

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    as = await startAuthorizationServer({
      clients: [],
      // A public client: PKCE alone protects the code's redemption.
      extraClients: [
        {
          client_id: 'approvals-page',
          token_endpoint_auth_method: 'none',
          redirect_uris: [`${origin}/signin/oidc/callback`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          id_token_signed_response_alg: 'ES256',
        },
      ],
    });
    store = await openSqliteStore(join(tmpDir('approvers-browser'), 'gate.db'));
    gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock });
    ui = await startApprovalsUi({
      store,
      listen: { host: '127.0.0.1', port },
      approver: 'ops',
      approvers: {
        oidc: { issuer: as.issuer, clientId: 'approvals-page' },
        passkeys: true,
        role: { subjects: ['alice', 'dave'] },
      },
      selfApproval: selfApprovalRule(loadPolicy(TEST_POLICY)),
      clock,
    });
    browser = await launchChromium();
    ({ context, page } = await contextWithAuthenticator(browser, 1280));
    page.on('request', (r) => {
      const at = new URL(r.url()).origin;
      const from = new URL(r.frame().url() || 'about:blank').origin;
      if (from === origin && at !== origin && at !== as.issuer) foreign.push(r.url());
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(`${page.url()} ${m.text()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await store?.close();
    await as?.close();
    removeTmpDirs();
  });

  it('enrolls a passkey through the one-time link and is signed in; the link works only once', async () => {
    const { token } = await issueApproverEnrollment(store.approverPasskeys, { subject: 'dave', now: clock.now() });
    const link = enrollmentUrl(`${origin}/`, token);
    const opened = await page.goto(link);
    expect(opened?.status()).toBe(200);
    // The page's scripts run under this response's nonce, and nothing else may.
    const csp = opened?.headers()['content-security-policy'] ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(await page.locator(`script[nonce]`).count()).toBe(2);
    expect(await page.locator('#enroll-subject').textContent()).toBe('dave');
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await page.waitForURL(`${origin}/`);
    expect(await page.locator('#who').textContent()).toBe('Signed in as dave (passkey).');
    expect(await store.approverPasskeys.credentialIdsOf('dave')).toHaveLength(1);
    expect((await page.goto(link))?.status()).toBe(403);
    expect(await page.locator('#code').textContent()).toBe('approver_enrollment_invalid');
  });

  it('signs in with the passkey from an approval link, lands at that act and approves it', async () => {
    await context.clearCookies();
    const { act, url } = await linkTo();
    expect((await page.goto(url))?.status()).toBe(401);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(url);
    expect(await page.locator('#who').textContent()).toBe('Signed in as dave (passkey).');
    await approveOnPage(act.candidate_act_id);
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'APPROVED', approver: 'passkey:dave' });
  });

  it("signs in with OpenID Connect from an approval link (the provider's pages), lands back at that act and approves it", async () => {
    await context.clearCookies();
    const { act, url } = await linkTo();
    expect((await page.goto(url))?.status()).toBe(401);
    await page.locator('#signin-oidc').click();
    await page.waitForURL((u) => u.origin === as.issuer);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    // The provider asks for consent once, then sends the browser back; the page refreshes to the act.
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(url);
    expect(await page.locator('#who').textContent()).toBe('Signed in as alice (oidc).');
    await approveOnPage(act.candidate_act_id);
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'APPROVED', approver: 'oidc:alice' });
  });

  it('a signed-in person without the role sees the act and no button to decide it', async () => {
    await context.clearCookies();
    const { act, url } = await linkTo();
    await page.goto(url);
    await page.locator('#signin-oidc').click();
    await page.waitForURL((u) => u.origin === as.issuer);
    await page.locator('input[name="login"]').fill('bob');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(url);
    expect(await page.locator('#read-only').count()).toBe(1);
    expect(await page.locator(`section[data-act="${act.candidate_act_id}"]`).count()).toBe(1);
    expect(await page.locator('button.approve, button.reject').count()).toBe(0);
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'PENDING' });
  });

  it('an approver cannot approve an act of their own where the policy forbids it: refused with the code, nothing decided', async () => {
    await context.clearCookies();
    const { act, url } = await linkTo('dave');
    await page.goto(url);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(url);
    expect(await page.locator('#who').textContent()).toBe('Signed in as dave (passkey).');
    await page.locator(`section[data-act="${act.candidate_act_id}"] button.approve`).click();
    expect(await page.locator('#code').textContent()).toBe('approver_self_approval');
    expect(await store.escalations.get(act.candidate_act_id)).toMatchObject({ status: 'PENDING' });
  });

  it('the audit records each decision with subject and method, and the chain verifies; no foreign request, no CSP violation', async () => {
    const approvals = await store.audit.search({ kind: 'approve', limit: 10 });
    expect(approvals.map((e) => e.actor).sort()).toEqual(['oidc:alice', 'passkey:dave']);
    expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({ ok: true });
    expect(foreign).toEqual([]);
    expect(cspErrors).toEqual([]);
  });
});
