/**
 * Issue 32, the Python MCP SDK flake ("Server disconnected without sending a response" on a POST,
 * about one run in five): a request whose head arrives while the connection's previous answer has
 * not drained, with its body in a TLS record of its own (httpx writes head and body apart), used to
 * reach Node's paused HTTP parser and cost the connection (HPE_PAUSED; core/src/tls-parse.ts).
 *
 * Deterministic here with a plain Node TLS client: an answer far above what the kernel buffers
 * (8 MiB) is left unread, so the server cannot drain it whatever the timing; then the next
 * request goes out as head and body records in one TCP write (a coalescing wire under the TLS
 * client), so both are decrypted in one read. The server is built as the node, its console and
 * the platform build theirs: @hono/node-server `serve` over `https.createServer`, then
 * `listenWithLimits`. Without `parseTlsConnectionsAsStreams` in it, the first answer is cut and
 * the second never comes.
 */
import { createServer } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { type Server, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { serve } from '@hono/node-server';
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, listenWithLimits } from '@vrpkit/node';
import { createTestCa } from '@vrpkit/testkit/tls';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';

const NAME = 'tls-parse.example';
const BIG = 8 * 1024 * 1024;
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A TLS client whose records are held back while `hold` is on and then sent in one TCP write (`release`). */
async function coalescingClient(port: number, ca: string): Promise<{ tls: TLSSocket; hold(): void; release(): void; tcp: Socket }> {
  const tcp = netConnect(port, '127.0.0.1');
  let held: Buffer[] | undefined;
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      if (held) held.push(chunk);
      else tcp.write(chunk);
      done();
    },
  });
  tcp.on('data', (d) => wire.push(d));
  tcp.on('end', () => wire.push(null));
  tcp.on('close', () => wire.destroy());
  const tls = tlsConnect({ socket: wire, servername: NAME, ca });
  await new Promise<void>((resolve, reject) => {
    tls.once('secureConnect', resolve);
    tls.once('error', reject);
  });
  return {
    tls,
    tcp,
    hold: () => {
      held = [];
    },
    release: () => {
      const out = Buffer.concat(held ?? []);
      held = undefined;
      tcp.write(out);
    },
  };
}

describe('a TLS listener built like the node’s (serve + listenWithLimits)', () => {
  it('answers a request sent while its previous answer is undrained, body in its own TLS record', async () => {
    const { ca, certFor } = await createTestCa();
    const cert = await certFor(NAME);
    const app = new Hono();
    app.get('/big', (c) => c.body(new Uint8Array(BIG).fill(0x78), 200, { 'content-type': 'application/octet-stream' }));
    app.post('/echo', async (c) => c.text(`received ${(await c.req.text()).length} bytes`));
    const server = serve({
      fetch: app.fetch,
      port: 0,
      hostname: '127.0.0.1',
      createServer,
      serverOptions: { key: cert.keyPem, cert: cert.certPem },
    });
    const refused: string[] = [];
    // Recorded, then what Node does without a listener: destroy the connection.
    server.on('clientError', (e: NodeJS.ErrnoException, socket: Duplex) => {
      refused.push(e.code ?? e.message);
      socket.destroy();
    });
    const drain = await listenWithLimits(server as unknown as Server as never, {
      maxPerClient: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
      failed: (e) => e,
    });
    stops.push(() => drain.drain(0));
    const { port } = server.address() as { port: number };

    const client = await coalescingClient(port, ca.certPem);
    stops.push(async () => void client.tcp.destroy());
    client.tls.pause(); // the first answer stays unread: the server cannot drain it
    client.tls.write(`GET /big HTTP/1.1\r\nHost: ${NAME}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 300));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } });
    client.hold();
    client.tls.write(`POST /echo HTTP/1.1\r\nHost: ${NAME}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    client.tls.write(body);
    await new Promise((r) => setImmediate(r));
    client.release();
    await new Promise((r) => setTimeout(r, 300));

    let received = Buffer.alloc(0);
    const ended = new Promise<void>((resolve) => {
      client.tls.on('data', (d: Buffer) => {
        received = Buffer.concat([received, d]);
        if (received.subarray(-40).toString('latin1').endsWith(`received ${body.length} bytes`)) resolve();
      });
      // Cut (the defect): the server destroyed the connection.
      client.tls.once('close', () => resolve());
      client.tcp.once('close', () => resolve());
    });
    client.tls.resume();
    await ended;
    const text = received.toString('latin1');
    expect(refused).toEqual([]);
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(received.length).toBeGreaterThan(BIG);
    expect(text.endsWith(`received ${body.length} bytes`)).toBe(true);
  }, 30_000);
});
