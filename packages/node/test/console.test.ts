/**
 * The host console without a browser (issue 35): where its listener may be (loopback and private
 * by default, a public address only with `--console-public` and TLS), the Host check, that without
 * a session every page answers the sign-in page and no change is made, the passkey ceremonies'
 * refusals, the security headers, `vrp node console enroll`, the activity counters (bounded, per
 * hour, no request data) and the month grid. The signed-in pages are driven in Chromium
 * (console-browser.test.ts).
 */
import { join } from 'node:path';
import { initNode, listKeys, type ServedNode } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { type CliRun, type ListeningEvent, listeningEvent, runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { closeTestNode, type NodeClient, type RawAnswer, rawExchange, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACTIVITY_HOURS, Activity, countedFetch, MAX_REFUSAL_CODES } from '../src/console/activity.js';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../src/console/app.js';
import { monthNights } from '../src/console/calendar.js';
import { consoleHosts, consoleScheme } from '../src/console/listen.js';
import type { BlockedRange } from '../src/store/store.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** A request to the console with any Host header (fetch cannot set one); over https with `tls` (the SNI name and the CA). */
function consoleRequest(
  port: number,
  path: string,
  o: { method?: string; host?: string; headers?: Record<string, string>; body?: string; tls?: { servername: string; ca: string } } = {},
): Promise<RawAnswer> {
  return rawExchange({
    host: '127.0.0.1',
    port,
    path,
    method: o.method ?? 'GET',
    headers: { host: o.host ?? `localhost:${port}`, ...o.headers },
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...(o.tls ? { tls: o.tls } : {}),
  });
}

describe('where the console may listen', () => {
  it('takes loopback as http, a private address as https where the node has TLS, refuses a public one without --console-public, and without TLS', () => {
    expect(consoleScheme('127.0.0.1', { tls: true })).toBe('http');
    expect(consoleScheme('10.1.2.3', { tls: false })).toBe('http');
    expect(consoleScheme('10.1.2.3', { tls: true })).toBe('https'); // a passkey needs a secure context
    expect(consoleScheme('fd00::5', { tls: false })).toBe('http');
    expect(() => consoleScheme('203.0.113.7', { tls: true })).toThrow(expect.objectContaining({ code: 'console_listen_public' }));
    expect(() => consoleScheme('0.0.0.0', { tls: true })).toThrow(expect.objectContaining({ code: 'console_listen_public' }));
    expect(() => consoleScheme('203.0.113.7', { public: true, tls: false })).toThrow(
      expect.objectContaining({ code: 'console_public_needs_tls' }),
    );
    expect(consoleScheme('203.0.113.7', { public: true, tls: true })).toBe('https');
  });

  it('answers the listening address, localhost on loopback, and the names it was given, with its port (and without, on the default port)', () => {
    expect([...consoleHosts('http', '127.0.0.1', 8443, { names: ['Console.Villa.example'] })]).toEqual([
      '127.0.0.1:8443',
      'localhost:8443',
      'console.villa.example:8443',
    ]);
    expect([...consoleHosts('http', '::1', 9000, {})]).toEqual(['[::1]:9000', 'localhost:9000']);
    // On the scheme's default port a browser sends the name alone.
    expect([...consoleHosts('https', '10.0.0.5', 443, { tlsDomain: 'villa.example' })]).toEqual([
      '10.0.0.5:443',
      'villa.example:443',
      '10.0.0.5',
      'villa.example',
    ]);
  });

  it('a node asked for a console on a public address without --console-public does not start', async () => {
    const tmp = tempDir('console-public');
    const clock = testClock('2027-02-20T09:00:00Z');
    await expect(
      serveTestNode('console-public.example', join(tmp.dir, 'node'), clock, { console: { host: '203.0.113.7' } }),
    ).rejects.toMatchObject({
      code: 'console_listen_public',
    });
    tmp.cleanup();
  });
});

describe('a console on a public address with --console-public', () => {
  const tmp = tempDir('console-tls');
  const domain = 'console-tls.example';
  let node: ServedNode;
  let client: NodeClient;

  // 0.0.0.0 counts as public: the console must be asked for with `public`, and is served with the node's certificate.
  beforeAll(async () => {
    ({ node, client } = await serveTestNode(domain, join(tmp.dir, 'node'), testClock(Date.now()), {
      console: { host: '0.0.0.0', public: true },
    }));
  });
  afterAll(() => closeTestNode({ node, client }, tmp));

  it('speaks https with the node certificate, answers the canonical domain only, and sets Secure cookies', async () => {
    const port = node.console?.port ?? 0;
    expect(node.console?.origin).toBe(`https://${domain}:${port}`);
    const tls = { servername: domain, ca: node.caPem ?? '' };
    expect((await consoleRequest(port, '/signin', { host: `${domain}:${port}`, tls })).status).toBe(200);
    expect((await consoleRequest(port, '/signin', { host: `127.0.0.1:${port}`, tls })).status).toBe(421);
    const ceremony = await consoleRequest(port, '/signin/options', {
      method: 'POST',
      host: `${domain}:${port}`,
      headers: { 'content-type': 'application/json' },
      body: '{}',
      tls,
    });
    expect(ceremony.status).toBe(200);
    expect(String(ceremony.headers['set-cookie'])).toMatch(/HttpOnly.*Secure.*SameSite=Strict|Secure.*HttpOnly.*SameSite=Strict/);
    expect(JSON.parse(ceremony.text)).toMatchObject({ rpId: domain });
  });
});

describe('the console served beside a node, without a session', () => {
  const tmp = tempDir('console-http');
  const dataDir = join(tmp.dir, 'node');
  // The system clock's time: `vrp node console enroll` (in this process) dates its link by it.
  const clock = testClock(Date.now());
  let node: ServedNode;
  let client: NodeClient;
  let port: number;

  beforeAll(async () => {
    ({ node, client } = await serveTestNode('console-http.example', dataDir, clock, { console: {} }));
    port = node.console?.port ?? 0;
  });
  afterAll(() => closeTestNode({ node, client }, tmp));

  it('answers 421 to a foreign Host (DNS rebinding), before any page or asset', async () => {
    for (const host of [`evil.example:${port}`, `console-http.example:${port}`, `localhost:${port + 1}`, `127.0.0.2:${port}`])
      for (const path of ['/signin', '/inbox', '/assets/console.js'])
        expect((await consoleRequest(port, path, { host })).status, `${host} ${path}`).toBe(421);
  });

  it('shows nothing but the sign-in page on every page, with the security headers', async () => {
    for (const path of [
      '/',
      '/inbox',
      '/inbox/br_x',
      '/calendar',
      '/property',
      '/keys',
      '/keys/rotate',
      '/keys/revoke?kid=k',
      '/activity',
      '/nope',
    ]) {
      const res = await consoleRequest(port, path);
      expect(res.status, path).toBe(401);
      expect(res.text, path).toContain('<h1>Sign in</h1>');
      expect(res.text, path).not.toContain('<nav');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONSOLE_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:/);
  });

  it('makes no change without a session: a key rotation, a block and a decision posted are refused', async () => {
    const keys = await listKeys({ dataDir });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [path, body] of [
      ['/keys/rotate', ''],
      ['/calendar/block', 'from=2027-03-01&to=2027-03-02'],
      ['/inbox/decide', 'booking_id=br_x&decision=confirmed'],
      ['/property/publish', 'document=%7B%7D'],
      ['/property/check', 'document=%7B%7D'],
      ['/signout', ''],
    ] as const)
      expect((await consoleRequest(port, path, { method: 'POST', headers: form, body })).status, path).toBe(401);
    expect(await listKeys({ dataDir })).toEqual(keys);
  });

  it('refuses an enrollment without a valid one-time token, and ceremony posts from another site or not as JSON', async () => {
    expect((await consoleRequest(port, '/enroll?token=forged')).status).toBe(403);
    const json = { 'content-type': 'application/json' };
    const post = (path: string, headers: Record<string, string>, body: string) =>
      consoleRequest(port, path, { method: 'POST', headers, body });
    expect((await post('/enroll/options', json, '{"token":"forged"}')).text).toContain('console_enrollment_invalid');
    expect((await post('/signin/options', { ...json, 'sec-fetch-site': 'cross-site' }, '{}')).status).toBe(403);
    expect((await post('/signin/options', { ...json, origin: 'https://evil.example' }, '{}')).status).toBe(403);
    expect((await post('/signin/options', { 'content-type': 'text/plain' }, '{}')).status).toBe(415);
    expect((await post('/signin/verify', json, '{"response":{"id":"nobody"}}')).status).toBe(403);
  });

  it('serves its script, stylesheet and the WebAuthn browser bundle itself', async () => {
    for (const path of ['/assets/console.js', '/assets/webauthn.js', '/assets/console.css']) {
      const res = await consoleRequest(port, path);
      expect(res.status, path).toBe(200);
      expect(res.text.length, path).toBeGreaterThan(100);
    }
    expect((await consoleRequest(port, '/assets/webauthn.js')).text).toContain('SimpleWebAuthnBrowser');
  });

  it('vrp node console enroll prints a one-time link on the console that opens its enrollment page', async () => {
    const run = await runVrpInProcess(['node', 'console', 'enroll', '--data-dir', dataDir, '--json']);
    expect(run.code).toBe(0);
    const e = JSON.parse(run.stdout) as { link: string; complete: boolean; expires_at: string };
    expect(e.complete).toBe(true);
    const link = new URL(e.link);
    expect(link.origin).toBe(node.console?.origin);
    const page = await consoleRequest(port, `${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Create a passkey');
  });

  it('vrp node serve refuses --console with --workers (its sessions live in one process)', async () => {
    const run = await runVrpInProcess(['node', 'serve', '--data-dir', dataDir, '--dev', '--console', '--workers', '2']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('conflicting_options');
  });
});

describe('vrp node serve --console, the real command', { timeout: 180_000 }, () => {
  const tmp = tempDir('console-cli');
  const dataDir = join(tmp.dir, 'node');
  let run: CliRun | undefined;

  beforeAll(() => initNode({ domain: 'console-cli.example', dataDir }));
  afterAll(async () => {
    run?.child.kill('SIGTERM');
    await run?.exited;
    tmp.cleanup();
  });

  it('refuses a public --console-host without --console-public, and starts nothing', async () => {
    const refused = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--console', '--console-host', '203.0.113.7']);
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr()).toContain('console_listen_public');
  });

  it('announces the console beside the node, answering on localhost only', async () => {
    run = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--console']);
    const listening = (await listeningEvent(run)) as ListeningEvent & { console?: string };
    expect(listening.console).toMatch(/^http:\/\/localhost:\d+$/);
    const port = Number(new URL(listening.console ?? '').port);
    expect((await consoleRequest(port, '/signin')).status).toBe(200);
    expect((await consoleRequest(port, '/signin', { host: `console-cli.example:${port}` })).status).toBe(421);
  });
});

describe('activity counters', () => {
  const HOUR = 3_600_000;

  it('counts per surface and hour, keeps same-turn answers same-turn, and names refusals by their code', async () => {
    let t = Date.parse('2027-02-20T09:30:00Z');
    const cache = { hits: 0, misses: 0 };
    const activity = new Activity(() => t, cache);
    const app = new Hono();
    app.post('/mcp', (c) => c.json({ jsonrpc: '2.0', id: 1, result: {} }));
    app.get(OFFER_ENDPOINT_PATH, (c) => (c.req.query('bad') ? c.json({ error: { code: 'invalid_guests' } }, 400) : c.text('offer')));
    const fetch = countedFetch(
      (req) => app.fetch(req),
      activity,
      () => t,
    );
    const sync = fetch(new Request(`https://v.example${OFFER_ENDPOINT_PATH}?a=1`));
    expect(sync).toBeInstanceOf(Response); // not a promise: the fast path stays in the same turn
    await fetch(new Request(`https://v.example${OFFER_ENDPOINT_PATH}?bad=1`));
    await fetch(new Request('https://v.example/mcp', { method: 'POST' }));
    await fetch(new Request('https://v.example/.well-known/jwks.json'));
    cache.hits = 3;
    cache.misses = 1;
    await new Promise((r) => setTimeout(r, 20));
    const [hour] = activity.recent(24);
    expect(hour).toMatchObject({
      hour: Date.parse('2027-02-20T09:00:00Z'),
      requests: { http: 2, mcp: 1, a2a: 0, webmcp: 0 },
      cacheHits: 3,
      cacheMisses: 1,
    });
    expect([...(hour?.refusals ?? [])]).toEqual([['invalid_guests', 1]]);
    t += HOUR;
    activity.count('a2a', 200);
    expect(activity.recent(24).map((h) => h.requests.a2a)).toEqual([0, 1]);
  });

  it('is bounded: hours older than the window are dropped, and codes past the cap count as other', () => {
    let t = Date.parse('2027-02-20T09:30:00Z');
    const activity = new Activity(() => t);
    activity.count('http', 200);
    for (let i = 0; i < MAX_REFUSAL_CODES + 5; i++) activity.refusalCode(400, `code_${i}`, t);
    expect(activity.recent(1)[0]?.refusals.size).toBe(MAX_REFUSAL_CODES);
    expect(activity.recent(1)[0]?.refusals.get('other')).toBe(6); // 31 codes kept, the 6 past them as `other`
    t += (ACTIVITY_HOURS + 1) * HOUR;
    activity.count('http', 200);
    expect(activity.recent(ACTIVITY_HOURS * 2)).toHaveLength(1);
  });
});

describe('the month grid', () => {
  it('names each night: free, held or booked by its request, blocked by its feed or by hand', () => {
    const range = (id: string, start_date: string, end_date: string, kind: BlockedRange['kind'], feed_name: string | null = null) =>
      ({ id, property_id: 'p', start_date, end_date, kind, feed_name, note: null, created_at: '' }) as BlockedRange;
    const blocks = [
      range('br_held', '2027-03-01', '2027-03-03', 'booking'),
      range('br_done', '2027-03-05', '2027-03-06', 'booking'),
      range('b_other', '2027-03-10', '2027-03-11', 'booking'),
      range('imp', '2027-03-31', '2027-04-02', 'import', 'airbnb'),
      range('hand', '2027-02-27', '2027-03-02', 'block'),
    ];
    const bookings = new Map([
      ['br_held', { status: 'pending' }],
      ['br_done', { status: 'confirmed' }],
    ]) as never;
    const nights = new Map(monthNights('2027-03', blocks, bookings));
    expect(nights.size).toBe(31);
    expect(nights.get('2027-03-01')).toEqual({ state: 'held', booking: 'br_held' });
    expect(nights.get('2027-03-03')).toEqual({ state: 'free' });
    expect(nights.get('2027-03-05')).toEqual({ state: 'booked', booking: 'br_done' });
    expect(nights.get('2027-03-10')).toEqual({ state: 'booked', booking: 'b_other' });
    expect(nights.get('2027-03-31')).toEqual({ state: 'feed', feed: 'airbnb' });
    expect(new Map(monthNights('2027-02', blocks, bookings)).get('2027-02-28')).toEqual({ state: 'hand', note: null });
  });
});
