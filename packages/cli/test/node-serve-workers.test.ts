/**
 * `vrp node serve --workers 2` through the real CLI: two processes serve one node on one port;
 * every answer is a schema-valid signed offer; a store write made by another process reaches
 * every worker on its next offer (each offer reads the store revision); SIGTERM stops the
 * primary and both workers; a worker that dies or cannot start stops the whole node.
 */
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { initNode, NodeStore, storeTargetFor } from '@vrpkit/node';
import { listeningEvent as listening, vrpCli as vrp } from '@vrpkit/testkit/cli';
import { dayAfter, nodeClient, schemaErrors, tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it, vi } from 'vitest';

const DOMAIN = 'serve-workers.example';
const tmp = tempDir('workers');
// Three processes start under tsx on a shared 2-core machine.
vi.setConfig({ testTimeout: 90_000 });
afterAll(() => tmp.cleanup());

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('vrp node serve --workers', () => {
  it('serves signed offers from two worker processes, follows store writes in every worker, stops cleanly', async () => {
    const dataDir = join(tmp.dir, 'node');
    await initNode({ domain: DOMAIN, dataDir });
    const run = vrp(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--workers', '2']);
    const { child, exited } = run;
    const first = await listening(run);
    expect(first).toMatchObject({ event: 'listening', origin: `https://${DOMAIN}`, port: expect.any(Number), workers: 2 });
    const pids = first.worker_pids ?? [];
    expect(new Set(pids).size).toBe(2);
    expect(pids.every(alive)).toBe(true);
    const ca = readFileSync(first.ca, 'utf8');

    // One connection per request: the primary hands each new connection to the next worker.
    const offer = async (checkIn: string, checkOut: string) => {
      const client = nodeClient(DOMAIN, first.port, ca);
      try {
        const res = await client.get(`/api/verified-stay-offer?check_in=${checkIn}&check_out=${checkOut}&guests=2`);
        expect(res.status).toBe(200);
        return JSON.parse(res.text) as { offer: { availability: { available: boolean; reason: string | null } } };
      } finally {
        await client.close();
      }
    };
    const checkIn = dayAfter(Date.now(), 30);
    const checkOut = dayAfter(Date.now(), 33);
    for (let i = 0; i < 4; i++) {
      const envelope = await offer(checkIn, checkOut);
      expect(schemaErrors('offer', envelope)).toEqual([]);
      expect(envelope.offer.availability.available).toBe(true);
    }

    // A write by another process (as `vrp node calendar block` makes one) reaches both workers at once.
    const store = await NodeStore.open(storeTargetFor(dataDir));
    const property = await store.property();
    await store.addBlock(property.property_id, { start_date: checkIn, end_date: checkOut, kind: 'block' }, Date.now());
    await store.close();
    for (let i = 0; i < 4; i++) {
      expect((await offer(checkIn, checkOut)).offer.availability).toMatchObject({ available: false, reason: 'not_available' });
    }

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(run.stderr()).toBe('');
    expect(pids.some(alive)).toBe(false);
  });

  it('a worker that dies stops the node: error[worker_exited], exit 1, the other worker stopped too', async () => {
    const dataDir = join(tmp.dir, 'crash');
    await initNode({ domain: DOMAIN, dataDir });
    const run = vrp(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--workers', '2']);
    const { exited } = run;
    const first = await listening(run);
    const [victim, other] = first.worker_pids as [number, number];
    process.kill(victim, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(run.stderr()).toMatch(new RegExp(`^error\\[worker_exited\\]: serve worker ${victim} exited \\(SIGKILL\\)`, 'm'));
    expect(alive(other)).toBe(false);
  });

  it('a worker that cannot listen stops the node with worker_failed (exit 1, no worker left behind)', async () => {
    const dataDir = join(tmp.dir, 'busy');
    await initNode({ domain: DOMAIN, dataDir });
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    const port = (busy.address() as AddressInfo).port;
    try {
      const run = vrp(['node', 'serve', '--data-dir', dataDir, '--dev', '--workers', '2', '--port', String(port)]);
      expect(await run.exited).toBe(1);
      const stderr = run.stderr();
      expect(stderr).toMatch(new RegExp(`^error\\[listen_failed\\]: cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE$`, 'm'));
      expect(stderr).toMatch(/^error\[worker_failed\]/m);
    } finally {
      busy.close();
    }
  });

  it('refuses a worker count that is not a positive integer (usage error, exit 64)', async () => {
    const run = vrp(['node', 'serve', '--data-dir', join(tmp.dir, 'none'), '--dev', '--workers', '0']);
    expect(await run.exited).toBe(64);
    expect(run.stderr()).toMatch(/--workers/);
  });
});
