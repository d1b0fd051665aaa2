import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { createHardenedFetch, JwksCache, NetworkError, parseConnectTo } from '@vrpkit/agent';
import { createTestCa, endlessBody, startHttpsServer, type TestCa, type TestServer } from '@vrpkit/testkit/tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
let ca: TestCa;
let server: TestServer;
let stalled: TestServer;

async function rejection(p: Promise<unknown>): Promise<NetworkError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(NetworkError);
  return e as NetworkError;
}

beforeAll(async () => {
  ca = await createTestCa();
  const cert = await ca.certFor(DOMAIN);
  server = await startHttpsServer(cert, (req, res) => {
    const url = new URL(req.url ?? '/', `https://${req.headers.host}`);
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect' && to) {
      res.writeHead(302, { location: to }).end();
    } else if (url.pathname === '/loop') {
      res.writeHead(301, { location: '/loop' }).end();
    } else if (url.pathname === '/big-declared') {
      res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
      res.write('x'.repeat(1024));
    } else if (url.pathname === '/endless') {
      endlessBody(res, 16 * 1024);
    } else if (url.pathname === '/bom.json') {
      // A UTF-8 byte order mark, then a non-ASCII member split across two writes (two chunks).
      const bytes = Buffer.from('\uFEFF{"keys":[{"kid":"nyckel-å","kty":"OKP"}]}', 'utf8');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(bytes.subarray(0, 30));
      setTimeout(() => res.end(bytes.subarray(30)), 20);
    } else {
      res
        .writeHead(200, { 'content-type': 'application/json', 'x-host': String(req.headers.host) })
        .end(JSON.stringify({ path: url.pathname }));
    }
  });
  // Accepts, sends headers, then never finishes the body.
  stalled = await startHttpsServer(cert, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  });
});

afterAll(async () => {
  await server?.close();
  await stalled?.close();
});

const hardened = (extra: Parameters<typeof createHardenedFetch>[0] = {}) =>
  createHardenedFetch({ connectTo: server.connectTo(DOMAIN, `book.${DOMAIN}`, 'evil.example'), ca: ca.ca.certPem, ...extra });

describe('createHardenedFetch', () => {
  it('reaches https://DOMAIN through connect-to with the extra CA; the Host stays the domain', async () => {
    const f = hardened();
    const res = await f(`https://${DOMAIN}/.well-known/vacation-rental.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-host')).toBe(DOMAIN);
    expect(await res.json()).toEqual({ path: '/.well-known/vacation-rental.json' });
    await f.close();
  });

  it('accepts the object form of the connect-to map', async () => {
    const f = createHardenedFetch({ connectTo: { [`${DOMAIN}:443`]: `127.0.0.1:${server.port}` }, ca: ca.ca.certPem });
    expect((await f(`https://${DOMAIN}/x`)).status).toBe(200);
    await f.close();
  });

  it('rejects a certificate it cannot verify: unknown CA, or a name the certificate does not cover', async () => {
    const noCa = createHardenedFetch({ connectTo: server.connectTo(DOMAIN) });
    expect((await rejection(noCa(`https://${DOMAIN}/`))).code).toBe('tls_failure');
    await noCa.close();
    const f = hardened();
    expect((await rejection(f('https://evil.example/'))).code).toBe('tls_failure');
    await f.close();
  });

  it('is https only; plain http only behind insecureAllowHttp', async () => {
    const f = hardened();
    expect((await rejection(f(`http://${DOMAIN}/`))).code).toBe('insecure_scheme');
    expect((await rejection(f('file:///etc/passwd'))).code).toBe('insecure_scheme');
    await f.close();
    const plain = createHttpServer((_req, res) => res.end('plain'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const port = (plain.address() as AddressInfo).port;
    const insecure = createHardenedFetch({ insecureAllowHttp: true, connectTo: [`${DOMAIN}:80:127.0.0.1:${port}`] });
    expect(await (await insecure(`http://${DOMAIN}/`)).text()).toBe('plain');
    await insecure.close();
    await new Promise<void>((r) => plain.close(() => r()));
  });

  it('follows redirects within the host domain only', async () => {
    const f = hardened();
    const same = await f(`https://${DOMAIN}/redirect?to=/landed`);
    expect(await same.json()).toEqual({ path: '/landed' });
    const sub = await f(`https://${DOMAIN}/redirect?to=${encodeURIComponent(`https://book.${DOMAIN}/sub`)}`);
    expect(await sub.json()).toEqual({ path: '/sub' });
    for (const to of ['https://evil.example/', `https://${DOMAIN}.evil.example/`, `https://${DOMAIN}:8443/`]) {
      expect((await rejection(f(`https://${DOMAIN}/redirect?to=${encodeURIComponent(to)}`))).code, to).toBe('redirect_off_domain');
    }
    expect((await rejection(f(`https://${DOMAIN}/redirect?to=${encodeURIComponent(`http://${DOMAIN}/`)}`))).code).toBe('insecure_scheme');
    expect((await rejection(f(`https://${DOMAIN}/loop`))).code).toBe('too_many_redirects');
    await f.close();
  });

  it('caps the response size: a declared or an endless body is an error, not a hang', async () => {
    const f = hardened({ maxBytes: 64 * 1024 });
    expect((await rejection(f(`https://${DOMAIN}/big-declared`))).code).toBe('response_too_large');
    expect((await rejection(f(`https://${DOMAIN}/endless`))).code).toBe('response_too_large');
    await f.close();
  });

  it('a server that stalls mid-body hits the total timeout', async () => {
    const f = createHardenedFetch({ connectTo: stalled.connectTo(DOMAIN), ca: ca.ca.certPem, totalTimeoutMs: 500 });
    expect((await rejection(f(`https://${DOMAIN}/`))).code).toBe('timeout');
    await f.close();
  });

  it('a peer that accepts TCP but never completes TLS hits the connect timeout', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: NetServer = createNetServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const f = createHardenedFetch({
      connectTo: [`${DOMAIN}:443:127.0.0.1:${port}`],
      ca: ca.ca.certPem,
      connectTimeoutMs: 300,
      totalTimeoutMs: 5_000,
    });
    expect((await rejection(f(`https://${DOMAIN}/`))).code).toBe('connect_timeout');
    await f.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('a name that does not resolve is a dns_failure', async () => {
    const f = createHardenedFetch({ connectTimeoutMs: 2_000, totalTimeoutMs: 4_000 });
    expect((await rejection(f('https://vrpkit-test.invalid/'))).code).toBe('dns_failure');
    await f.close();
  });

  it('the agent reads a body as Response.text() would (BOM dropped, UTF-8 across chunks), and the Response stays readable', async () => {
    const f = hardened();
    try {
      const url = `https://${DOMAIN}/bom.json`;
      const viaText = JSON.parse(await (await f(url)).text());
      expect(viaText.keys[0].kid).toBe('nyckel-å');
      // The JWKS cache reads through the agent's own GET (the bytes the hardened fetch already holds).
      const lookup = await new JwksCache({ fetch: f }).get(url);
      expect(lookup.ok && lookup.jwks).toEqual(viaText);
      const res = await f(url);
      expect(await res.json()).toEqual(viaText);
    } finally {
      await f.close();
    }
  });

  it('parses curl-style connect-to entries and rejects malformed ones', () => {
    expect([...parseConnectTo(['Villa.Example:443:127.0.0.1:8443', 'v6.example:443:[::1]:9443'])]).toEqual([
      ['villa.example:443', { host: '127.0.0.1', port: '8443' }],
      ['v6.example:443', { host: '::1', port: '9443' }],
    ]);
    expect(() => parseConnectTo(['villa.example:127.0.0.1:8443'])).toThrow(/connect-to/);
    expect(() => parseConnectTo({ 'villa.example': '127.0.0.1:1' })).toThrow(/connect-to/);
  });
});
