/**
 * The signed-offer cache over real https: a repeated request gets the identical bytes of the
 * earlier response (which still verify with the reference verifier), and no write that can
 * change an offer — a booking, a host block, a calendar sync, a price change, a key rotation or
 * revocation — is ever answered from the cache, neither by one process nor by `--workers 2`
 * (the write is made by another process, as the CLI makes it). Time alone ends an entry too:
 * max-age, 5 minutes before `valid_until`, a calendar feed turning stale, the property's day
 * changing. With the cache off every response is signed afresh, in the same shape as before.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as reference from '@vacationrentalprotocol/vrp-verify';
import { createHardenedFetch } from '@vrpkit/agent';
import { fixedClock, toUtcSecond } from '@vrpkit/core';
import {
  addCalendarBlock,
  addCalendarFeed,
  initNode,
  listKeys,
  type OfferOutcome,
  offerFor,
  propertyDocument,
  revokeKey,
  rotateKey,
  type ServedNode,
  sampleProperty,
  serveNode,
  syncCalendar,
  updateProperty,
} from '@vrpkit/node';
import { BOUND_TOOL_NAME, JWKS_PATH, MCP_ENDPOINT_PATH, OFFER_ENDPOINT_PATH, type OfferEnvelope, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { type CliRun, listeningEvent, vrpCli } from '@vrpkit/testkit/cli';
import { blockingFeed, dayAfter, nodeClient, schemaErrors, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const DOMAIN = 'offer-cache.example';
const tmp = tempDir('offer-cache');
// The CLI starts under tsx (three processes with --workers 2) on a shared 2-core machine.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });
afterAll(() => tmp.cleanup());

const envelopeOf = (body: string) => JSON.parse(body) as OfferEnvelope;
const stay = (from: number, nights: number) => ({ check_in: dayAfter(Date.now(), from), check_out: dayAfter(Date.now(), from + nights) });
const queryOf = (s: { check_in: string; check_out: string }) => `check_in=${s.check_in}&check_out=${s.check_out}&guests=2`;

const EMPTY_ICS = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//other channel//EN', 'END:VCALENDAR'].join('\r\n');

describe.each([
  ['one process', 1],
  ['--workers 2', 2],
] as const)('vrp node serve (%s): the signed-offer cache never outlives a write', (_mode, workers) => {
  const dataDir = join(tmp.dir, `node-${workers}`);
  const propertyFile = join(tmp.dir, `property-${workers}.json`);
  const feedFile = join(tmp.dir, `feed-${workers}.ics`);
  const property = sampleProperty(Date.now());
  let run: CliRun;
  let port: number;
  let ca: string;

  beforeAll(async () => {
    writeFileSync(propertyFile, JSON.stringify(propertyDocument(property)));
    await initNode({ domain: DOMAIN, dataDir, propertyFile });
    // The default --offer-cache-max-age (60 s): the cache is on.
    run = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', ...(workers > 1 ? ['--workers', String(workers)] : [])]);
    const listening = await listeningEvent(run);
    port = listening.port;
    ca = readFileSync(listening.ca, 'utf8');
  });

  afterAll(async () => {
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  /** One offer request on a connection of its own (the primary deals new connections to the workers in turn). */
  async function get(path: string): Promise<{ status: number; headers: Headers; text: string }> {
    const client = nodeClient(DOMAIN, port, ca);
    try {
      return await client.get(path);
    } finally {
      await client.close();
    }
  }

  /**
   * The offer for `query` as `2 × workers` requests on fresh connections see it: every process
   * signs it at most once, so there are at most `workers` distinct responses (the cache is on).
   */
  async function served(query: string): Promise<string[]> {
    const bodies: string[] = [];
    for (let i = 0; i < 2 * workers; i++) {
      const res = await get(`${OFFER_ENDPOINT_PATH}?${query}`);
      expect(res.status).toBe(200);
      bodies.push(res.text);
    }
    expect(new Set(bodies).size).toBeLessThanOrEqual(workers);
    return bodies;
  }

  async function jwks() {
    return JSON.parse((await get(JWKS_PATH)).text) as reference.Jwks;
  }

  /** Every response after the write is new (none of the cached bytes) and satisfies `check`. */
  function expectAllFresh(before: string[], after: string[], check: (e: OfferEnvelope) => void) {
    for (const body of after) {
      expect(before).not.toContain(body);
      check(envelopeOf(body));
    }
  }

  it('a hit is the identical bytes of the earlier response, and they still verify with the reference verifier', async () => {
    const query = queryOf(stay(20, 3));
    const bodies = await served(query);
    // 2 × workers requests, at most one signature per process: some response came from a cache.
    const hit = bodies.find((b, i) => bodies.indexOf(b) !== i)!;
    expect(hit).toBeDefined();
    const res = await get(`${OFFER_ENDPOINT_PATH}?${query}`);
    expect(bodies).toContain(res.text);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers.get('cache-control')).toBe('no-store');
    const envelope = envelopeOf(hit);
    expect(schemaErrors('offer', envelope)).toEqual([]);
    const verdict = reference.verifyOffer({
      envelope: envelope as unknown as Record<string, unknown>,
      jwks: await jwks(),
      now: new Date(),
    });
    expect(verdict).toMatchObject({ status: 'verified', code: null, fresh: true, payloadMatchesOffer: true });
  });

  it('after a booking of the stay’s nights', async () => {
    const s = stay(24, 3);
    const before = await served(queryOf(s));
    expect(envelopeOf(before[0]!).offer.availability.available).toBe(true);
    await addCalendarBlock({ dataDir, from: s.check_in, to: s.check_out, kind: 'booking' });
    expectAllFresh(before, await served(queryOf(s)), (e) =>
      expect(e.offer.availability).toMatchObject({ available: false, reason: 'not_available' }),
    );
  });

  it('after a host calendar block', async () => {
    const s = stay(28, 3);
    const before = await served(queryOf(s));
    expect(envelopeOf(before[0]!).offer.availability.available).toBe(true);
    await addCalendarBlock({ dataDir, from: s.check_in, to: dayAfter(Date.now(), 29), kind: 'block' });
    expectAllFresh(before, await served(queryOf(s)), (e) =>
      expect(e.offer.availability).toMatchObject({ available: false, reason: 'not_available' }),
    );
  });

  it('after a calendar sync that imports a booking', async () => {
    writeFileSync(feedFile, EMPTY_ICS);
    await addCalendarFeed({ dataDir, name: 'other-channel', file: feedFile });
    await syncCalendar({ dataDir });
    const s = stay(32, 3);
    const before = await served(queryOf(s));
    expect(envelopeOf(before[0]!).offer.availability.available).toBe(true);
    writeFileSync(feedFile, blockingFeed(s.check_in, s.check_out));
    expect(await syncCalendar({ dataDir })).toEqual([{ name: 'other-channel', ok: true, ranges: 1 }]);
    expectAllFresh(before, await served(queryOf(s)), (e) =>
      expect(e.offer.availability).toMatchObject({ available: false, reason: 'not_available' }),
    );
  });

  it('after a price change', async () => {
    const s = stay(36, 3);
    const before = await served(queryOf(s));
    const total = envelopeOf(before[0]!).offer.price.total as number;
    const fee = property.fees[0]!;
    writeFileSync(propertyFile, JSON.stringify(propertyDocument({ ...property, fees: [{ ...fee, amount: fee.amount + 1000 }] })));
    await updateProperty({ dataDir, propertyFile });
    expectAllFresh(before, await served(queryOf(s)), (e) => expect(e.offer.price.total).toBe(total + 1000));
  });

  it('after a key rotation', async () => {
    const s = stay(40, 3);
    const before = await served(queryOf(s));
    const rotated = await rotateKey({ dataDir });
    expect(envelopeOf(before[0]!).signature.kid).not.toBe(rotated.kid);
    const keys = await jwks();
    expectAllFresh(before, await served(queryOf(s)), (e) => {
      expect(e.signature.kid).toBe(rotated.kid);
      expect(reference.verifyOffer({ envelope: e as unknown as Record<string, unknown>, jwks: keys, now: new Date() }).status).toBe(
        'verified',
      );
    });
  });

  it('after a revocation of the signing key', async () => {
    const s = stay(44, 3);
    const before = await served(queryOf(s));
    const active = (await listKeys({ dataDir })).find((k) => k.status === 'active')!;
    expect(envelopeOf(before[0]!).signature.kid).toBe(active.kid);
    const revoked = await revokeKey({ dataDir, kid: active.kid });
    const keys = await jwks();
    // Served from the cache, the earlier bytes would now be unverifiable: their key is gone from the JWKS.
    const stale = reference.verifyOffer({ envelope: JSON.parse(before[0]!), jwks: keys, now: new Date() });
    expect(stale).toMatchObject({ status: 'unverifiable', code: 'kid_not_in_jwks' });
    expectAllFresh(before, await served(queryOf(s)), (e) => {
      expect(e.signature.kid).toBe(revoked.new_active_kid);
      expect(reference.verifyOffer({ envelope: e as unknown as Record<string, unknown>, jwks: keys, now: new Date() }).status).toBe(
        'verified',
      );
    });
  });
});

describe('vrp node serve --offer-cache-max-age', () => {
  it('0 signs every offer afresh', async () => {
    const dataDir = join(tmp.dir, 'cli-off');
    await initNode({ domain: DOMAIN, dataDir });
    const run = vrpCli(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--offer-cache-max-age', '0']);
    try {
      const listening = await listeningEvent(run);
      const client = nodeClient(DOMAIN, listening.port, readFileSync(listening.ca, 'utf8'));
      const path = `${OFFER_ENDPOINT_PATH}?${queryOf(stay(20, 3))}`;
      const [a, b] = [await client.get(path), await client.get(path)];
      await client.close();
      expect(a.status).toBe(200);
      expect(envelopeOf(b.text).offer.booking.offer_id).not.toBe(envelopeOf(a.text).offer.booking.offer_id);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });

  it.each(['3601', '1.5'])('refuses %s as a usage error (exit 64)', async (value) => {
    const run = vrpCli(['node', 'serve', '--data-dir', join(tmp.dir, 'none'), '--dev', '--offer-cache-max-age', value]);
    expect(await run.exited).toBe(64);
    expect(run.stderr()).toMatch(/--offer-cache-max-age/);
  });
});

describe('signed-offer cache on the node clock', () => {
  /** 2027-01-10 12:00 UTC: winter, so Europe/Stockholm (the sample property's zone) is UTC+1. */
  const T0 = Date.parse('2027-01-10T12:00:00Z');
  const STAY = { check_in: '2027-02-01', check_out: '2027-02-04' };
  const started: { node: ServedNode; close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });

  /** A node on its own test clock (dev CA, https), with a client; `prepare` runs before it serves. */
  async function clockNode(name: string, offerCacheMaxAgeSeconds?: number, prepare?: (dataDir: string) => Promise<unknown>) {
    const clock = testClock(T0);
    const dataDir = join(tmp.dir, `clock-${name}`);
    await initNode({ domain: DOMAIN, dataDir, clock });
    await prepare?.(dataDir);
    const node = await serveNode({
      dataDir,
      dev: true,
      clock,
      ...(offerCacheMaxAgeSeconds !== undefined ? { offerCacheMaxAgeSeconds } : {}),
    });
    const client = nodeClient(DOMAIN, node.port, node.caPem!);
    const close = async () => {
      await client.close();
      await node.close();
    };
    started.push({ node, close });
    const offer = async (s: { check_in: string; check_out: string } = STAY) => {
      const res = await client.get(`${OFFER_ENDPOINT_PATH}?${queryOf(s)}`);
      return { status: res.status, text: res.text };
    };
    return { clock, node, offer, dataDir };
  }

  it('reuses a signed offer for at most max-age (default 60 s); generated_at stays the signing time', async () => {
    const { clock, offer } = await clockNode('max-age');
    const first = await offer();
    clock.advance(59_999);
    expect((await offer()).text).toBe(first.text);
    clock.advance(1);
    const next = await offer();
    expect(next.text).not.toBe(first.text);
    expect(envelopeOf(first.text).offer.generated_at).toBe(toUtcSecond(T0));
    expect(envelopeOf(next.text).offer.generated_at).toBe(toUtcSecond(T0 + 60_000));
  });

  it('never hands out an offer within 5 minutes of its valid_until, whatever the max-age', async () => {
    const { clock, offer } = await clockNode('margin', 3600);
    const first = await offer();
    // Sample property: offer_lifetime_minutes 15, so valid_until = T0 + 15 min.
    expect(envelopeOf(first.text).offer.valid_until).toBe(toUtcSecond(T0 + 15 * 60_000));
    clock.set(T0 + 10 * 60_000 - 1);
    expect((await offer()).text).toBe(first.text);
    clock.set(T0 + 10 * 60_000);
    const next = await offer();
    expect(next.text).not.toBe(first.text);
    expect(envelopeOf(next.text).offer.generated_at).toBe(toUtcSecond(T0 + 10 * 60_000));
  });

  it('never serves an available offer once an imported calendar has turned stale', async () => {
    const feed = join(tmp.dir, 'stale.ics');
    writeFileSync(feed, EMPTY_ICS);
    const { clock, offer } = await clockNode('stale', 3600, async (dataDir) => {
      await addCalendarFeed({ dataDir, name: 'other-channel', file: feed, clock: fixedClock(T0) });
      await syncCalendar({ dataDir, clock: fixedClock(T0) });
    });
    // Sample property: calendar_max_age_minutes 180; the feed's last success is T0.
    const staleAfter = T0 + 180 * 60_000;
    clock.set(staleAfter - 30_000);
    const fresh = await offer();
    expect(envelopeOf(fresh.text).offer.availability.available).toBe(true);
    clock.set(staleAfter);
    expect((await offer()).text).toBe(fresh.text);
    clock.set(staleAfter + 1);
    expect(envelopeOf((await offer()).text).offer.availability).toMatchObject({ available: false, reason: 'calendar_stale' });
  });

  it('never serves an offer across the property’s midnight (date_in_past follows the local day)', async () => {
    const { clock, offer } = await clockNode('midnight', 3600);
    const tonight = { check_in: '2027-01-10', check_out: '2027-01-12' };
    clock.set(Date.parse('2027-01-10T22:59:50Z')); // 23:59:50 in Stockholm
    const before = await offer(tonight);
    expect(before.status).toBe(200);
    expect(envelopeOf(before.text).offer.availability.available).toBe(true);
    clock.set(Date.parse('2027-01-10T23:00:10Z')); // 00:00:10 on 2027-01-11
    const after = await offer(tonight);
    expect(after.status).toBe(400);
    expect(JSON.parse(after.text)).toMatchObject({ error: { code: 'date_in_past' } });
  });

  it('answers from the cache in the request’s own turn only while the store is unchanged since the offer was read', async () => {
    const { node, dataDir, offer } = await clockNode('served-now');
    const service = node.service;
    const query = new URLSearchParams(queryOf(STAY));
    const first = await offer();
    /** What the service answered in this turn: a value, never a promise (no store read and no signature to wait for). */
    const now = (q: URLSearchParams) => {
      const r = offerFor(service, q);
      expect(r).not.toBeInstanceOf(Promise);
      return r as OfferOutcome;
    };
    const hit = now(query);
    expect(hit.ok && hit.json).toBe(first.text);
    // A refusal needs no signature: it is answered in the same turn, with the parser's code.
    expect(now(new URLSearchParams(`check_in=${STAY.check_in}`))).toMatchObject({
      ok: false,
      error: { code: 'missing_parameter' },
    });
    // A write through another store handle (as another process makes it): the revision moved, so the answer waits for a reload.
    await addCalendarBlock({ dataDir, from: STAY.check_in, to: STAY.check_out, kind: 'block' });
    const waited = offerFor(service, query);
    expect(waited).toBeInstanceOf(Promise);
    await waited;
    const after = await offer();
    expect(after.text).not.toBe(first.text);
    expect(envelopeOf(after.text).offer.availability).toMatchObject({ available: false, reason: 'not_available' });
    const again = now(query);
    expect(again.ok && again.json).toBe(after.text);
    // Cache off: no store wait either, but always signed afresh (never an earlier response), in this turn's signing batch.
    const off = await clockNode('served-now-off', 0);
    const offFirst = await off.offer();
    expect(offFirst.status).toBe(200);
    const signing = offerFor(off.node.service, query);
    expect(signing).toBeInstanceOf(Promise);
    const signedNow = await signing;
    expect(signedNow.ok).toBe(true);
    expect(signedNow.ok && signedNow.json).not.toBe(offFirst.text);
    expect(signedNow.ok && envelopeOf(signedNow.json).offer.request).toEqual(envelopeOf(offFirst.text).offer.request);
  });

  it('signs a stay asked by several requests in one turn once (the signing batch), and each distinct stay once', async () => {
    const { node } = await clockNode('one-turn');
    const service = node.service;
    const other = { check_in: STAY.check_in, check_out: dayAfter(Date.parse(STAY.check_out), 1) };
    const ask = (s: typeof STAY) => offerFor(service, new URLSearchParams(queryOf(s)));
    // Five requests in the same turn, before the batch runs: three for STAY, two for another stay.
    const pending = [STAY, STAY, other, STAY, other].map(ask);
    for (const p of pending) expect(p).toBeInstanceOf(Promise);
    const bodies = (await Promise.all(pending)).map((o) => (o.ok ? o.json : 'refused'));
    expect(new Set(bodies).size).toBe(2);
    expect(bodies[0]).toBe(bodies[1]);
    expect(bodies[2]).toBe(bodies[4]);
    expect(envelopeOf(bodies[2]!).offer.request?.check_out).toBe(other.check_out);
    // Signed and cached: the next request is answered in its own turn with the same bytes.
    const hit = ask(STAY);
    expect(hit).not.toBeInstanceOf(Promise);
    expect((hit as OfferOutcome).ok && (hit as { json: string }).json).toBe(bodies[0]);
  });

  it('never serves an offer signed in the future of a clock that went back', async () => {
    const { clock, offer } = await clockNode('backwards');
    const first = await offer();
    clock.set(T0 - 5_000);
    const next = await offer();
    expect(next.text).not.toBe(first.text);
    expect(envelopeOf(next.text).offer.generated_at).toBe(toUtcSecond(T0 - 5_000));
  });

  it('off (max-age 0): every request signs afresh, in exactly the shape and values of a cached response but for issuance', async () => {
    const on = await clockNode('shape');
    // The same store served a second time, with the cache off.
    const offNode = await serveNode({ dataDir: on.dataDir, dev: true, clock: on.clock, offerCacheMaxAgeSeconds: 0 });
    const offClient = nodeClient(DOMAIN, offNode.port, offNode.caPem!);
    started.push({
      node: offNode,
      close: async () => {
        await offClient.close();
        await offNode.close();
      },
    });
    const path = `${OFFER_ENDPOINT_PATH}?${queryOf(STAY)}`;
    const [a, b] = [await offClient.get(path), await offClient.get(path)];
    expect(envelopeOf(b.text).offer.booking.offer_id).not.toBe(envelopeOf(a.text).offer.booking.offer_id);
    const cached = await on.offer();
    // Same clock time, same property: only the offer id (and so the booking URL and the signature) differs per issuance.
    const issuance = (text: string) => {
      const e = envelopeOf(text);
      return text.replaceAll(e.offer.booking.offer_id as string, '<offer_id>').replace(e.signature.jws, '<jws>');
    };
    expect(issuance(a.text)).toBe(issuance(cached.text));
    expect(issuance(b.text)).toBe(issuance(cached.text));
    // The booking page's live re-quote never comes from the cache.
    const live = await offerFor(on.node.service, { ...STAY, guests: 2 }, { fresh: true });
    expect(live.ok && live.envelope.offer.booking.offer_id).not.toBe(envelopeOf(cached.text).offer.booking.offer_id);
    expect(live.ok && issuance(live.json)).toBe(issuance(cached.text));
  });

  it('MCP tools/call carries the cached offer bytes and a receipt signed for each call', async () => {
    const { clock, node, offer } = await clockNode('mcp');
    const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem as string });
    try {
      const call = async (id: number) => {
        const res = await fetch(`https://${DOMAIN}${MCP_ENDPOINT_PATH}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: BOUND_TOOL_NAME, arguments: { ...STAY, guests: 2 } },
          }),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as {
          result: {
            content: { text: string }[];
            _meta: Record<string, { attestations: { layer: string; signature: string; valid_from: string }[] }>;
          };
        };
      };
      const endpoint = await offer();
      const first = await call(1);
      clock.advance(2_000);
      const second = await call(2);
      expect(first.result.content[0]!.text).toBe(endpoint.text);
      expect(second.result.content[0]!.text).toBe(endpoint.text);
      const receipts = [first, second].map((r) => r.result._meta[RECEIPT_META_KEY]!.attestations);
      const jws = envelopeOf(endpoint.text).signature.jws;
      for (const [offerLayer] of receipts) expect(offerLayer!.signature).toBe(jws);
      // The transport layer is signed per call: its own served_at and signature.
      expect(receipts[1]![1]!.valid_from).toBe(toUtcSecond(T0 + 2_000));
      expect(receipts[1]![1]!.signature).not.toBe(receipts[0]![1]!.signature);
    } finally {
      await fetch.close();
    }
  });
});
