/**
 * Automatic HTTPS end to end against Pebble, Let's Encrypt's ACME test server (RFC 8555), with
 * pebble-challtestsrv answering DNS for the node's domain with 127.0.0.1: the node obtains a
 * certificate over HTTP-01, stores it 0600, renews it at two thirds of its (short) lifetime
 * while serving, and keeps serving the certificate it has when the CA is gone.
 * Skips, saying so, where Debian's `pebble` package is not installed (`.ci/run` installs it).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { createDevCa, initNode, issueServerCertificate, type ServedNode, serveNode } from '@vrpkit/node';
import { DISCOVERY_PATH } from '@vrpkit/protocol';
import { nodeClient, tempDir } from '@vrpkit/testkit/node';
import * as acme from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'acme-node.example';
/** Seconds a Pebble certificate is valid here: renewal falls due after two thirds of it. */
const VALIDITY_SECONDS = 15;

function installed(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const havePebble = installed('pebble') && installed('pebble-challtestsrv');
if (!havePebble)
  console.warn('[acme.test] skipped: Debian `pebble` (pebble, pebble-challtestsrv) is not installed; `apt-get install pebble`');

function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

/** The serial number of the certificate the node presents for DOMAIN right now (a fresh handshake). */
function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port, servername: DOMAIN, ca }, () => {
      done(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', fail);
  });
}

describe.skipIf(!havePebble)('vrp node serve --acme against Pebble', () => {
  const tmp = tempDir('acme');
  const dataDir = join(tmp.dir, 'node');
  const children: ChildProcess[] = [];
  let pebble: ChildProcess;
  let apiCa: string;
  let ports: { api: number; management: number; dns: number; http01: number; tls: number; challManagement: number };
  const errors: Array<{ code?: string; message: string }> = [];
  let node: ServedNode | undefined;

  beforeAll(async () => {
    ports = {
      api: await freePort(),
      management: await freePort(),
      dns: await freePort(),
      http01: await freePort(),
      tls: await freePort(),
      challManagement: await freePort(),
    };
    // Pebble's own API certificate, from a CA the ACME client is told to trust.
    const ca = await createDevCa({ commonName: 'pebble API test CA' });
    const api = await issueServerCertificate(ca, ['127.0.0.1', 'localhost']);
    apiCa = ca.certPem;
    writeFileSync(join(tmp.dir, 'api.pem'), api.certPem);
    writeFileSync(join(tmp.dir, 'api-key.pem'), api.keyPem, { mode: 0o600 });
    writeFileSync(
      join(tmp.dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${ports.api}`,
          managementListenAddress: `127.0.0.1:${ports.management}`,
          certificate: join(tmp.dir, 'api.pem'),
          privateKey: join(tmp.dir, 'api-key.pem'),
          httpPort: ports.http01,
          tlsPort: ports.tls,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
          certificateValidityPeriod: VALIDITY_SECONDS,
        },
      }),
    );
    children.push(
      spawn(
        'pebble-challtestsrv',
        [
          '-dns01',
          `127.0.0.1:${ports.dns}`,
          '-http01',
          '',
          '-https01',
          '',
          '-tlsalpn01',
          '',
          '-management',
          `127.0.0.1:${ports.challManagement}`,
          '-defaultIPv6',
          '',
        ],
        { stdio: 'ignore' },
      ),
    );
    pebble = spawn('pebble', ['-config', join(tmp.dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${ports.dns}`, '-strict', 'false'], {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
      stdio: 'ignore',
    });
    children.push(pebble);
    // Wait until Pebble answers TLS on its API port.
    const up = () =>
      new Promise<boolean>((done) => {
        const s = connect({ host: '127.0.0.1', port: ports.api, ca: apiCa, servername: 'localhost' }, () => {
          s.end();
          done(true);
        });
        s.on('error', () => done(false));
      });
    for (let i = 0; i < 100 && !(await up()); i++) await new Promise((r) => setTimeout(r, 200));
    await initNode({ domain: DOMAIN, dataDir });
  }, 60_000);

  afterAll(async () => {
    await node?.close();
    for (const c of children) c.kill('SIGTERM');
    tmp.cleanup();
  });

  it('obtains a certificate over HTTP-01, stores it 0600, renews it while serving, and keeps it when renewal fails', async () => {
    node = await serveNode({
      dataDir,
      acme: {
        email: 'host@acme-node.example',
        directoryUrl: `https://127.0.0.1:${ports.api}/dir`,
        httpPort: ports.http01,
        directoryCa: apiCa,
      },
      onError: (e) => errors.push(e as { code?: string; message: string }),
    });
    // Pebble makes a new root each run; the client trusts it as it would trust Let's Encrypt's.
    const root = await (
      await import('undici').then(({ fetch, Agent }) =>
        fetch(`https://127.0.0.1:${ports.management}/roots/0`, {
          dispatcher: new Agent({ connect: { ca: apiCa, servername: 'localhost' } }),
        }),
      )
    ).text();
    const client = nodeClient(DOMAIN, node.port, root);
    try {
      expect((await client.get(DISCOVERY_PATH)).status).toBe(200);
    } finally {
      await client.close();
    }
    const acmeDir = join(dataDir, 'tls', 'acme');
    for (const f of readdirSync(acmeDir)) expect(statSync(join(acmeDir, f)).mode & 0o777).toBe(0o600);
    const first = await servedSerial(node.port, root);

    // Renewal at two thirds of the lifetime, without a restart: the next handshake sees the new certificate.
    await expect
      .poll(() => node!.acmeStatus!().renewals, { timeout: VALIDITY_SECONDS * 1000 * 2, interval: 250 })
      .toBeGreaterThanOrEqual(1);
    const renewed = await servedSerial(node.port, root);
    expect(renewed).not.toBe(first);

    // The CA goes away: the next renewal fails loudly, is counted, and the node keeps its certificate.
    // acme-client retries a refused connection 5 times, 5 s apart and growing (right for a CA's
    // brief outage); here the first refusal is the failure, so it shows within the certificate's 15 s.
    (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
    pebble.kill('SIGTERM');
    await expect
      .poll(() => node!.acmeStatus!().renewal_failures, { timeout: VALIDITY_SECONDS * 1000 * 2, interval: 250 })
      .toBeGreaterThanOrEqual(1);
    expect(errors.some((e) => e.code === 'acme_renewal_failed' && e.message.includes('still serving'))).toBe(true);
    expect(await servedSerial(node.port, root)).toBe(renewed);
  }, 120_000);
});
