/**
 * Core VRP v0.1 §4 malformed input, over real https: every case answers HTTP 400 with
 * `{error:{code,message}}` and a stable code; user input never produces a 5xx. The same
 * validation runs for tool-surface arguments (JSON values) through `service.getOffer`.
 */
import { join } from 'node:path';
import { offerFor, type ServedNode } from '@vrpkit/node';
import { OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_LENGTH } from '../src/http/query.js';

const DOMAIN = 'bad-inputs.example';
// Today at the property (Europe/Stockholm) is 2027-02-01; the sample horizon is 365 days.
const clock = testClock('2027-02-01T09:00:00Z');
const tmp = tempDir('bad-inputs');
let node: ServedNode;
let client: NodeClient;

beforeAll(async () => {
  ({ node, client } = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), clock));
});

afterAll(() => closeTestNode({ node, client }, tmp));

const ok = 'check_in=2027-03-01&check_out=2027-03-05&guests=2';

const table: [string, string, string][] = [
  ['no parameters', '', 'missing_parameter'],
  ['missing check_out', 'check_in=2027-03-01&guests=2', 'missing_parameter'],
  ['missing guests', 'check_in=2027-03-01&check_out=2027-03-05', 'missing_parameter'],
  ['empty guests', 'check_in=2027-03-01&check_out=2027-03-05&guests=', 'missing_parameter'],
  ['date not YYYY-MM-DD', 'check_in=2027-3-1&check_out=2027-03-05&guests=2', 'invalid_date'],
  ['date that does not exist', 'check_in=2027-02-30&check_out=2027-03-05&guests=2', 'invalid_date'],
  ['date with a time', 'check_in=2027-03-01T00:00:00Z&check_out=2027-03-05&guests=2', 'invalid_date'],
  ['check_out before check_in', 'check_in=2027-03-05&check_out=2027-03-01&guests=2', 'invalid_range'],
  ['check_out equal to check_in', 'check_in=2027-03-05&check_out=2027-03-05&guests=2', 'invalid_range'],
  ['a stay over 365 nights', 'check_in=2027-03-01&check_out=2028-03-05&guests=2', 'invalid_range'],
  ['guests zero', 'check_in=2027-03-01&check_out=2027-03-05&guests=0', 'invalid_guests'],
  ['guests negative', 'check_in=2027-03-01&check_out=2027-03-05&guests=-1', 'invalid_guests'],
  ['guests fractional', 'check_in=2027-03-01&check_out=2027-03-05&guests=2.5', 'invalid_guests'],
  ['guests not a number', 'check_in=2027-03-01&check_out=2027-03-05&guests=two', 'invalid_guests'],
  ['guests with leading zero', 'check_in=2027-03-01&check_out=2027-03-05&guests=02', 'invalid_guests'],
  ['guests huge', 'check_in=2027-03-01&check_out=2027-03-05&guests=99999999999999999999', 'invalid_guests'],
  ['check_in in the past', 'check_in=2027-01-20&check_out=2027-01-25&guests=2', 'date_in_past'],
  ['check_in beyond the booking horizon', 'check_in=2028-03-01&check_out=2028-03-05&guests=2', 'beyond_horizon'],
  ['unknown parameter', `${ok}&pets=1`, 'unknown_parameter'],
  ['unknown parameter named like a price', `${ok}&price=1`, 'unknown_parameter'],
  ['a __proto__ parameter', `${ok}&__proto__=1`, 'unknown_parameter'],
  ['a constructor parameter', `${ok}&constructor=1`, 'unknown_parameter'],
  ['parameter given twice', `${ok}&guests=3`, 'duplicate_parameter'],
  ['snake_case and camelCase together', `${ok}&checkIn=2027-03-01`, 'duplicate_parameter'],
  ['bad language tag', `${ok}&language=<script>`, 'invalid_language'],
  ['oversized query string', `${ok}&language=${'a'.repeat(MAX_QUERY_LENGTH)}`, 'query_too_long'],
  ['oversized single value', `check_in=${'2'.repeat(4000)}&check_out=2027-03-05&guests=2`, 'query_too_long'],
  ['percent-encoded junk', 'check_in=%FF%FE&check_out=2027-03-05&guests=2', 'invalid_date'],
];

describe('offer endpoint bad inputs → 400 {error:{code,message}}', () => {
  it.each(table)('%s', async (_name, query, code) => {
    const res = await client.get(`${OFFER_ENDPOINT_PATH}${query ? `?${query}` : ''}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = JSON.parse(res.text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(Object.keys(body)).toEqual(['error']);
  });

  it('the well-formed control query is answered 200', async () => {
    expect((await client.get(`${OFFER_ENDPOINT_PATH}?${ok}`)).status).toBe(200);
  });
});

describe('tool-surface arguments (JSON values) get the same codes', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    // JSON arguments follow the advertised schema (integer); digits as text are the HTTP query's form only (issue 32 item 7).
    ['guests as a string number is refused', { check_in: '2027-03-01', check_out: '2027-03-05', guests: '2' }, 'invalid_guests'],
    ['guests as a JSON number', { check_in: '2027-03-01', check_out: '2027-03-05', guests: 2 }, 'ok'],
    ['guests as a float', { check_in: '2027-03-01', check_out: '2027-03-05', guests: 2.5 }, 'invalid_guests'],
    ['guests as a boolean', { check_in: '2027-03-01', check_out: '2027-03-05', guests: true }, 'invalid_guests'],
    ['date as a number', { check_in: 20270301, check_out: '2027-03-05', guests: 2 }, 'invalid_date'],
    ['null guests', { check_in: '2027-03-01', check_out: '2027-03-05', guests: null }, 'missing_parameter'],
    ['extra argument', { check_in: '2027-03-01', check_out: '2027-03-05', guests: 2, property_id: 'x' }, 'unknown_parameter'],
    ['prototype key', JSON.parse('{"check_in":"2027-03-01","check_out":"2027-03-05","guests":2,"__proto__":{"x":1}}'), 'unknown_parameter'],
  ];
  it.each(cases)('%s', async (_name, args, code) => {
    const r = await offerFor(node.service, args, { fresh: true });
    if (code === 'ok') expect(r.ok).toBe(true);
    else expect(r).toEqual({ ok: false, error: { code, message: expect.any(String) } });
  });
});
