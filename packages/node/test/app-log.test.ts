/**
 * The app's per-request hooks: `observe` (what metrics count: path, status, latency) on its own,
 * and the log line (`log`) with its query digest, never the raw query.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createNodeApp, createOfferService, initNode, NodeStore, type RequestLogEntry } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodePaths, storeTargetFor } from '../src/datadir.js';

const DOMAIN = 'app-log.example';
const clock = testClock(Date.parse('2027-02-01T09:00:00Z'));
const tmp = tempDir('app-log');
const QUERY = 'check_in=2027-03-01&check_out=2027-03-04&guests=2';
let store: NodeStore;
let service: Awaited<ReturnType<typeof createOfferService>>;

beforeAll(async () => {
  const dataDir = join(tmp.dir, 'node');
  await initNode({ domain: DOMAIN, dataDir, clock });
  store = await NodeStore.open(storeTargetFor(dataDir));
  service = await createOfferService({ store, keys: nodePaths(dataDir).keys, clock });
});

afterAll(async () => {
  await store?.close();
  tmp.cleanup();
});

describe('request hooks', () => {
  it('observes every request without a log line, and logs with the query digested when asked to', async () => {
    const observed: [string, number][] = [];
    const observe = (path: string, status: number, latencyMs: number) => {
      expect(latencyMs).toBeGreaterThanOrEqual(0);
      observed.push([path, status]);
    };
    const quiet = createNodeApp(service, { observe, canonicalHostOnly: false });
    expect((await quiet.request(`https://${DOMAIN}${OFFER_ENDPOINT_PATH}?${QUERY}`)).status).toBe(200);
    expect((await quiet.request(`https://${DOMAIN}/nowhere`)).status).toBe(404);
    expect(observed).toEqual([
      [OFFER_ENDPOINT_PATH, 200],
      ['/nowhere', 404],
    ]);

    const lines: RequestLogEntry[] = [];
    const logging = createNodeApp(service, { observe, log: (e) => lines.push(e), canonicalHostOnly: false });
    expect((await logging.request(`https://${DOMAIN}${OFFER_ENDPOINT_PATH}?${QUERY}`)).status).toBe(200);
    expect(observed).toHaveLength(3);
    expect(lines).toEqual([
      {
        event: 'request',
        method: 'GET',
        path: OFFER_ENDPOINT_PATH,
        query_sha256: createHash('sha256').update(QUERY).digest('hex').slice(0, 16),
        status: 200,
        latency_ms: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('check_in');
  });
});
