/**
 * `/healthz` and `/readyz` on a served node over https: alive is 200; ready is 200 only when
 * the store answers, the signing key loads and every calendar feed is fresh, else 503 naming
 * the failing check, and never a path, URL or key id.
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServedNode } from '@vrpkit/node';
import { addCalendarFeed, type ReadinessReport, rotateKey, syncCalendar } from '@vrpkit/node';
import { closeTestNode, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'health-node.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('health');
const dataDir = join(tmp.dir, 'node');
const feedFile = join(tmp.dir, 'private-channel-export.ics');
const ICS = 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nEND:VCALENDAR\r\n';

const served: { node?: ServedNode; client?: NodeClient } = {};
beforeAll(async () => Object.assign(served, await serveTestNode(DOMAIN, dataDir, clock)));
afterAll(() => closeTestNode(served, tmp));

async function readyz(): Promise<{ status: number; body: ReadinessReport; text: string }> {
  const r = await served.client!.get('/readyz');
  return { status: r.status, body: JSON.parse(r.text) as ReadinessReport, text: r.text };
}

describe('health endpoints', () => {
  it('/healthz is 200 JSON while the process answers; other methods are 405', async () => {
    const r = await served.client!.get('/healthz');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(r.text)).toEqual({ status: 'ok' });
    expect((await served.client!.request('POST', '/healthz')).status).toBe(405);
    expect((await served.client!.request('POST', '/readyz')).status).toBe(405);
  });

  it('/readyz is 200 with every check passing on a node without feeds', async () => {
    const r = await readyz();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ready: true,
      checks: { store: { ok: true }, signing_key: { ok: true }, calendar: { ok: true, feeds: [] } },
    });
  });

  it('/readyz is 503 while a feed is stale or failed, naming the feed but never its file', async () => {
    writeFileSync(feedFile, ICS);
    await addCalendarFeed({ dataDir, name: 'channel', file: feedFile, clock });
    let r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.ready).toBe(false);
    expect(r.body.checks.calendar).toEqual({
      ok: false,
      code: 'calendar_feed_stale',
      feeds: [{ name: 'channel', status: 'stale', last_success_at: null }],
    });

    await syncCalendar({ dataDir, clock });
    r = await readyz();
    expect(r.status).toBe(200);
    expect(r.body.checks.calendar.feeds).toEqual([{ name: 'channel', status: 'fresh', last_success_at: '2027-02-01T09:00:00.000Z' }]);

    rmSync(feedFile);
    await syncCalendar({ dataDir, clock });
    r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.checks.calendar).toMatchObject({
      ok: false,
      code: 'calendar_feed_failed',
      feeds: [{ name: 'channel', status: 'failed' }],
    });
    expect(r.text).not.toContain('private-channel-export');
    expect(r.text).not.toContain(tmp.dir);

    // Past calendar_max_age_minutes (180) a feed is stale even without a failure.
    writeFileSync(feedFile, ICS);
    await syncCalendar({ dataDir, clock });
    expect((await readyz()).status).toBe(200);
    clock.advance(181 * 60_000);
    r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.checks.calendar.feeds[0]!.status).toBe('stale');
    await syncCalendar({ dataDir, clock });
    expect((await readyz()).status).toBe(200);
  });

  it('/readyz is 503 when the active signing key cannot be loaded, without naming it', async () => {
    const { kid } = await rotateKey({ dataDir, clock });
    for (const f of readdirSync(join(dataDir, 'keys'))) if (f.includes(kid)) rmSync(join(dataDir, 'keys', f));
    const r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.checks.signing_key).toEqual({ ok: false, code: 'private_key_missing' });
    expect(r.body.checks.store).toEqual({ ok: true });
    expect(r.text).not.toContain(kid);
  });
});
