/**
 * The node's per-client connection cap, with real sockets: a client address holding the cap's
 * number of connections gets its next one closed as it is accepted (no TLS handshake, no
 * handler), while the connections it holds keep working and a freed slot is usable again.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { DISCOVERY_PATH } from '@vrpkit/protocol';
import { tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it } from 'vitest';

const DOMAIN = 'connection-cap.example';
const tmp = tempDir('connection-cap');
const dataDir = join(tmp.dir, 'node');
const served: ServedNode[] = [];
const opened: Socket[] = [];
const requests: string[] = [];

afterAll(async () => {
  for (const s of opened) s.destroy();
  for (const n of served) await n.close();
  tmp.cleanup();
});

/** A TLS connection to the node as https://{domain}: resolves once the handshake finished, or with how it ended before that. */
function tlsTo(node: ServedNode): Promise<{ secure: true; socket: TLSSocket } | { secure: false; ended: string }> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: node.port, servername: DOMAIN, ca: node.caPem! });
    opened.push(socket);
    socket.once('secureConnect', () => resolve({ secure: true, socket }));
    socket.once('error', (e: NodeJS.ErrnoException) => resolve({ secure: false, ended: e.code ?? e.message }));
    socket.once('close', () => resolve({ secure: false, ended: 'closed' }));
  });
}

/** One HTTP/1.1 GET on an open TLS connection (kept alive); resolves with the status line. */
function get(socket: TLSSocket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n')) {
        socket.off('data', onData);
        resolve(head.slice(0, head.indexOf('\r\n')));
      }
    };
    socket.on('data', onData);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${DOMAIN}\r\n\r\n`);
  });
}

/** A plain TCP connection: resolves 'open' if it is still open after `ms`, 'closed' if the node closed it. */
function tcpHeld(node: ServedNode, ms: number): Promise<'open' | 'closed'> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port: node.port });
    opened.push(socket);
    const timer = setTimeout(() => resolve('open'), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
    socket.on('error', () => {});
  });
}

describe('per-client connection cap', () => {
  it('closes a client address’s connection past the cap at accept; held connections keep working; a freed slot is reusable', async () => {
    await initNode({ domain: DOMAIN, dataDir });
    const node = await serveNode({ dataDir, dev: true, maxConnectionsPerClient: 3, log: (e) => requests.push(e.path) });
    served.push(node);
    const held = await Promise.all([tlsTo(node), tlsTo(node), tlsTo(node)]);
    expect(held.map((h) => h.secure)).toEqual([true, true, true]);
    const refused = await tlsTo(node);
    expect(refused.secure).toBe(false);
    expect(requests).toEqual([]);
    // The connections within the cap are served as before.
    const first = held[0] as { socket: TLSSocket };
    expect(await get(first.socket, DISCOVERY_PATH)).toBe('HTTP/1.1 200 OK');
    expect(requests).toEqual([DISCOVERY_PATH]);
    // Closing one frees its slot (once the node has seen the close: the client sees its own first).
    first.socket.destroy();
    let again = await tlsTo(node);
    for (let i = 0; i < 20 && !again.secure; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await tlsTo(node);
    }
    expect(again.secure).toBe(true);
    expect(await get((again as { socket: TLSSocket }).socket, DISCOVERY_PATH)).toBe('HTTP/1.1 200 OK');
  });

  it(`defaults to ${DEFAULT_MAX_CONNECTIONS_PER_CLIENT} per client address and refuses an invalid cap with a stable code`, async () => {
    const node = await serveNode({ dataDir, dev: true });
    served.push(node);
    const within = await Promise.all(Array.from({ length: DEFAULT_MAX_CONNECTIONS_PER_CLIENT }, () => tcpHeld(node, 300)));
    expect(within.every((s) => s === 'open')).toBe(true);
    expect(await tcpHeld(node, 2_000)).toBe('closed');
    await expect(serveNode({ dataDir, dev: true, maxConnectionsPerClient: 0 })).rejects.toMatchObject({ code: 'invalid_connection_cap' });
  });
});
