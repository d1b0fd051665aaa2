import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { SERVER_LIMITS, sampleProperty } from '@vrpkit/node';
import {
  DEFAULT_PLATFORM_KEEP_ALIVE_MS,
  generateMasterKeyText,
  PlatformStore,
  parseMasterKey,
  type ServedPlatform,
  type ServePlatformOptions,
  servePlatform,
} from '@vrpkit/platform';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { listeningEvent, runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const masterText = generateMasterKeyText();
const master = parseMasterKey(masterText);
const NOW = Date.now();
const tmp = mkdtempSync(join(tmpdir(), 'vrpkit-platform-keep-alive-'));
const TENANTS = ['villa-one.example', 'villa-two.example'];
const stayQuery = (() => {
  const d = (n: number) => new Date(NOW + n * 86_400_000).toISOString().slice(0, 10);
  return `check_in=${d(20)}&check_out=${d(23)}&guests=2`;
})();

/** A TLS connection for `name`, or the error/close that ended it before the handshake finished. */
function open(port: number, ca: string, name: string): Promise<TLSSocket | Error> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername: name, ca }, () => resolve(s));
    s.once('error', (e) => resolve(e));
    s.once('close', () => resolve(new Error('closed before the handshake finished')));
  });
}

/** One HTTP/1.1 request on `socket` (kept alive): the status line's code. */
function requestOn(socket: TLSSocket, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3}).*?\r\ncontent-length: (\d+)\r\n.*?\r\n\r\n/is.exec(head);
      if (m && head.length >= head.indexOf('\r\n\r\n') + 4 + Number(m[2])) {
        socket.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('connection closed')));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

const closed = (s: TLSSocket) => new Promise<number>((resolve) => s.once('close', () => resolve(performance.now())));

describe('platform serve: keep-alive and connection caps', () => {
  let store: PlatformStore;
  const started: ServedPlatform[] = [];
  const start = async (o: Partial<ServePlatformOptions> = {}) => {
    const served = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(tmp, 'dev-tls') }, ...o });
    started.push(served);
    return { served, port: served.port, ca: served.caPem! };
  };
  beforeAll(async () => {
    store = await PlatformStore.open(`sqlite:${join(tmp, 'p.sqlite')}`);
    await store.init(master, null);
    await store.addTenants(
      master,
      TENANTS.map((domain) => ({ domain, property: sampleProperty(NOW) })),
    );
  });
  afterAll(async () => {
    for (const s of started) await s.close();
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('keeps an idle connection past the headers timeout by default, and reuses it without a new handshake', async () => {
    expect(DEFAULT_PLATFORM_KEEP_ALIVE_MS).toBe(65_000);
    const { port, ca } = await start();
    const socket = await open(port, ca, TENANTS[0]!);
    if (socket instanceof Error) throw socket;
    expect(await requestOn(socket, TENANTS[0]!, `${OFFER_ENDPOINT_PATH}?${stayQuery}`)).toBe(200);
    // Idle longer than the node's 5 s keep-alive and than the 10 s headers timeout.
    await new Promise((r) => setTimeout(r, SERVER_LIMITS.headersTimeout + 1500));
    expect(socket.destroyed).toBe(false);
    expect(await requestOn(socket, TENANTS[0]!, `${OFFER_ENDPOINT_PATH}?${stayQuery}`)).toBe(200);
    socket.destroy();
  }, 30_000);

  it('closes an idle connection after --keep-alive', async () => {
    const { port, ca } = await start({ keepAliveMs: 1000 });
    const socket = await open(port, ca, TENANTS[0]!);
    if (socket instanceof Error) throw socket;
    const end = closed(socket);
    expect(await requestOn(socket, TENANTS[0]!, `${OFFER_ENDPOINT_PATH}?${stayQuery}`)).toBe(200);
    const idleFrom = performance.now();
    const idle = (await end) - idleFrom;
    expect(idle).toBeGreaterThanOrEqual(900);
    // Node checks connections once a second, so the close comes within about a second after the timeout.
    expect(idle).toBeLessThan(4000);
  }, 15_000);

  it('refuses a client address past its connection cap, and any client past the total cap', async () => {
    const perClient = await start({ maxConnectionsPerClient: 2 });
    const a = await open(perClient.port, perClient.ca, TENANTS[0]!);
    const b = await open(perClient.port, perClient.ca, TENANTS[1]!);
    expect(a).not.toBeInstanceOf(Error);
    expect(b).not.toBeInstanceOf(Error);
    expect(await open(perClient.port, perClient.ca, TENANTS[0]!)).toBeInstanceOf(Error);
    (a as TLSSocket).destroy();
    await new Promise((r) => setTimeout(r, 100));
    // A closed connection frees its place.
    const c = await open(perClient.port, perClient.ca, TENANTS[0]!);
    expect(c).not.toBeInstanceOf(Error);
    for (const s of [b, c]) (s as TLSSocket).destroy();

    const total = await start({ maxConnections: 1 });
    const d = await open(total.port, total.ca, TENANTS[0]!);
    expect(d).not.toBeInstanceOf(Error);
    expect(await open(total.port, total.ca, TENANTS[1]!)).toBeInstanceOf(Error);
    (d as TLSSocket).destroy();
  });

  it('rejects a keep-alive or cap out of range before listening', async () => {
    for (const [o, code] of [
      [{ keepAliveMs: 500 }, 'invalid_keep_alive'],
      [{ keepAliveMs: 2 * 3_600_000 }, 'invalid_keep_alive'],
      [{ maxConnectionsPerClient: 0 }, 'invalid_connection_cap'],
      [{ maxConnections: 1.5 }, 'invalid_connection_cap'],
    ] as const)
      await expect(start(o)).rejects.toMatchObject({ code });
  });

  it('`vrp platform serve --keep-alive` takes 1s to 1h with its unit, refused before anything is opened', async () => {
    for (const v of ['500', '0s', '2h', 'soon']) {
      const r = await runVrpInProcess([
        'platform',
        'serve',
        '--database-url',
        `sqlite:${join(tmp, 'absent.sqlite')}`,
        '--dev',
        tmp,
        '--keep-alive',
        v,
      ]);
      expect(r.code, v).not.toBe(0);
      expect(r.stderr, v).toContain('--keep-alive');
    }
    expect(existsSync(join(tmp, 'absent.sqlite'))).toBe(false);
  });

  /**
   * Stop a platform on `port` with `stop` while one kept-alive connection is idle and three carry a
   * request whose body is still arriving: the idle one closes, new connections are refused, the
   * three are answered (each closing its connection).
   */
  async function drainedWhileInFlight(port: number, ca: string, stop: () => Promise<unknown>) {
    const sockets = await Promise.all([0, 1, 2, 3].map(() => open(port, ca, TENANTS[0]!)));
    for (const s of sockets) if (s instanceof Error) throw s;
    const [idle, ...busy] = sockets as TLSSocket[];
    expect(await requestOn(idle!, TENANTS[0]!, `${OFFER_ENDPOINT_PATH}?${stayQuery}`)).toBe(200);
    const idleClosed = closed(idle!);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const answers = busy.map((s) => {
      let text = '';
      s.on('data', (c: Buffer) => (text += c.toString('latin1')));
      return new Promise<string>((resolve) => s.once('close', () => resolve(text)));
    });
    for (const s of busy)
      s.write(
        `POST /mcp HTTP/1.1\r\nHost: ${TENANTS[0]}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
          `content-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
    await new Promise((r) => setTimeout(r, 300)); // the heads are read: three requests in flight
    const stopped = stop();
    await idleClosed;
    expect(await open(port, ca, TENANTS[0]!)).toBeInstanceOf(Error);
    for (const s of busy) s.write(body.slice(10));
    for (const text of await Promise.all(answers)) {
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      expect(text.toLowerCase()).toContain('connection: close');
    }
    return stopped;
  }

  it('close drains: the requests in flight are answered, idle connections closed, nothing new accepted (issue 36 defect 2, regression)', async () => {
    const { served, port, ca } = await start({ shutdownGraceSeconds: 10 });
    await drainedWhileInFlight(port, ca, () => served.close());
  });

  it('SIGTERM to `vrp platform serve` drains the same way, then exits 0 (issue 36 defect 2, regression)', async () => {
    const keyFile = join(tmp, 'master.key');
    writeFileSync(keyFile, masterText, { mode: 0o600 });
    const args = ['--database-url', `sqlite:${join(tmp, 'p.sqlite')}`, '--master-key-file', keyFile, '--dev', join(tmp, 'dev-tls')];
    const run = vrpCli(['platform', 'serve', ...args, '--shutdown-grace', '10', '--json']);
    const { port, ca } = await listeningEvent(run);
    await drainedWhileInFlight(port, readFileSync(ca, 'utf8'), async () => run.child.kill('SIGTERM'));
    expect(await run.exited).toBe(0);
  }, 60_000);

  it('reports the TLS contexts held and the shared offer cache bytes', async () => {
    const { served, port, ca } = await start({ offerCacheMaxAgeSeconds: 60 });
    expect(served.tlsContexts()).toBe(0);
    expect(served.offerCacheBytes()).toBe(0);
    for (const name of TENANTS) {
      const s = await open(port, ca, name);
      if (s instanceof Error) throw s;
      expect(await requestOn(s, name, `${OFFER_ENDPOINT_PATH}?${stayQuery}`)).toBe(200);
      s.destroy();
    }
    expect(served.tlsContexts()).toBe(2);
    expect(served.offerCacheBytes()).toBeGreaterThan(1000);
  });
});
