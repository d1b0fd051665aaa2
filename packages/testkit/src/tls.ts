/**
 * Real https servers on 127.0.0.1 with a CA generated for the test (via @vrpkit/node's dev-CA
 * helpers, made with @peculiar/x509), reached through the hardened fetch's connect-to map.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createDevCa, issueServerCertificate, type PemKeyPair } from '@vrpkit/node';

export interface TestCa {
  ca: PemKeyPair;
  /** A server certificate for `domain` and `*.domain`. */
  certFor(domain: string): Promise<PemKeyPair>;
}

export async function createTestCa(): Promise<TestCa> {
  const ca = await createDevCa({ commonName: 'vrpkit agent test CA' });
  return { ca, certFor: (domain) => issueServerCertificate(ca, [domain, `*.${domain}`]) };
}

export interface TestServer {
  server: Server;
  port: number;
  /** connect-to entries (curl form) for `hosts` → this server. */
  connectTo(...hosts: string[]): string[];
  close(): Promise<void>;
}

export async function startHttpsServer(
  cert: PemKeyPair,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestServer> {
  const server = createServer({ key: cert.keyPem, cert: cert.certPem }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    connectTo: (...hosts) => hosts.map((h) => `${h}:443:127.0.0.1:${port}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answer 200 with a JSON body that never ends: `chunkBytes` of spaces written as fast as the client reads. */
export function endlessBody(res: ServerResponse, chunkBytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(chunkBytes, 0x20);
  const pump = () => {
    while (res.write(chunk)) {}
    res.once('drain', pump);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}
