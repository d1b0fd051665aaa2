/**
 * The host console mounted at a path behind the node's reverse proxy (`vrp node serve
 * --behind-proxy --console-path /console`), without a browser: a real forwarding proxy (node:http,
 * from 127.0.0.1, adding X-Forwarded-Proto/Host/For as nginx does) in front of a real node. Every
 * link, form action, asset URL, redirect and cookie `Path` is under the path; the origin the
 * ceremonies expect is the forwarded https one; a client reaching the node directly (another
 * loopback address, not a trusted proxy) is refused; bad option combinations are refused with codes.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { enrollConsole, initNode, type PemKeyPair, type ServedNode, serveNode } from '@vrpkit/node';
import { contextWithAuthenticator, hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { type RawAnswer, rawExchange, tempDir } from '@vrpkit/testkit/node';
import { createTestCa } from '@vrpkit/testkit/tls';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DOMAIN = 'console-proxy.example';
const BASE = '/console';
const ORIGIN = `https://${DOMAIN}`;

/** One request to `port` on 127.0.0.1, sent from `localAddress` (default 127.0.0.1). */
function send(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawAnswer> {
  const { method = 'GET', headers = {}, ...rest } = o;
  return rawExchange({ host: '127.0.0.1', port, path, method, headers, ...rest });
}

/**
 * A reverse proxy as a host runs one: everything it receives goes to the node's listener from
 * 127.0.0.1 (the trusted proxy), with the name the browser asked for and its own hop added;
 * with `tls` it terminates https itself (as in production), else it is reached over plain http.
 */
async function forwardingProxy(upstreamPort: number, tls?: PemKeyPair): Promise<{ port: number; close: () => Promise<void> }> {
  const handle = (inbound: IncomingMessage, outbound: ServerResponse) => {
    const forward = httpRequest(
      {
        host: '127.0.0.1',
        port: upstreamPort,
        path: inbound.url,
        method: inbound.method,
        headers: {
          ...inbound.headers,
          host: `127.0.0.1:${upstreamPort}`,
          'x-forwarded-proto': 'https',
          'x-forwarded-host': DOMAIN,
          'x-forwarded-for': inbound.socket.remoteAddress ?? '',
        },
      },
      (res) => {
        outbound.writeHead(res.statusCode ?? 502, res.headers);
        res.pipe(outbound);
      },
    );
    forward.on('error', () => outbound.writeHead(502).end());
    inbound.pipe(forward);
  };
  const server = tls ? createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, handle) : createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('the host console at /console behind the reverse proxy', () => {
  const tmp = tempDir('console-proxy');
  const dataDir = join(tmp.dir, 'node');
  let node: ServedNode;
  let proxy: { port: number; close: () => Promise<void> };
  const viaProxy = (path: string, o: Parameters<typeof send>[2] = {}) => send(proxy.port, path, o);

  beforeAll(async () => {
    await initNode({ domain: DOMAIN, dataDir });
    node = await serveNode({ dataDir, behindProxy: { trustedProxies: ['127.0.0.1'] }, console: { path: BASE } });
    proxy = await forwardingProxy(node.port);
  });
  afterAll(async () => {
    await proxy?.close();
    await node?.close();
    tmp.cleanup();
  });

  it('announces the console at the forwarded https origin and the path', () => {
    expect(node.console?.origin).toBe(`${ORIGIN}${BASE}`);
  });

  it('serves the sign-in page with its stylesheet and scripts under the path, and its own assets there', async () => {
    const signin = await viaProxy(`${BASE}/signin`);
    expect(signin.status).toBe(200);
    expect(signin.headers['content-security-policy']).toContain("form-action 'self'");
    expect(signin.text).toContain(`data-base="${BASE}"`);
    expect(signin.text).toContain(`href="${BASE}/assets/console.css"`);
    // Every URL on the page is under the path: no `href="/…"` or `src="/…"` outside it.
    for (const [, url] of signin.text.matchAll(/(?:href|src|action)="([^"#]*)"/g)) expect(url?.startsWith(`${BASE}/`), url).toBe(true);
    for (const path of ['/assets/console.js', '/assets/webauthn.js', '/assets/console.css'])
      expect((await viaProxy(`${BASE}${path}`)).status, path).toBe(200);
    // The script posts its ceremonies under the page's base path.
    expect((await viaProxy(`${BASE}/assets/console.js`)).text).toContain('base + path');
  });

  it('without a session every page is the sign-in page (401), and / redirects under the path', async () => {
    const inbox = await viaProxy(`${BASE}/inbox`);
    expect(inbox.status).toBe(401);
    expect(inbox.text).toContain('Sign in');
    const rotate = await viaProxy(`${BASE}/keys/rotate`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
      body: 'form_token=x',
    });
    expect(rotate.status).toBe(401);
    // Paths outside the console are still the node's own.
    expect((await viaProxy('/.well-known/vacation-rental.json')).status).toBe(200);
  });

  it('opens the enrollment link `vrp node console enroll` prints, and the ceremony cookie has Path=/console and Secure', async () => {
    const run = await runVrpInProcess(['node', 'console', 'enroll', '--data-dir', dataDir, '--json']);
    expect(run.code).toBe(0);
    const link = new URL((JSON.parse(run.stdout) as { link: string }).link);
    expect(link.origin).toBe(ORIGIN);
    expect(link.pathname).toBe(`${BASE}/enroll`);
    const page = await viaProxy(`${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Create a passkey');
    const token = link.searchParams.get('token') ?? '';
    const json = { 'content-type': 'application/json', origin: ORIGIN, 'sec-fetch-site': 'same-origin' };
    const options = await viaProxy(`${BASE}/enroll/options`, { method: 'POST', headers: json, body: JSON.stringify({ token }) });
    expect(options.status).toBe(200);
    // The relying party is the forwarded name, not the upstream address the proxy connects to.
    expect((JSON.parse(options.text) as { rp: { id: string } }).rp.id).toBe(DOMAIN);
    const cookie = String(options.headers['set-cookie']);
    expect(cookie).toContain(`Path=${BASE}`);
    expect(cookie).toContain('Secure');
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
  });

  it('refuses ceremony posts from another origin, including the upstream http one (cross-site rules unchanged)', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${node.port}`, `http://${DOMAIN}`]) {
      const res = await viaProxy(`${BASE}/signin/options`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: '{}',
      });
      expect(res.status, origin).toBe(403);
      expect(res.text, origin).toContain('cross_site_request');
    }
  });

  it('refuses a client that reaches the node directly, whatever forwarded headers it sends', async () => {
    const spoofed: Record<string, string>[] = [{}, { 'x-forwarded-proto': 'https', 'x-forwarded-host': DOMAIN, host: DOMAIN }];
    for (const headers of spoofed)
      for (const path of [`${BASE}/signin`, `${BASE}/assets/console.js`, BASE]) {
        const res = await send(node.port, path, { headers, localAddress: '127.0.0.2' });
        expect(res.status, path).toBe(403);
        expect(res.text, path).toContain('console_proxy_only');
      }
    // The node's own documents are still served to it.
    expect((await send(node.port, '/.well-known/vacation-rental.json', { localAddress: '127.0.0.2' })).status).toBe(200);
  });

  it('answers 421 when the trusted proxy forwards no name for the console', async () => {
    const res = await send(node.port, `${BASE}/signin`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(421);
  });
});

describe('--console-path refusals', () => {
  const tmp = tempDir('console-path-refusals');
  const dataDir = join(tmp.dir, 'node');
  beforeAll(() => initNode({ domain: DOMAIN, dataDir }));
  afterAll(() => tmp.cleanup());
  const proxy = { trustedProxies: ['127.0.0.1'] };

  it('refuses a path that is not /segment…, a path without --behind-proxy, and a path with listener options', async () => {
    for (const path of ['console', '/', '/console/', '/../x', '/a//b', '/.well-known', '/con sole'])
      await expect(serveNode({ dataDir, behindProxy: proxy, console: { path } }), path).rejects.toMatchObject({
        code: 'console_path_invalid',
      });
    await expect(serveNode({ dataDir, dev: true, console: { path: BASE } })).rejects.toMatchObject({ code: 'console_path_needs_proxy' });
    await expect(serveNode({ dataDir, behindProxy: proxy, console: { path: BASE, port: 9 } })).rejects.toMatchObject({
      code: 'console_path_conflict',
    });
  });

  it("refuses a path where the node answers itself (its own routes would be hidden): /book, /ucp, /mcp, /api/verified-stay-offer's /api", async () => {
    for (const path of ['/book', '/ucp', '/ucp/continue', '/mcp', '/api', '/readyz'])
      await expect(serveNode({ dataDir, behindProxy: proxy, console: { path } }), path).rejects.toMatchObject({
        code: 'console_path_taken',
      });
  });

  it('vrp node serve: --console-path without --behind-proxy, or with --console-host, is refused with its code', async () => {
    const alone = await runVrpInProcess(['node', 'serve', '--data-dir', dataDir, '--dev', '--console-path', BASE]);
    expect(alone.code).not.toBe(0);
    expect(alone.stderr).toContain('console_path_needs_proxy');
    const both = await runVrpInProcess([
      'node',
      'serve',
      '--data-dir',
      dataDir,
      '--behind-proxy',
      '--trusted-proxy',
      '127.0.0.1',
      '--console-path',
      BASE,
      '--console-host',
      '10.0.0.5',
    ]);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('console_path_conflict');
  });
});

describe.skipIf(!hasChromium('host console behind the proxy'))('the host console at /console behind the proxy, in Chromium', () => {
  const tmp = tempDir('console-proxy-browser');
  const dataDir = join(tmp.dir, 'node');
  const site = `${ORIGIN}${BASE}`;
  let node: ServedNode;
  let proxy: { port: number; close: () => Promise<void> };
  let browser: Browser;

  beforeAll(async () => {
    await initNode({ domain: DOMAIN, dataDir });
    node = await serveNode({ dataDir, behindProxy: { trustedProxies: ['127.0.0.1'] }, console: { path: BASE } });
    const cert = await (await createTestCa()).certFor(DOMAIN);
    proxy = await forwardingProxy(node.port, cert);
    // Chromium reaches https://DOMAIN (port 443) at the proxy, trusting exactly its key, as a browser trusts the site's certificate.
    const spki = new X509Certificate(cert.certPem).publicKey.export({ type: 'spki', format: 'der' });
    browser = await launchChromium([
      `--host-resolver-rules=MAP ${DOMAIN} 127.0.0.1:${proxy.port}`,
      `--ignore-certificate-errors-spki-list=${createHash('sha256').update(spki).digest('base64')}`,
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await node?.close();
    tmp.cleanup();
  });

  it('enrolls a passkey and signs in through the proxy at /console, every page and form under the path', async () => {
    const { page } = await contextWithAuthenticator(browser, 390);
    const { link } = enrollConsole({ dataDir });
    expect(link.startsWith(`${site}/enroll?token=`)).toBe(true);
    await page.goto(link);
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await page.waitForURL(`${site}/inbox`);
    expect(await page.locator('h1').textContent()).toBe('Inbox');
    const cookies = await page.context().cookies(`${site}/inbox`);
    expect(await page.context().cookies(`${ORIGIN}/`)).toEqual([]);
    expect(cookies.map((c) => [c.path, c.secure, c.httpOnly, c.sameSite])).toContainEqual([BASE, true, true, 'Strict']);
    // The navigation, a confirmation step's form and its cancel link all stay under the path.
    await page.getByRole('link', { name: 'Keys and health' }).click();
    await page.waitForURL(`${site}/keys`);
    await page.getByRole('link', { name: 'Rotate the signing key…' }).click();
    await page.waitForURL(`${site}/keys/rotate`);
    expect(await page.locator('main form').getAttribute('action')).toBe(`${BASE}/keys/rotate`);
    // A form posted without its token is still refused (CSRF), through the proxy as directly.
    await page.locator('main form input[name="form_token"]').evaluate((i) => i.setAttribute('value', 'forged'));
    const refused = page.waitForResponse((r) => r.url() === `${site}/keys/rotate` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Yes, rotate the key' }).click();
    expect((await refused).status()).toBe(403);
    // Sign out, and sign in again with the passkey: the ceremony's origin is the forwarded https one.
    await page.goto(`${site}/inbox`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${site}/signin`);
    expect((await page.goto(`${site}/inbox`))?.status()).toBe(401);
    await page.goto(`${site}/signin`);
    await page.getByRole('button', { name: 'Sign in with your passkey' }).click();
    await page.waitForURL(`${site}/inbox`);
    expect(await page.locator('h1').textContent()).toBe('Inbox');
  });
});
