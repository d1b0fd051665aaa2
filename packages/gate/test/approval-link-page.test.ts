/**
 * The approvals page opened by an approval link (ui/act-link.ts), over real HTTP on a real SQLite
 * store whose escalations the real Gate makes, and in real Chromium (skipped, saying so, without
 * `VRPKIT_CHROMIUM` or /usr/bin/chromium): the link shows exactly its act, asks the approver to
 * sign in (the link itself signs no one in), is spent by the one decision made through it, and a
 * reused, expired, unknown or foreign-act link decides nothing — also at a phone's 390 px.
 */
import { join } from 'node:path';
import { canonicalJson } from '@vrpkit/core';
import {
  type AgentCandidateAct,
  approvalLinkUrl,
  Gate,
  type GateStore,
  issueApprovalLink,
  loadPolicy,
  openSqliteStore,
  readApprovalLink,
} from '@vrpkit/gate';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalsUi, startApprovalsUi } from '../src/ui/index.js';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

const BROWSER = hasChromium('gate approval links');
const MIN = 60_000;
let t = Date.parse('2026-12-05T18:00:00Z');
const clock = { now: () => t };
let store: GateStore;
let gate: Gate;
let ui: ApprovalsUi;
let n = 0;

/** An escalated payout with its arguments kept for the page, and a link to it. */
async function escalatedWithLink(amount: string): Promise<{ act: AgentCandidateAct; url: string; token: string }> {
  const args = { amount, to: 'PT50 0002 0123 1234 5678 9015 4' };
  const act = makeAct({
    id: `pay-${n++}`,
    tool: 'payout_create',
    consequence_class: 'FINANCIAL',
    args,
    policy_state: await gate.policyState(),
    now: t,
    ttlMs: 30 * MIN,
  });
  expect((await gate.authorize(act)).status).toBe('escalated');
  await store.pendingArguments.record({
    candidate_act_id: act.candidate_act_id,
    arguments_json: canonicalJson(args),
    arguments_digest: act.arguments_digest.value,
    recorded_at: t,
  });
  const row = (await store.escalations.get(act.candidate_act_id))!;
  const { token } = await issueApprovalLink(store.approvalLinks, row, { now: t });
  return { act, url: approvalLinkUrl(ui.url, token), token };
}

async function signedIn(): Promise<string> {
  const login = await fetch(`${ui.url}?token=${ui.token}`, { redirect: 'manual' });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** The fields of the form whose button has class `decision` in `html`. */
function formOf(html: string, decision: 'approve' | 'reject'): Record<string, string> {
  const form = html.split('<form').find((f) => f.includes(`class="${decision}"`))!;
  return Object.fromEntries([...form.matchAll(/name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

beforeAll(async () => {
  store = await openSqliteStore(join(tmpDir('approval-link-page'), 'gate.db'));
  gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock });
  ui = await startApprovalsUi({ store, listen: { host: '127.0.0.1', port: 0 }, approver: 'alice', clock });
});
afterAll(async () => {
  await ui?.close();
  await store?.close();
  removeTmpDirs();
});

describe('an approval link over HTTP', () => {
  it('without a session: a sign-in form, never the act; the token (form or ?token=) leads back to the link', async () => {
    const { act, url, token } = await escalatedWithLink('10.00');
    const bare = await fetch(url, { redirect: 'manual' });
    expect(bare.status).toBe(401);
    const html = await bare.text();
    expect(html).toContain('action="/signin"');
    expect(html).not.toContain(act.candidate_act_id);
    const signin = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${ui.url}signin`, { method: 'POST', body: new URLSearchParams(body), headers, redirect: 'manual' });
    expect((await signin({ token: 'wrong', link: token })).status).toBe(401);
    expect((await signin({ token: ui.token!, link: token }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    const ok = await signin({ token: ui.token!, link: token });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/act/${token}`);
    expect(ok.headers.get('set-cookie')).toMatch(/HttpOnly.*SameSite=Strict|SameSite=Strict.*HttpOnly/);
    // A sign-in naming no link (or a malformed one) lands on the list, never elsewhere.
    expect((await signin({ token: ui.token!, link: '../../evil.example' })).headers.get('location')).toBe('/');
    const viaQuery = await fetch(`${url}?token=${ui.token}`, { redirect: 'manual' });
    expect(viaQuery.headers.get('location')).toBe(`/act/${token}`);
  });

  it('signed in: exactly its act; the decision through it spends it; reused, it decides nothing', async () => {
    const other = await escalatedWithLink('20.00');
    const { act, url, token } = await escalatedWithLink('30.00');
    const cookie = await signedIn();
    const page = await fetch(url, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`data-act="${act.candidate_act_id}"`);
    expect(html).not.toContain(`data-act="${other.act.candidate_act_id}"`);
    const approve = formOf(html, 'approve');
    expect(approve.link).toBe(token);
    const post = (fields: Record<string, string>) =>
      fetch(`${ui.url}decide`, { method: 'POST', headers: { cookie }, body: new URLSearchParams(fields), redirect: 'manual' });
    const decided = await post({ ...approve, decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(await decided.text()).toContain(`Approved candidate act ${act.candidate_act_id}.`);
    expect((await readApprovalLink(store.approvalLinks, token, t)).state).toBe('used');
    // The same form again (a reused link), even to reject: refused, the decision stays.
    const again = await post({ ...formOf(html, 'reject'), decision: 'reject' });
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('already used');
    expect((await store.escalations.get(act.candidate_act_id))?.status).toBe('APPROVED');
    const reopened = await fetch(url, { headers: { cookie } });
    expect(reopened.status).toBe(410);
    expect(await reopened.text()).not.toContain('class="approve"');
  });

  it('an expired, unknown or foreign-act link decides nothing and says so', async () => {
    const a = await escalatedWithLink('40.00');
    const b = await escalatedWithLink('50.00');
    const cookie = await signedIn();
    const linkPage = await (await fetch(a.url, { headers: { cookie } })).text();
    // Foreign: act b's own form with act a's link added: its form token binds no such pair.
    const listPage = await (await fetch(ui.url, { headers: { cookie } })).text();
    const bForm = formOf(listPage.slice(listPage.indexOf(`data-act="${b.act.candidate_act_id}"`)), 'approve');
    const foreign = await fetch(`${ui.url}decide`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ ...bForm, link: a.token, decision: 'approve' }),
    });
    expect(foreign.status).toBe(403);
    expect((await store.escalations.get(b.act.candidate_act_id))?.status).toBe('PENDING');
    expect((await readApprovalLink(store.approvalLinks, a.token, t)).state).toBe('open');

    const unknown = await fetch(`${ui.url}act/${'A'.repeat(43)}`, { headers: { cookie } });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('not valid');

    t += 10 * MIN; // the link's ten minutes are over; the escalation's thirty are not
    const expired = await fetch(a.url, { headers: { cookie } });
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('expired');
    const late = await fetch(`${ui.url}decide`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ ...formOf(linkPage, 'approve'), decision: 'approve' }),
    });
    expect(late.status).toBe(410);
    expect((await store.escalations.get(a.act.candidate_act_id))?.status).toBe('PENDING');
  });
});

describe.skipIf(!BROWSER)('an approval link in Chromium', () => {
  it('open the link, sign in, approve; the reused link approves nothing — on a desktop and at 390 px', { timeout: 120_000 }, async () => {
    const browser = await launchChromium();
    try {
      for (const [viewport, phone] of [
        [{ width: 1100, height: 900 }, false],
        [{ width: 390, height: 844 }, true],
      ] as const) {
        const { act, url } = await escalatedWithLink(`${viewport.width}.00`);
        // At 390 px as a phone lays out (isMobile honours the page's viewport meta, as a phone's browser does).
        const context = await browser.newContext({ viewport, isMobile: phone, hasTouch: phone });
        const tab = await context.newPage();
        expect((await tab.goto(url))?.status()).toBe(401);
        await tab.locator('input[name="token"]').fill(ui.token!);
        await tab.locator('form.signin button').click();
        await tab.waitForURL(url);
        const section = tab.locator(`section[data-act="${act.candidate_act_id}"]`);
        expect(await section.locator('pre.arguments').textContent()).toContain(`"amount": "${viewport.width}.00"`);
        expect(await tab.locator('section.act').count()).toBe(1);
        const button = section.locator('button.approve');
        const box = (await button.boundingBox())!;
        // Phone-sized first: the button is on the screen, the page does not scroll sideways.
        expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
        expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        await button.click();
        expect(await tab.locator('#decision').textContent()).toBe(`Approved candidate act ${act.candidate_act_id}.`);
        expect((await store.escalations.get(act.candidate_act_id))?.approver).toBe('token:alice');

        // The same link again, in the same signed-in browser: it decides nothing and says why.
        expect((await tab.goto(url))?.status()).toBe(410);
        expect(await tab.locator('h1').textContent()).toBe('Link already used');
        expect(await tab.locator('button.approve').count()).toBe(0);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  });
});
