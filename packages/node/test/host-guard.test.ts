import { request } from 'node:https';
import { A2A_JSONRPC_PATH } from '@vrpkit/node';
import { DISCOVERY_PATH, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { closeTestNode, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
const tmp = tempDir('host-guard');
let served: Awaited<ReturnType<typeof serveTestNode>>;
beforeAll(async () => {
  served = await serveTestNode(DOMAIN, tmp.dir, testClock('2026-06-01T10:00:00Z'));
});
afterAll(() => closeTestNode(served ?? {}, tmp));

/** A request over the node's TLS name with an exact Host header (as a DNS-rebound page or a misrouting proxy would send). */
function getWithHost(
  host: string,
  o: { method?: string; path?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: served.node.port,
        servername: DOMAIN,
        ca: served.node.caPem,
        method: o.method ?? 'GET',
        path: o.path ?? DISCOVERY_PATH,
        headers: { host, ...o.headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('a Host outside the canonical domain', () => {
  it('gets 421 misdirected_request and no node data (DNS rebinding, misrouted requests)', async () => {
    for (const host of [
      'attacker.example',
      `127.0.0.1:${served.node.port}`,
      `${DOMAIN}.attacker.example`,
      `evil${DOMAIN}`,
      // Empty or malformed labels name no host, so not a subdomain of the canonical domain either.
      `.${DOMAIN}`,
      `..${DOMAIN}`,
      `x..${DOMAIN}`,
      `-x.${DOMAIN}`,
    ]) {
      const r = await getWithHost(host);
      expect(r.status, host).toBe(421);
      expect(JSON.parse(r.body).error.code).toBe('misdirected_request');
      expect(r.body).not.toContain('jwks');
    }
  });

  it('gets 421 on every route and method, the tool surfaces and booking included (the rule wraps the router)', async () => {
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_verified_stay_offer', arguments: {} },
    });
    const requests = [
      { path: JWKS_PATH },
      { path: `${OFFER_ENDPOINT_PATH}?check_in=2026-07-01&check_out=2026-07-04&guests=2` },
      { path: '/' },
      { path: '/book?checkIn=2026-07-01&checkOut=2026-07-04&guests=2' },
      { path: '/.well-known/agent-card.json' },
      { path: '/healthz' },
      { path: '/no-such-resource' },
      { method: 'POST', path: MCP_ENDPOINT_PATH, body: call, headers: json },
      { method: 'POST', path: A2A_JSONRPC_PATH, body: call, headers: json },
      { method: 'POST', path: '/ucp/v1/booking-sessions', body: '{}', headers: json },
      { method: 'POST', path: '/book', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { method: 'DELETE', path: JWKS_PATH },
      { method: 'OPTIONS', path: MCP_ENDPOINT_PATH },
    ];
    for (const o of requests) {
      const r = await getWithHost('attacker.example', o);
      expect(r.status, `${o.method ?? 'GET'} ${o.path}`).toBe(421);
      expect(JSON.parse(r.body).error.code).toBe('misdirected_request');
    }
  });

  it('the canonical domain, with a port or a trailing dot, and its subdomains are served', async () => {
    for (const host of [DOMAIN, `${DOMAIN}:443`, `${DOMAIN}.`, `WWW.${DOMAIN}`]) {
      const r = await getWithHost(host);
      expect(r.status, host).toBe(200);
      expect(JSON.parse(r.body).canonical_domain).toBe(DOMAIN);
    }
  });
});
