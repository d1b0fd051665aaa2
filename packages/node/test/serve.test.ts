/**
 * Serving over https: the host's own certificate, the dev CA generated once and reused, a
 * server certificate that covers the domain and its subdomains, and clear codes when TLS
 * material is missing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDevCa, initNode, issueServerCertificate, serveNode } from '@vrpkit/node';
import { DISCOVERY_PATH } from '@vrpkit/protocol';
import { nodeClient, tempDir } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'serve-node.example';
const tmp = tempDir('serve');
const dataDir = join(tmp.dir, 'node');

beforeAll(async () => {
  await initNode({ domain: DOMAIN, dataDir });
});
afterAll(() => tmp.cleanup());

describe('serveNode TLS', () => {
  it("serves with the host's own certificate and key (no dev CA involved)", async () => {
    const ca = await createDevCa({ commonName: 'host-managed CA' });
    const cert = await issueServerCertificate(ca, [DOMAIN]);
    writeFileSync(join(tmp.dir, 'cert.pem'), cert.certPem);
    writeFileSync(join(tmp.dir, 'key.pem'), cert.keyPem, { mode: 0o600 });
    const node = await serveNode({ dataDir, tlsCert: join(tmp.dir, 'cert.pem'), tlsKey: join(tmp.dir, 'key.pem') });
    try {
      expect(node.caFile).toBeUndefined();
      const client = nodeClient(DOMAIN, node.port, ca.certPem);
      expect((await client.get(DISCOVERY_PATH)).status).toBe(200);
      await client.close();
    } finally {
      await node.close();
    }
  });

  it('generates the dev CA once, reuses it on the next start, and its certificate covers *.domain', async () => {
    const first = await serveNode({ dataDir, dev: true });
    const caPem = first.caPem!;
    await first.close();
    const second = await serveNode({ dataDir, dev: true });
    try {
      expect(second.caPem).toBe(caPem);
      expect(readFileSync(second.caFile!, 'utf8')).toBe(caPem);
      const www = nodeClient(`www.${DOMAIN}`, second.port, caPem);
      expect((await www.get(DISCOVERY_PATH)).status).toBe(200);
      await www.close();
      const stranger = nodeClient('other.example', second.port, caPem);
      await expect(stranger.get(DISCOVERY_PATH)).rejects.toThrow();
      await stranger.close();
    } finally {
      await second.close();
    }
  });

  it('refuses to start without TLS material, or with half of it, with stable codes', async () => {
    await expect(serveNode({ dataDir })).rejects.toMatchObject({ code: 'tls_required' });
    await expect(serveNode({ dataDir, tlsCert: join(tmp.dir, 'cert.pem') })).rejects.toMatchObject({ code: 'tls_incomplete' });
    await expect(serveNode({ dataDir, tlsCert: join(tmp.dir, 'nope.pem'), tlsKey: join(tmp.dir, 'nope.pem') })).rejects.toMatchObject({
      code: 'tls_unreadable',
    });
    await expect(serveNode({ dataDir: join(tmp.dir, 'absent'), dev: true })).rejects.toMatchObject({ code: 'node_not_initialized' });
  });
});
