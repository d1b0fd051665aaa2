/**
 * One Core VRP v0.1 §4 offer request, one answer: every entry point that reads a request — the
 * protocol's parser, the node's offer endpoint and `/book`, MCP (official SDK client), A2A, the
 * WebMCP tool-call path and the page's tool in Chromium, the agent's request check and the
 * CLI's stay options — accepts the same inputs and refuses the rest with the same code.
 *
 * It lives in the CLI package because the CLI is the one package that depends on all of them.
 * The node's clock is fixed at 2027-06-01 (Europe/Stockholm), so leap day 2028-02-29 is inside
 * its 365-day booking horizon.
 */
import { offerToolInputSchema, parseOfferRequest } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, NODE_REFUSED, type RequestSurfaces, startRequestSurfaces } from './support/offer-request-surfaces.js';

/**
 * `[label, arguments as JSON text, expected]`. Rows whose values are all strings are also sent as
 * an HTTP query (and to `/book`); rows over only the three parameters also through the CLI.
 * `today` rows depend on the node's date, which the agent and the CLI leave to the node.
 */
const TABLE: [string, string, string][] = [
  ['the three parameters, guests as a JSON number', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2}', 'ok'],
  ['leap day 2028-02-29', '{"check_in":"2028-02-29","check_out":"2028-03-02","guests":2}', 'ok'],
  ['2027-02-29 (no leap year)', '{"check_in":"2027-02-29","check_out":"2027-03-02","guests":2}', 'invalid_date'],
  ['2026-02-30', '{"check_in":"2026-02-30","check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['check_out 2027-06-31', '{"check_in":"2027-06-28","check_out":"2027-06-31","guests":2}', 'invalid_date'],
  ['month 13', '{"check_in":"2027-13-01","check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['leading whitespace in a date', '{"check_in":" 2027-07-01","check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['trailing whitespace in a date', '{"check_in":"2027-07-01","check_out":"2027-07-04 ","guests":2}', 'invalid_date'],
  ['full-width digits', '{"check_in":"２０２７-07-01","check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['a date as a number', '{"check_in":20270701,"check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['a date as an array', '{"check_in":["2027-07-01"],"check_out":"2027-07-04","guests":2}', 'invalid_date'],
  ['guests 1.0 (a JSON number, the integer 1)', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":1.0}', 'ok'],
  ['guests 1e0 (a JSON number, the integer 1)', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":1e0}', 'ok'],
  ['guests -0', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":-0}', 'invalid_guests'],
  ['guests 1000', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":1000}', 'ok'],
  ['guests 1001', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":1001}', 'invalid_guests'],
  ['guests 1e308', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":1e308}', 'invalid_guests'],
  ['guests 2^53+1', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":9007199254740993}', 'invalid_guests'],
  ['guests 2.5', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2.5}', 'invalid_guests'],
  ['guests true', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":true}', 'invalid_guests'],
  ['guests null', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":null}', 'missing_parameter'],
  ['an empty check_in', '{"check_in":"","check_out":"2027-07-04","guests":2}', 'missing_parameter'],
  ['guests missing', '{"check_in":"2027-07-01","check_out":"2027-07-04"}', 'missing_parameter'],
  ['an unknown key', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"property_id":"x"}', 'unknown_parameter'],
  ['a __proto__ key', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"__proto__":"x"}', 'unknown_parameter'],
  ['a __proto__ object', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"__proto__":{"guests":3}}', 'unknown_parameter'],
  ['a constructor key', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"constructor":"x"}', 'unknown_parameter'],
  ['an empty key', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"":"x"}', 'unknown_parameter'],
  [
    'check_in and checkIn at once (same value)',
    '{"check_in":"2027-07-01","checkIn":"2027-07-01","check_out":"2027-07-04","guests":2}',
    'duplicate_parameter',
  ],
  [
    'checkOut and check_out at once',
    '{"check_in":"2027-07-01","checkOut":"2027-07-04","check_out":"2027-07-05","guests":2}',
    'duplicate_parameter',
  ],
  ['camelCase aliases only', '{"checkIn":"2027-07-01","checkOut":"2027-07-04","guests":2}', 'ok'],
  ['check_out equal to check_in', '{"check_in":"2027-07-01","check_out":"2027-07-01","guests":2}', 'invalid_range'],
  ['check_out before check_in', '{"check_in":"2027-07-04","check_out":"2027-07-01","guests":2}', 'invalid_range'],
  ['366 nights', '{"check_in":"2027-07-01","check_out":"2028-07-01","guests":2}', 'invalid_range'],
  ['a language tag', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"language":"sv-SE"}', 'ok'],
  ['a bad language tag', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":2,"language":"<script>"}', 'invalid_language'],
  ['check_in yesterday', '{"check_in":"2027-05-31","check_out":"2027-06-03","guests":2}', 'today:date_in_past'],
  ['check_in past the horizon', '{"check_in":"2028-06-02","check_out":"2028-06-05","guests":2}', 'today:beyond_horizon'],
];

/**
 * `guests` as text (issue 32 item 7): `[label, arguments as JSON text, the answer as an HTTP query]`.
 * A query carries every value as text, so its reader takes decimal digits; a tool call's arguments
 * are JSON and the advertised schema says integer, so every JSON entry point refuses a string
 * `guests` with `invalid_guests` (the Python MCP SDK sent `"2"` and the node signed it).
 */
const STRING_GUESTS: [string, string, string][] = [
  ['the three parameters, guests as digits', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"2"}', 'ok'],
  ['guests with whitespace', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":" 2"}', 'invalid_guests'],
  ['guests "1.0" (a query string)', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"1.0"}', 'invalid_guests'],
  ['guests "1e0"', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"1e0"}', 'invalid_guests'],
  ['guests "-0"', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"-0"}', 'invalid_guests'],
  ['guests "02"', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"02"}', 'invalid_guests'],
  ['guests huge digits', '{"check_in":"2027-07-01","check_out":"2027-07-04","guests":"99999999999999999999"}', 'invalid_guests'],
];

/** Queries only HTTP can carry (a key repeated), for the offer endpoint and `/book`. */
const QUERY_ONLY: [string, string, string][] = [
  ['guests twice', 'check_in=2027-07-01&check_out=2027-07-04&guests=2&guests=3', 'duplicate_parameter'],
  ['checkIn twice (the booking link form)', 'checkIn=2027-07-01&checkIn=2027-07-02&checkOut=2027-07-04&guests=2', 'duplicate_parameter'],
  [
    'checkIn and check_in with different values',
    'checkIn=2027-07-01&check_in=2027-07-02&check_out=2027-07-04&guests=2',
    'duplicate_parameter',
  ],
  ['a percent-encoded __proto__', 'check_in=2027-07-01&check_out=2027-07-04&guests=2&%5F%5Fproto%5F%5F=1', 'unknown_parameter'],
];

const nodeAnswer = (expected: string) => expected.replace(/^today:/, '');
/** The agent's check leaves today and the booking horizon to the node. */
const agentAnswer = (expected: string) => (expected.startsWith('today:') ? 'ok' : expected);
/** So does the CLI: it accepts the options and the node it asks refuses them. */
const cliAnswer = (expected: string) => (expected.startsWith('today:') ? NODE_REFUSED : expected);

/** The arguments as an HTTP query when every value has a text form there (a string, or a number written as its digits). */
function queryOf(json: string): string | null {
  const args = JSON.parse(json) as Record<string, unknown>;
  const entries = Object.entries(args);
  if (!entries.every(([, v]) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0))))
    return null;
  return new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString();
}

function cliOptionsOf(json: string): { checkIn?: string; checkOut?: string; guests?: string } | null {
  const args = JSON.parse(json) as Record<string, unknown>;
  const keys = Object.keys(args);
  if (!keys.every((k) => ['check_in', 'check_out', 'guests'].includes(k))) return null;
  if (!Object.values(args).every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v)))) return null;
  // Options are typed text, read as a query is.
  return {
    ...(args.check_in === undefined ? {} : { checkIn: String(args.check_in) }),
    ...(args.check_out === undefined ? {} : { checkOut: String(args.check_out) }),
    ...(args.guests === undefined ? {} : { guests: String(args.guests) }),
  };
}

let s: RequestSurfaces;

beforeAll(async () => {
  s = await startRequestSurfaces('table-node.example', '2027-06-01T10:00:00Z');
  if (!HAS_CHROMIUM)
    console.warn('offer-request table: no Chromium (set VRPKIT_CHROMIUM); the WebMCP page tool is checked through its JSON path only');
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('one offer request table, every entry point', () => {
  it('has at least 30 rows', () => {
    expect(TABLE.length + QUERY_ONLY.length).toBeGreaterThanOrEqual(30);
    expect(s.today).toBe('2027-06-01');
  });

  it.each(TABLE)(
    '%s',
    async (_label, json, expected) => {
      const direct = parseOfferRequest(JSON.parse(json), { today: s.today, horizonDays: s.horizonDays });
      const answers: Record<string, string> = {
        protocol: direct.ok ? 'ok' : direct.error.code,
        mcp: await s.mcp(json),
        a2a: await s.a2a(json),
        webmcp: await s.webmcpPost(json),
        agent: s.agent(json),
      };
      const want: Record<string, string> = {
        protocol: nodeAnswer(expected),
        mcp: nodeAnswer(expected),
        a2a: nodeAnswer(expected),
        webmcp: nodeAnswer(expected),
        agent: agentAnswer(expected),
      };
      if (s.webmcpBrowser) {
        answers.webmcp_chromium = await s.webmcpBrowser(json);
        want.webmcp_chromium = nodeAnswer(expected);
      }
      const query = queryOf(json);
      if (query !== null) {
        answers.http = await s.http(query);
        answers.book = await s.book(query);
        want.http = nodeAnswer(expected);
        want.book = nodeAnswer(expected);
      }
      const cli = cliOptionsOf(json);
      if (cli !== null) {
        answers.cli = await s.cli(cli);
        want.cli = cliAnswer(expected);
      }
      expect(answers).toEqual(want);
    },
    60_000,
  );

  it.each(STRING_GUESTS)(
    'guests as text: %s',
    async (_label, json, queryExpected) => {
      const query = queryOf(json) as string;
      const asJson = parseOfferRequest(JSON.parse(json));
      const asQuery = parseOfferRequest(new URLSearchParams(query));
      expect({
        protocol_json: asJson.ok ? 'ok' : asJson.error.code,
        mcp: await s.mcp(json),
        a2a: await s.a2a(json),
        webmcp: await s.webmcpPost(json),
        agent: s.agent(json),
        protocol_query: asQuery.ok ? 'ok' : asQuery.error.code,
        http: await s.http(query),
        book: await s.book(query),
      }).toEqual({
        protocol_json: 'invalid_guests',
        mcp: 'invalid_guests',
        a2a: 'invalid_guests',
        webmcp: 'invalid_guests',
        agent: 'invalid_guests',
        protocol_query: queryExpected,
        http: queryExpected,
        book: queryExpected,
      });
    },
    60_000,
  );

  it.each(QUERY_ONLY)('query: %s', async (_label, query, expected) => {
    const direct = parseOfferRequest(new URLSearchParams(query), { today: s.today, horizonDays: s.horizonDays });
    expect({ protocol: direct.ok ? 'ok' : direct.error.code, http: await s.http(query), book: await s.book(query) }).toEqual({
      protocol: expected,
      http: expected,
      book: expected,
    });
  });

  it('MCP and WebMCP advertise the JSON Schema generated from OfferRequestSchema; the A2A skill example is a valid request', async () => {
    const generated = offerToolInputSchema();
    const seen = await s.advertised();
    expect(seen.mcp).toEqual(generated);
    expect(seen.webmcpPage).toEqual(generated);
    if (HAS_CHROMIUM) expect(seen.webmcpRegistered).toEqual(generated);
    expect(generated).toMatchObject({ required: ['check_in', 'check_out', 'guests'], additionalProperties: false });
    expect(seen.a2aExamples.length).toBeGreaterThan(0);
    for (const example of seen.a2aExamples) {
      // The example spells the date form; with dates filled in it is a request the parser accepts.
      const filled = JSON.parse(
        example
          .replace('"check_in":"YYYY-MM-DD"', '"check_in":"2027-07-01"')
          .replace('"check_out":"YYYY-MM-DD"', '"check_out":"2027-07-04"'),
      );
      expect(parseOfferRequest(filled)).toMatchObject({ ok: true });
      expect(Object.keys(filled).every((k) => k in (generated.properties as object))).toBe(true);
    }
  });

  it('the node reported no internal error', () => {
    expect(s.internalErrors).toEqual([]);
  });
});
