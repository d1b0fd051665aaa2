import { request } from 'node:https';
import { DISCOVERY_PATH } from '@vrpkit/protocol';
import { closeTestNode, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';
const tmp = tempDir('host-guard');
let served: Awaited<ReturnType<typeof serveTestNode>>;
beforeAll(async () => {
  served = await serveTestNode(DOMAIN, tmp.dir, testClock('2026-06-01T10:00:00Z'));
});
afterAll(() => closeTestNode(served ?? {}, tmp));

/** A GET over the node's TLS name with an exact Host header (as a DNS-rebound page or a misrouting proxy would send). */
function getWithHost(host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: served.node.port,
        servername: DOMAIN,
        ca: served.node.caPem,
        path: DISCOVERY_PATH,
        headers: { host },
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
    req.end();
  });
}

describe('a Host outside the canonical domain', () => {
  it('gets 421 misdirected_request and no node data (DNS rebinding, misrouted requests)', async () => {
    for (const host of ['attacker.example', `127.0.0.1:${served.node.port}`, `${DOMAIN}.attacker.example`, `evil${DOMAIN}`]) {
      const r = await getWithHost(host);
      expect(r.status, host).toBe(421);
      expect(JSON.parse(r.body).error.code).toBe('misdirected_request');
      expect(r.body).not.toContain('jwks');
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
