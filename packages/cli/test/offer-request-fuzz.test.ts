/**
 * Fuzzing the offer request on every surface of one node (fast-check): generated arguments go
 * out as an HTTP query (and `/book`), MCP `arguments` (official SDK client), an A2A data part
 * and WebMCP input (the page's JSON tool-call path, and Chromium invoking the page's tool when
 * installed). Every surface must reach the same decision with the same code as the protocol's
 * parser; no input may cause a 5xx, an internal error or a stack trace on stderr.
 */
import { parseOfferRequest } from '@vrpkit/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HAS_CHROMIUM, type RequestSurfaces, startRequestSurfaces } from './support/offer-request-surfaces.js';

const TODAY_MS = Date.UTC(2027, 5, 1);
const dayFromToday = (offset: number) => new Date(TODAY_MS + offset * 86_400_000).toISOString().slice(0, 10);

/** Dates around the node's today and horizon, and the malformed ones that matter. */
const dateString = fc.oneof(
  fc.integer({ min: -3, max: 370 }).map(dayFromToday),
  fc.constantFrom('2028-02-29', '2027-02-29', '2026-02-30', '2027-06-31', ' 2027-07-01', '2027-07-01 ', '2027-7-1', '', '２０２７-07-01'),
  fc.string({ maxLength: 12 }),
);
const guestsString = fc.oneof(
  fc.integer({ min: -2, max: 1002 }).map(String),
  fc.constantFrom('02', '1.0', '1e0', '-0', ' 2', '2 ', '+2', '0x2', '99999999999999999999', ''),
  fc.string({ maxLength: 6 }),
);
const keyName = fc.constantFrom(
  'language',
  'checkIn',
  'checkOut',
  '__proto__',
  'constructor',
  'toString',
  'property_id',
  '',
  'CHECK_IN',
  'guests ',
);

/** An argument object of string values (what an HTTP query can carry too); a `__proto__` key stays an own key. */
const stringArgs = fc
  .tuple(
    fc.record({ check_in: dateString, check_out: dateString, guests: guestsString }, { requiredKeys: [] }),
    fc.array(fc.tuple(keyName, fc.oneof(dateString, fc.constantFrom('en', 'sv-SE', '<b>'))), { maxLength: 2 }),
  )
  .map(([base, extra]) => Object.fromEntries([...Object.entries(base), ...extra]) as Record<string, string>);

const jsonValue = fc.oneof(
  dateString,
  guestsString,
  fc.integer({ min: -5, max: 1005 }),
  fc.constantFrom(-0, 1.5, 1e308, 2 ** 53, Number.MAX_SAFE_INTEGER, null, true, false),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.array(fc.oneof(fc.integer(), dateString), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);
/** An argument object of any JSON values (MCP, A2A and WebMCP carry JSON). */
const jsonArgs = fc
  .tuple(
    fc.record(
      { check_in: fc.oneof(dateString, jsonValue), check_out: fc.oneof(dateString, jsonValue), guests: jsonValue },
      { requiredKeys: [] },
    ),
    fc.array(fc.tuple(keyName, jsonValue), { maxLength: 2 }),
  )
  .map(([base, extra]) => Object.fromEntries([...Object.entries(base), ...extra]) as Record<string, unknown>);

let s: RequestSurfaces;
const stderr: string[] = [];

beforeAll(async () => {
  s = await startRequestSurfaces('fuzz-node.example', '2027-06-01T10:00:00Z');
  if (!HAS_CHROMIUM)
    console.warn('offer-request fuzz: no Chromium (set VRPKIT_CHROMIUM); WebMCP input is fuzzed through its JSON path only');
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => stderr.push(String(chunk)) > 0);
}, 60_000);

afterAll(async () => {
  vi.restoreAllMocks();
  await s?.close();
});

const decisionOf = (input: unknown) => {
  const r = parseOfferRequest(input, { today: s.today, horizonDays: s.horizonDays });
  return r.ok ? 'ok' : r.error.code;
};

describe('offer request fuzz: same inputs, same decision and code on every surface', () => {
  // Text arguments: the HTTP query surfaces read them as a query (digits may be a number there), the
  // JSON surfaces as JSON, where a number written as a string is refused (issue 32: `guests: "2"`
  // is invalid_guests over MCP, A2A and WebMCP). Each group answers as its one reader does.
  it('string arguments: HTTP query and /book as the query reader; MCP arguments, A2A data part, WebMCP input as the JSON reader', async () => {
    await fc.assert(
      fc.asyncProperty(stringArgs, async (args) => {
        const json = JSON.stringify(args);
        const query = new URLSearchParams(Object.entries(args)).toString();
        const asQuery = decisionOf(new URLSearchParams(query));
        const asJson = decisionOf(args);
        const answers: Record<string, string> = {
          http: await s.http(query),
          book: await s.book(query),
          mcp: await s.mcp(json),
          a2a: await s.a2a(json),
          webmcp: await s.webmcpPost(json),
          ...(s.webmcpBrowser ? { webmcp_chromium: await s.webmcpBrowser(json) } : {}),
        };
        const expected = Object.fromEntries(Object.keys(answers).map((k) => [k, k === 'http' || k === 'book' ? asQuery : asJson]));
        expect(answers).toEqual(expected);
      }),
      { numRuns: 120 },
    );
  }, 300_000);

  it('JSON arguments: MCP arguments, A2A data part, WebMCP input', async () => {
    await fc.assert(
      fc.asyncProperty(jsonArgs, async (args) => {
        const json = JSON.stringify(args);
        const expected = decisionOf(JSON.parse(json));
        const answers: Record<string, string> = {
          mcp: await s.mcp(json),
          a2a: await s.a2a(json),
          webmcp: await s.webmcpPost(json),
          ...(s.webmcpBrowser ? { webmcp_chromium: await s.webmcpBrowser(json) } : {}),
        };
        expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((k) => [k, expected])));
      }),
      { numRuns: 120 },
    );
  }, 300_000);

  it('no internal error and no stack trace on stderr', () => {
    expect(s.internalErrors).toEqual([]);
    expect(stderr.join('')).not.toMatch(/^\s+at /m);
  });
});
