/**
 * The platform operator console as an operator uses it (issue 35 item 2), in real Chromium against
 * a platform on PostgreSQL holding 10,000 tenants (seeded with one INSERT … SELECT generate_series),
 * served over https with the console on its loopback listener: an operator passkey enrolled
 * through the one-time link `vrp platform console enroll --role operator` makes (Chromium's virtual
 * authenticator), sign-in, one tenant found among 10,000 by search and disabled behind its
 * confirmation step — and that tenant's next offer request refused; the attacks (no session, a
 * change posted without its form token, a support passkey trying to change anything); the fleet
 * plots; and axe-core on every operator page at 390 and 1280 px wide.
 *
 * Without Chromium (`VRPKIT_CHROMIUM`) or PostgreSQL (`VRPKIT_TEST_PG_URL`) the file is skipped,
 * saying so. VRPKIT_UPDATE_SCREENSHOTS=1 rewrites the operator console screenshots in docs/img/.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { sampleProperty } from '@vrpkit/node';
import { enrollOperatorConsole, type PlatformStore, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { chartLegibility, contextWithAuthenticator, hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { repoRoot } from '@vrpkit/testkit/cli';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newMasterKey, openInitialised, tempDir, tenantGet } from './helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const BROWSER = hasChromium('platform operator console');
const pgs = pgTestSchemas('platform operator console', 'the operator console over 10,000 tenants in Chromium');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SCREENSHOTS = process.env.VRPKIT_UPDATE_SCREENSHOTS === '1';
const NOW = Date.now();
const TENANTS = 10_000;
/** The tenant the operator looks for: a real one (its own key), among 10,000 seeded rows. */
const TARGET = 'cliff-house-4711.example';
const master = newMasterKey();
const stay = (() => {
  const d = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
  return `check_in=${d(20)}&check_out=${d(23)}&guests=2`;
})();

describe.skipIf(!BROWSER || !pgs)('platform operator console in Chromium over PostgreSQL', () => {
  const tmp = tempDir('operator-console');
  let store: PlatformStore;
  let served: ServedPlatform;
  let browser: Browser;
  let operator: { context: BrowserContext; page: Page };
  let origin: string;
  const offerStatus = async () => (await tenantGet(served.port, served.caPem!, TARGET, `${OFFER_ENDPOINT_PATH}?${stay}`)).status;

  beforeAll(async () => {
    const url = pgs!.schemaUrl('opconsole');
    const schema = new URL(url).searchParams.get('schema')!;
    store = await openInitialised(url, master, { operatorDomain: 'platform.example' });
    await store.addTenants(master, [{ domain: TARGET, property: sampleProperty(NOW) }]);
    // 9,999 more tenants in one statement: rows enough to page and search through (the list reads no keys).
    const property = JSON.stringify(sampleProperty(NOW)).replaceAll("'", "''");
    const at = new Date(NOW).toISOString();
    await pgs!.query(
      `INSERT INTO platform_tenant (domain, node_id, status, property, revision, created_at, updated_at)
       SELECT 'villa-' || lpad(i::text, 5, '0') || '.example', 'villa-' || lpad(i::text, 5, '0') || '.example',
              CASE WHEN i % 10 = 0 THEN 'disabled' ELSE 'active' END, '${property}', 1, '${at}', '${at}'
       FROM generate_series(1, ${TENANTS - 1}) AS i`,
      schema,
    );
    served = await servePlatform({
      store,
      masterKeys: [master],
      tls: { kind: 'dev', dir: join(tmp, 'dev-tls') },
      console: { port: 0, sampleIntervalMs: 1000 },
    });
    origin = served.console?.origin ?? '';
    browser = await launchChromium();
    operator = await contextWithAuthenticator(browser, 390);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
  });

  it('holds 10,000 tenants and serves the one to find', async () => {
    expect(await store.countTenants()).toBe(TENANTS);
    expect(await offerStatus()).toBe(200);
  });

  it('listens on localhost and, without a session, shows nothing but the sign-in page', async () => {
    expect(origin).toMatch(/^http:\/\/localhost:\d+$/);
    const { page } = operator;
    for (const path of ['/tenants', `/tenants/${TARGET}`, '/fleet', `/tenants/${TARGET}/disable/confirm`]) {
      const res = await page.goto(`${origin}${path}`);
      expect(res?.status()).toBe(401);
      await expect(page.locator('h1').textContent()).resolves.toBe('Sign in');
      expect(await page.locator('nav').count()).toBe(0);
    }
    const post = await page.request.post(`${origin}/tenants/status`, { form: { domain: TARGET, status: 'disabled' } });
    expect(post.status()).toBe(401);
    expect(await offerStatus()).toBe(200);
  });

  it('enrolls an operator passkey through the one-time link and is signed in; the link works only once', async () => {
    const { link, complete, role } = await enrollOperatorConsole(store, 'operator');
    expect({ complete, role }).toEqual({ complete: true, role: 'operator' });
    const { page } = operator;
    await page.goto(link);
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await page.waitForURL(`${origin}/tenants`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Tenants');
    expect((await page.goto(link))?.status()).toBe(403);
  });

  it('signs out, and signs in again with the enrolled passkey', async () => {
    const { page } = operator;
    await page.goto(`${origin}/tenants`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/signin`);
    expect((await page.goto(`${origin}/tenants`))?.status()).toBe(401);
    await page.goto(`${origin}/signin`);
    await page.getByRole('button', { name: 'Sign in with your passkey' }).click();
    await page.waitForURL(`${origin}/tenants`);
  });

  it('pages through the tenants and finds one among 10,000 by its domain', async () => {
    const { page } = operator;
    await page.goto(`${origin}/tenants`);
    await expect(page.locator('main > p').first().textContent()).resolves.toMatch(/^9001 active, 999 disabled/);
    expect(await page.locator('table tbody tr').count()).toBe(50);
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect(page.locator('table tbody tr td a').first().textContent()).resolves.toBe('villa-00050.example');
    await page.goto(`${origin}/tenants`);
    const started = performance.now();
    await page.getByLabel('Domain or node id').fill('cliff-house');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=cliff-house/);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(await page.locator('table tbody tr').count()).toBe(1);
    if (SCREENSHOTS) await page.screenshot({ path: join(repoRoot, 'docs/img/platform-console-tenants.png'), fullPage: true });
    await page.getByRole('link', { name: TARGET }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe(TARGET);
    await expect(page.locator('table:has(caption:text-is("Signing keys")) tbody td:nth-child(2)').allTextContents()).resolves.toEqual([
      'active',
    ]);
  });

  it('refuses a change posted without its form token, or with the token of another form, and changes nothing', async () => {
    const { page } = operator;
    const bare = await page.request.post(`${origin}/tenants/status`, { form: { domain: TARGET, status: 'disabled' } });
    expect(bare.status()).toBe(403);
    await page.goto(`${origin}/tenants/${TARGET}/rotate/confirm`);
    const rotateToken = await page.locator('form[action="/tenants/rotate"] input[name=form_token]').inputValue();
    const borrowed = await page.request.post(`${origin}/tenants/status`, {
      form: { domain: TARGET, status: 'disabled', form_token: rotateToken },
    });
    expect(borrowed.status()).toBe(403);
    expect((await store.showTenant(TARGET)).status).toBe('active');
    expect(await offerStatus()).toBe(200);
  });

  it('rotates the tenant key behind its confirmation step, audited as the console operator', async () => {
    const { page } = operator;
    await page.goto(`${origin}/tenants/${TARGET}`);
    await page.getByRole('link', { name: 'Rotate the signing key…' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Rotate the key');
    await page.getByRole('button', { name: 'Yes, rotate the key' }).click();
    await page.waitForURL(`${origin}/tenants/${TARGET}`);
    const keys = (await store.showTenant(TARGET)).keys.map((k) => k.status);
    expect(keys.sort()).toEqual(['active', 'retired']);
    await expect(page.locator('main').textContent()).resolves.toMatch(/console:operator:[0-9a-f]{12}\s*key_rotate/);
    expect(await offerStatus()).toBe(200);
  });

  it('disables the tenant behind its confirmation step; its next offer request is refused', async () => {
    const { page } = operator;
    await page.goto(`${origin}/tenants/${TARGET}`);
    await page.getByRole('link', { name: 'Disable this tenant…' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Disable the tenant');
    if (SCREENSHOTS) await page.screenshot({ path: join(repoRoot, 'docs/img/platform-console-confirm.png'), fullPage: true });
    await page.getByRole('button', { name: 'Yes, disable the tenant' }).click();
    await page.waitForURL(`${origin}/tenants/${TARGET}`, { timeout: 30_000 });
    await expect(page.locator('main').textContent()).resolves.toMatch(/Status\s*disabled/);
    expect(await offerStatus()).toBe(421);
    await expect(page.locator('main').textContent()).resolves.toMatch(/console:operator:[0-9a-f]{12}\s*tenant_disable/);
    if (SCREENSHOTS) await page.screenshot({ path: join(repoRoot, 'docs/img/platform-console-tenant.png'), fullPage: true });
  });

  it('lets a support passkey read everything and change nothing', async () => {
    const support = await contextWithAuthenticator(browser, 1280);
    try {
      const { link } = await enrollOperatorConsole(store, 'support');
      const { page } = support;
      await page.goto(link);
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await page.waitForURL(`${origin}/tenants`);
      await page.goto(`${origin}/tenants/${TARGET}`);
      await expect(page.locator('main').textContent()).resolves.toContain('support role: read only');
      expect(await page.getByRole('link', { name: 'Enable this tenant…' }).count()).toBe(0);
      // The passkeys are listed (with their roles); removing one is a change, refused at its confirmation step and its post.
      await page.goto(`${origin}/passkeys`);
      await expect(page.locator('table').textContent()).resolves.toMatch(/operator[\s\S]*support/);
      for (const step of ['enable', 'disable', 'rotate']) {
        const res = await page.goto(`${origin}/tenants/${TARGET}/${step}/confirm`);
        expect(res?.status()).toBe(403);
        expect(res?.headers()['x-vrp-error-code']).toBe('console_read_only');
      }
      // Even with a valid token of an operator's form (from another session: worthless here) or none at all.
      for (const [action, form] of [
        ['/tenants/status', { domain: TARGET, status: 'active' }],
        ['/tenants/rotate', { domain: TARGET }],
        ['/passkeys/remove', { id: 'any' }],
      ] as const) {
        const res = await page.request.post(`${origin}${action}`, { form, headers: { origin } });
        expect(res.status()).toBe(403);
        expect(res.headers()['x-vrp-error-code']).toBe('console_read_only');
      }
      const removal = await page.goto(`${origin}/passkeys/remove/confirm?id=any`);
      expect(removal?.status()).toBe(403);
      expect((await store.showTenant(TARGET)).status).toBe('disabled');
      expect(await offerStatus()).toBe(421);
    } finally {
      await support.context.close();
    }
  });

  it('plots fleet health from the metrics the platform exports', async () => {
    const { page } = operator;
    // A feed failing at its host, as a sync worker records it.
    await store.addTenantFeeds([{ domain: 'villa-00001.example', name: 'ota', url: 'https://ical.ota.example/export.ics?t=secret' }]);
    await store.db.updateTable('platform_tenant_feed').set({ last_error: 'feed_http_error: 503' }).execute();
    await expect
      .poll(
        async () => {
          await page.goto(`${origin}/fleet`);
          return page.locator('figure svg[role=img]').count();
        },
        { timeout: 10_000 },
      )
      .toBe(6);
    const numbers = (await page.locator('details table').allTextContents()).join(' ');
    expect(numbers).toMatch(/oldest/);
    await expect
      .poll(async () => {
        await page.goto(`${origin}/fleet`);
        return page.locator('main').textContent();
      })
      .toMatch(/ical\.ota\.example\s*1/);
    expect(await page.locator('main').textContent()).not.toContain('secret');
    expect(numbers).toMatch(/enabled tenants\s*900[01]/);
    // On a phone every chart fits the column, its text stays legible, and the time ticks name distinct minutes.
    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`${origin}/fleet`);
    const seen = await chartLegibility(page);
    expect(seen.overflows).toBe(false);
    expect(seen.smallestTextPx).toBeGreaterThanOrEqual(11);
    expect(seen.axisLabels.length).toBeGreaterThanOrEqual(12);
    for (const labels of seen.axisLabels) expect(new Set(labels).size).toBe(labels.length);
    if (SCREENSHOTS) await page.screenshot({ path: join(repoRoot, 'docs/img/platform-console-fleet.png'), fullPage: true });
  });

  it('has no serious or critical axe-core violation on any operator page, at 390 and 1280 px', async () => {
    // axe is injected as a script of the test's own, which the console's CSP rightly refuses: a second context that bypasses it, with the same session.
    const axeContext = await browser.newContext({ bypassCSP: true, storageState: await operator.context.storageState() });
    const paths = [
      '/tenants',
      '/tenants?q=villa-0&status=active',
      `/tenants/${TARGET}`,
      `/tenants/${TARGET}/enable/confirm`,
      '/fleet',
      '/passkeys',
    ];
    const found: string[] = [];
    for (const width of [390, 1280]) {
      const p = await axeContext.newPage();
      await p.setViewportSize({ width, height: 900 });
      for (const path of [...paths, 'signin']) {
        if (path === 'signin') await p.context().clearCookies();
        await p.goto(path === 'signin' ? `${origin}/signin` : `${origin}${path}`);
        await p.addScriptTag({ path: AXE });
        const violations = await p.evaluate(async () => {
          const r = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe.run();
          return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
        });
        for (const id of violations) found.push(`${width}px ${path}: ${id}`);
      }
      await p.close();
      if (width === 390) await axeContext.addCookies((await operator.context.storageState()).cookies);
    }
    await axeContext.close();
    expect(found).toEqual([]);
  });
});
