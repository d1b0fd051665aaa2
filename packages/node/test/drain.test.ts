/**
 * Stopping drains (issue 36 defect 2): SIGTERM to `vrp node serve` while 20 kept-alive
 * connections each carry a request whose body is still arriving. The node stops accepting at
 * once, closes its idle connections, answers every request in flight (each answer ends its
 * connection), then exits 0. Before the fix all 20 were reset (`closeAllConnections()`).
 * A real `vrp node serve` subprocess over https (dev CA); raw TLS sockets, so the test decides
 * when each byte of a request is sent.
 */
import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { initNode } from '@vrpkit/node';
import { DISCOVERY_PATH, UCP_BOOKING_SESSIONS, UCP_REST_BASE_PATH } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it } from 'vitest';

const DOMAIN = 'drain.example';
const tmp = tempDir('drain');
let run: CliRun | undefined;

afterAll(async () => {
  run?.child.kill('SIGKILL');
  await run?.exited;
  tmp.cleanup();
});

/** A raw TLS connection to the node, with everything it receives collected and its close awaited. */
async function connection(port: number, ca: string) {
  const socket: TLSSocket = connect({ host: '127.0.0.1', port, servername: DOMAIN, ca });
  await new Promise<void>((ok, fail) => socket.once('secureConnect', ok).once('error', fail));
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => (received += c));
  const closed = new Promise<{ error?: string }>((done) => {
    socket.once('error', (e: NodeJS.ErrnoException) => done({ error: e.code ?? e.message }));
    socket.once('close', () => done({}));
  });
  return {
    socket,
    received: () => received,
    /** Forget what was received so far (the answers before the one under test). */
    reset: () => {
      received = '';
    },
    closed,
  };
}

const BODY = JSON.stringify({ property: { id: 'p' }, stays: [], 'dev.vrpkit.lodging': { offer_jws: 'a.b.c' } });
const SESSIONS = `${UCP_REST_BASE_PATH}${UCP_BOOKING_SESSIONS}`;
const head = (path: string, extra = '') => `POST ${path} HTTP/1.1\r\nhost: ${DOMAIN}\r\ncontent-type: application/json\r\n${extra}\r\n`;

describe('SIGTERM drains the requests in flight (issue 36 defect 2, regression)', () => {
  it('answers all 20 requests in flight on kept-alive connections, closes the idle ones, refuses new connections, exits 0', async () => {
    const dataDir = join(tmp.dir, 'node');
    await initNode({ domain: DOMAIN, dataDir });
    run = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--shutdown-grace', '10', '--booking-rate-limit', '100']);
    const { port, ca: caFile } = await listeningEvent(run);
    const ca = readFileSync(caFile, 'utf8');

    // 25 kept-alive connections, each used once; then 20 of them start a request whose body is not all sent.
    const conns = await Promise.all(Array.from({ length: 25 }, () => connection(port, ca)));
    for (const c of conns) c.socket.write(`GET ${DISCOVERY_PATH} HTTP/1.1\r\nhost: ${DOMAIN}\r\n\r\n`);
    while (conns.some((c) => !c.received().includes('canonical_domain'))) await sleep(20);
    const busy = conns.slice(0, 20);
    const idle = conns.slice(20);
    for (const c of conns) c.reset();
    for (const c of busy) c.socket.write(`${head(SESSIONS, `content-length: ${BODY.length}\r\n`)}${BODY.slice(0, 20)}`);
    await sleep(300); // the node has read every request head

    run.child.kill('SIGTERM');
    // The idle connections are closed at once; nothing new is accepted.
    for (const c of idle) expect(await c.closed).toEqual({});
    const refused = await new Promise<string>((done) => {
      const s = netConnect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        done('connected');
      });
      s.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');

    // The requests in flight are answered (here: refused as bad session requests, an answer all the same), each ending its connection.
    for (const c of busy) c.socket.write(BODY.slice(20));
    const outcomes = await Promise.all(busy.map(async (c) => ({ ...(await c.closed), head: c.received().split('\r\n', 1)[0] })));
    const answered = outcomes.filter((o) => !o.error && /^HTTP\/1\.1 \d{3} /.test(o.head ?? ''));
    expect(answered.length).toBe(20);
    for (const c of busy) expect(c.received().toLowerCase()).toContain('connection: close');
    expect(await run.exited).toBe(0);
  }, 60_000);
});
