/**
 * Running a node as a service: TLS material refused at start with a code that names the file and
 * the reason, listen errors that name the address, plain http behind a trusted reverse proxy,
 * and an encrypted backup taken while the node serves and restored into a new data directory.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { type Jwks, verifyOffer } from '@vacationrentalprotocol/vrp-verify';
import { backupNode, createDevCa, initNode, issueServerCertificate, restoreNode, serveNode } from '@vrpkit/node';
import { DISCOVERY_PATH, JWKS_PATH, OFFER_ENDPOINT_PATH, type VrpJwks } from '@vrpkit/protocol';
import { nodeClient, tempDir } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'serve-ops.example';
const tmp = tempDir('serve-ops');
const dataDir = join(tmp.dir, 'node');

beforeAll(async () => {
  await initNode({ domain: DOMAIN, dataDir });
});
afterAll(() => tmp.cleanup());

async function hostCertificate(hostnames: string[], name: string) {
  const ca = await createDevCa({ commonName: `${name} CA` });
  const cert = await issueServerCertificate(ca, hostnames);
  const certFile = join(tmp.dir, `${name}-cert.pem`);
  const keyFile = join(tmp.dir, `${name}-key.pem`);
  writeFileSync(certFile, cert.certPem);
  writeFileSync(keyFile, cert.keyPem, { mode: 0o600 });
  return { ca, certFile, keyFile };
}

describe('TLS material is checked before the node listens', () => {
  it('refuses a certificate for another domain with tls_wrong_domain, naming the file and what it covers', async () => {
    const other = await hostCertificate(['other.example'], 'other');
    const e = await serveNode({ dataDir, tlsCert: other.certFile, tlsKey: other.keyFile }).catch((x) => x);
    expect(e).toMatchObject({ code: 'tls_wrong_domain' });
    expect(e.message).toContain(other.certFile);
    expect(e.message).toContain('other.example');
  });

  it('refuses a key that is not the certificate’s with tls_key_mismatch (not internal_error with an OpenSSL string)', async () => {
    const right = await hostCertificate([DOMAIN], 'right');
    const wrong = await hostCertificate([DOMAIN], 'wrong');
    const e = await serveNode({ dataDir, tlsCert: right.certFile, tlsKey: wrong.keyFile }).catch((x) => x);
    expect(e).toMatchObject({ code: 'tls_key_mismatch' });
    expect(e.message).toContain(wrong.keyFile);
  });

  it('tls_unreadable names the file that cannot be read, and a non-PEM file is tls_invalid', async () => {
    const right = await hostCertificate([DOMAIN], 'readable');
    const missing = join(tmp.dir, 'missing-key.pem');
    const e = await serveNode({ dataDir, tlsCert: right.certFile, tlsKey: missing }).catch((x) => x);
    expect(e).toMatchObject({ code: 'tls_unreadable' });
    expect(e.message).toContain(missing);
    expect(e.message).toContain('ENOENT');
    const notPem = join(tmp.dir, 'not.pem');
    writeFileSync(notPem, 'hello');
    await expect(serveNode({ dataDir, tlsCert: notPem, tlsKey: right.keyFile })).rejects.toMatchObject({ code: 'tls_invalid' });
  });

  it('listen_failed names the address and port that are taken', async () => {
    const first = await serveNode({ dataDir, dev: true });
    try {
      const e = await serveNode({ dataDir, dev: true, port: first.port }).catch((x) => x);
      expect(e).toMatchObject({ code: 'listen_failed' });
      expect(e.message).toContain(`127.0.0.1:${first.port}`);
      expect(e.message).toContain('EADDRINUSE');
    } finally {
      await first.close();
    }
  });
});

/** A plain-http GET with exact headers (fetch would not let a test set Host). */
function httpGet(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('behind a TLS-terminating proxy', () => {
  it('serves plain http; X-Forwarded-Proto/Host from a trusted proxy are acted on, the origin stays https://DOMAIN', async () => {
    const node = await serveNode({ dataDir, behindProxy: { trustedProxies: ['127.0.0.0/8'] } });
    try {
      expect(node.origin).toBe(`https://${DOMAIN}`);
      const ok = await httpGet(node.port, DISCOVERY_PATH, {
        host: `127.0.0.1:${node.port}`,
        'x-forwarded-proto': 'https',
        'x-forwarded-host': DOMAIN,
      });
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).canonical_domain).toBe(DOMAIN);
      // The proxy passed a plain-http request through: the node answers with its https origin.
      const plain = await httpGet(node.port, `${JWKS_PATH}?x=1`, { 'x-forwarded-proto': 'http', 'x-forwarded-host': DOMAIN });
      expect(plain.status).toBe(308);
      expect(plain.headers.location).toBe(`https://${DOMAIN}${JWKS_PATH}?x=1`);
      // The proxy routed another site here.
      const misrouted = await httpGet(node.port, DISCOVERY_PATH, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
      expect(misrouted.status).toBe(421);
      expect(JSON.parse(misrouted.body).error.code).toBe('misdirected_request');
    } finally {
      await node.close();
    }
  });

  it('ignores X-Forwarded-Proto/Host from an address that is not a trusted proxy', async () => {
    const node = await serveNode({ dataDir, behindProxy: { trustedProxies: ['10.9.0.0/16', 'fd00::1'] } });
    try {
      const spoofed = await httpGet(node.port, DISCOVERY_PATH, { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'evil.example' });
      expect(spoofed.status).toBe(200);
      expect(JSON.parse(spoofed.body).canonical_domain).toBe(DOMAIN);
    } finally {
      await node.close();
    }
  });

  it('refuses a public listen address, a missing or malformed --trusted-proxy, and TLS options, with stable codes', async () => {
    const proxy = { trustedProxies: ['127.0.0.1'] };
    await expect(serveNode({ dataDir, host: '0.0.0.0', behindProxy: proxy })).rejects.toMatchObject({ code: 'proxy_listen_public' });
    await expect(serveNode({ dataDir, host: '8.8.8.8', behindProxy: proxy })).rejects.toMatchObject({ code: 'proxy_listen_public' });
    await expect(serveNode({ dataDir, behindProxy: { trustedProxies: [] } })).rejects.toMatchObject({ code: 'trusted_proxy_required' });
    await expect(serveNode({ dataDir, behindProxy: { trustedProxies: ['10.0.0.0/33'] } })).rejects.toMatchObject({
      code: 'invalid_trusted_proxy',
    });
    await expect(serveNode({ dataDir, dev: true, behindProxy: proxy })).rejects.toMatchObject({ code: 'tls_behind_proxy' });
    // Without --behind-proxy a node still serves https only.
    await expect(serveNode({ dataDir })).rejects.toMatchObject({ code: 'tls_required' });
  });
});

describe('backup and restore', () => {
  const passphrase = 'correct horse battery staple';

  it('a backup taken while the node serves restores into a new data directory that serves the same keys', async () => {
    const served = await serveNode({ dataDir, dev: true });
    const client = nodeClient(DOMAIN, served.port, served.caPem!);
    const out = join(tmp.dir, 'node.vrpbak');
    let jwks: string;
    try {
      jwks = (await client.get(JWKS_PATH)).text;
      const r = await backupNode({ dataDir, out, passphrase });
      expect(r.files).toEqual(expect.arrayContaining(['node.json', 'node.sqlite']));
      expect(r.files.some((f) => f.startsWith('keys/'))).toBe(true);
    } finally {
      await client.close();
      await served.close();
    }
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // The archive is encrypted: no key material or domain in clear.
    expect(readFileSync(out).includes(Buffer.from('"d"'))).toBe(false);
    expect(readFileSync(out).includes(Buffer.from(DOMAIN))).toBe(false);

    const restored = join(tmp.dir, 'restored');
    expect(restoreNode({ in: out, dataDir: restored, passphrase })).toMatchObject({ canonical_domain: DOMAIN, store: 'sqlite' });
    const again = await serveNode({ dataDir: restored, dev: true });
    const client2 = nodeClient(DOMAIN, again.port, again.caPem!);
    try {
      expect((await client2.get(JWKS_PATH)).text).toBe(jwks);
      const checkIn = new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10);
      const checkOut = new Date(Date.now() + 43 * 86_400_000).toISOString().slice(0, 10);
      const envelope = JSON.parse((await client2.get(`${OFFER_ENDPOINT_PATH}?check_in=${checkIn}&check_out=${checkOut}&guests=2`)).text);
      // The restored node signs with the key it had; an agent verifies it against the JWKS it had cached.
      expect(envelope.signature.kid).toBe((JSON.parse(jwks) as VrpJwks).keys[0]?.kid);
      const v = await verifyOffer({ envelope, jwks: JSON.parse(jwks) as Jwks, now: new Date() });
      expect(v.status).toBe('verified');
    } finally {
      await client2.close();
      await again.close();
    }
  });

  it('a wrong passphrase or a changed byte is backup_unauthenticated, and nothing is written', async () => {
    const out = join(tmp.dir, 'tamper.vrpbak');
    await backupNode({ dataDir, out, passphrase });
    const target = join(tmp.dir, 'not-restored');
    expect(() => restoreNode({ in: out, dataDir: target, passphrase: 'wrong' })).toThrow(
      expect.objectContaining({ code: 'backup_unauthenticated' }),
    );
    const bytes = readFileSync(out);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 40) ^ 1, bytes.length - 40);
    writeFileSync(out, bytes);
    expect(() => restoreNode({ in: out, dataDir: target, passphrase })).toThrow(
      expect.objectContaining({ code: 'backup_unauthenticated' }),
    );
    expect(() => statSync(target)).toThrow();
    writeFileSync(out, 'not a backup');
    expect(() => restoreNode({ in: out, dataDir: target, passphrase })).toThrow(expect.objectContaining({ code: 'backup_invalid' }));
    await expect(backupNode({ dataDir, out, passphrase: '' })).rejects.toMatchObject({ code: 'passphrase_required' });
  });
});
