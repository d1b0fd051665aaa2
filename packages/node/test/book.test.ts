/**
 * The booking page (Core VRP v0.1 §5.1) re-quotes live and fails closed: it shows the terms of a fresh
 * signed offer, never the price an earlier offer carried, and says so when the stay is gone.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addCalendarBlock, propertyDocument, type ServedNode, sampleProperty, updateProperty } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH, type OfferEnvelope } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'book-node.example';
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('book');
const dataDir = join(tmp.dir, 'node');
let node: ServedNode;
let client: NodeClient;

beforeAll(async () => {
  ({ node, client } = await serveTestNode(DOMAIN, dataDir, clock));
});

afterAll(() => closeTestNode({ node, client }, tmp));

/** The signed envelope the page embeds for scripts (`<script type="application/json" id="vrp-offer">`). */
function embedded(html: string): OfferEnvelope {
  const m = /<script type="application\/json" id="vrp-offer">(.*?)<\/script>/s.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]!) as OfferEnvelope;
}

async function offerFor(query: string): Promise<OfferEnvelope> {
  return JSON.parse((await client.get(`${OFFER_ENDPOINT_PATH}?${query}`)).text) as OfferEnvelope;
}

describe('/book', () => {
  it('shows the current signed terms of the stay in the link', async () => {
    const o = await offerFor('check_in=2027-03-01&check_out=2027-03-05&guests=2');
    const res = await client.get(new URL(o.offer.booking.direct_booking_url).pathname + new URL(o.offer.booking.direct_booking_url).search);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toContain('data-available="true"');
    expect(res.text).toContain(`data-minor="${o.offer.price.agent_total}"`);
    const fresh = embedded(res.text);
    expect(fresh.offer.price.agent_total).toBe(o.offer.price.agent_total);
    expect(fresh.offer.booking.offer_id).not.toBe(o.offer.booking.offer_id); // re-quoted, not replayed
  });

  it('never honours the old price: after a rate change the same link shows the new total', async () => {
    const o = await offerFor('check_in=2027-03-01&check_out=2027-03-05&guests=2');
    const link = o.offer.booking.direct_booking_url.replace(`https://${DOMAIN}`, '');
    // The host raises the rates with `vrp node property update`; the running node needs no restart.
    const p = sampleProperty(clock.now());
    const file = join(tmp.dir, 'raised.json');
    writeFileSync(
      file,
      JSON.stringify(
        propertyDocument({
          ...p,
          rates: { ...p.rates, nightly: p.rates.nightly + 10_000, weekend: (p.rates.weekend ?? p.rates.nightly) + 10_000 },
        }),
      ),
    );
    await updateProperty({ dataDir, propertyFile: file, clock });
    const res = await client.get(link);
    const newTotal = embedded(res.text).offer.price.agent_total!;
    expect(newTotal).toBe(o.offer.price.agent_total! + 4 * 10_000);
    expect(res.text).toContain(`data-minor="${newTotal}"`);
    expect(res.text).not.toContain(`data-minor="${o.offer.price.agent_total}"`);
  });

  it('fails closed when the stay is gone: it says so and shows no price', async () => {
    const o = await offerFor('check_in=2027-04-01&check_out=2027-04-04&guests=2');
    expect(o.offer.availability.available).toBe(true);
    await addCalendarBlock({ dataDir, from: '2027-04-02', to: '2027-04-03', kind: 'booking', clock });
    const res = await client.get(o.offer.booking.direct_booking_url.replace(`https://${DOMAIN}`, ''));
    expect(res.status).toBe(200);
    expect(res.text).toContain('data-available="false"');
    expect(res.text).toContain('no longer available');
    expect(res.text).not.toContain('data-minor=');
    expect(embedded(res.text).offer.availability).toMatchObject({ available: false, reason: 'not_available' });
  });

  it('answers a malformed link with 400 and no offer', async () => {
    const res = await client.get('/book?checkIn=2027-04-05&checkOut=2027-04-01&guests=2&offer=x');
    expect(res.status).toBe(400);
    expect(res.text).toContain('invalid_range');
    expect(res.text).not.toContain('id="vrp-offer"');
  });

  describe('/book parses parameters differently from the offer endpoint (first of duplicate checkIn wins, checkIn preferred over check_in; the endpoint answers duplicate_parameter), and /book sends no CSP', () => {
    it.each([
      ['checkIn twice', 'checkIn=2027-03-01&checkIn=2027-03-02&checkOut=2027-03-05&guests=2'],
      ['checkIn and check_in', 'checkIn=2027-03-01&check_in=2027-03-02&checkOut=2027-03-05&guests=2'],
      ['guests twice', 'checkIn=2027-03-01&checkOut=2027-03-05&guests=2&guests=3'],
    ])('%s: /book answers duplicate_parameter like the endpoint', async (_label, query) => {
      const endpoint = await client.get(`${OFFER_ENDPOINT_PATH}?${query}`);
      expect(JSON.parse(endpoint.text).error.code).toBe('duplicate_parameter');
      const book = await client.get(`/book?${query}&offer=x`);
      expect(book.status).toBe(400);
      expect(book.text).toContain('(duplicate_parameter)');
      expect(book.text).not.toContain('id="vrp-offer"');
    });

    it("an unknown parameter is unknown_parameter on both; the link's own offer reference is not", async () => {
      const query = 'checkIn=2027-03-01&checkOut=2027-03-05&guests=2&utm_source=x';
      expect(JSON.parse((await client.get(`${OFFER_ENDPOINT_PATH}?${query}`)).text).error.code).toBe('unknown_parameter');
      expect((await client.get(`/book?${query}`)).text).toContain('(unknown_parameter)');
      expect((await client.get('/book?checkIn=2027-03-01&checkOut=2027-03-05&guests=2&offer=a&offer=b')).text).toContain(
        '(duplicate_parameter)',
      );
    });

    it('every HTML page sends the same security headers (CSP included)', async () => {
      const property = await client.get('/');
      const pages = [
        property,
        await client.get('/book?checkIn=2027-03-01&checkOut=2027-03-05&guests=2'),
        await client.get('/book?guests=x'),
      ];
      expect(property.headers.get('content-security-policy')).toContain("script-src 'self'");
      for (const page of pages) {
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        for (const name of ['content-security-policy', 'x-content-type-options', 'referrer-policy']) {
          expect(page.headers.get(name), name).toBe(property.headers.get(name));
        }
      }
    });
  });

  it('a method the resource does not take is 405 with Allow, not 404 (the offer endpoint is GET only; /book also takes its form POST)', async () => {
    for (const [path, methods, allow] of [
      [`${OFFER_ENDPOINT_PATH}?check_in=2027-03-01&check_out=2027-03-05&guests=2`, ['POST', 'PUT', 'DELETE'], 'GET, HEAD'],
      ['/book', ['PUT', 'DELETE', 'PATCH'], 'GET, HEAD, POST'],
    ] as const) {
      for (const method of methods) {
        const res = await client.request(method, path);
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 405 });
        expect(res.headers.get('allow')).toBe(allow);
        expect(JSON.parse(res.text).error.code).toBe('method_not_allowed');
      }
    }
  });

  it('escapes what it echoes', async () => {
    const res = await client.get('/book?checkIn=%3Cscript%3Ealert(1)%3C%2Fscript%3E&checkOut=2027-04-01&guests=2');
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<script>alert(1)');
  });
});
