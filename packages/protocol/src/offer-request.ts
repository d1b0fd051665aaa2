/**
 * The verified stay offer request (Core VRP v0.1 §4; Node Tool Binding v0.1 §4): one shape,
 * one parser, one error vocabulary for every entry point — the node's HTTP endpoint and
 * booking page (query strings), its MCP, A2A and WebMCP surfaces (JSON arguments), the
 * agent's request check and the CLI's options.
 *
 * `OfferRequestSchema` (zod) is the shape: the types are inferred from it and the JSON Schema
 * every tool surface advertises is generated from it (`offerToolInputSchema`). `parseOfferRequest`
 * is the decision: it applies the same per-value rules plus what a JSON Schema cannot say
 * (a key given twice or under both casings, the stay's length, today and the booking horizon)
 * and names every refusal with a code of `OFFER_REQUEST_ERRORS`. It is hand-written rather than
 * a zod `safeParse` because it runs on every offer the node signs: a zod parse with an issue
 * list measured 1.5–4 µs per field, the checks below a few dozen nanoseconds.
 */
import { isRecord } from '@vrpkit/core';
import * as z from 'zod';
import { dayNumber } from './dates.js';
import { OFFER_REQUEST_CODES, registryView } from './errors.js';

export type OfferRequestErrorCode = (typeof OFFER_REQUEST_CODES)[number];

/** Stable codes for malformed offer requests (HTTP 400 `{error:{code,message}}`, an MCP `isError` result, a failed A2A task): the registry's offer-request group, code → meaning. */
export const OFFER_REQUEST_ERRORS: Readonly<Record<OfferRequestErrorCode, string>> = registryView(OFFER_REQUEST_CODES, (e) => e.message);

/** A stay is at most this many nights; longer requests are malformed, not signed negatives. */
export const MAX_STAY_NIGHTS = 365;
/** Largest `guests` value a request may carry (a party, not a count overflow). */
export const MAX_GUESTS = 1000;
/** Core VRP v0.1 §4 date form; the calendar check is `dayNumber` (the pattern alone admits 2026-02-30). */
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
/** BCP 47 language tag, the subset a node echoes as `request.language`. */
const LANGUAGE_RE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/;
/** An HTTP query carries `guests` as decimal digits without sign, leading zero, fraction or exponent. */
const GUESTS_DIGITS_RE = /^[1-9][0-9]{0,5}$/;

const calendarDate = (description: string) =>
  z
    .string()
    .regex(ISO_DATE_RE)
    .refine((s) => dayNumber(s) !== null, 'not a real calendar date')
    .describe(description);

/** Node Tool Binding v0.1 §4: the three arguments every surface takes, REQUIRED, `snake_case`. */
export const OfferRequestArgsSchema = z.object({
  check_in: calendarDate('Arrival date, YYYY-MM-DD.'),
  check_out: calendarDate('Departure date, YYYY-MM-DD, after check_in.'),
  guests: z.number().int().min(1).max(MAX_GUESTS).describe('Number of guests, at least 1.'),
});
export type OfferRequestArgs = z.infer<typeof OfferRequestArgsSchema>;

/**
 * Everything a node accepts (Node Tool Binding v0.1 §4: "MAY accept optional ones"): the three
 * arguments, the optional `language` it echoes in the signed `request`, and the `camelCase`
 * date aliases of `direct_booking_url` query strings (Core VRP v0.1 §5.1). Nothing else: an unknown
 * key is refused, so a caller never believes a filter it sent was applied.
 */
export const OfferRequestSchema = OfferRequestArgsSchema.extend({
  language: z.string().regex(LANGUAGE_RE).optional().describe('Optional BCP 47 language tag, echoed in the signed request.'),
  checkIn: calendarDate('Optional alias of check_in.').optional(),
  checkOut: calendarDate('Optional alias of check_out.').optional(),
});
export type OfferRequest = z.infer<typeof OfferRequestSchema>;

/** A request the parser accepted: `snake_case` keys only, the stay's nights counted. */
export interface ParsedOfferRequest extends OfferRequestArgs {
  nights: number;
  language?: string;
}

export interface OfferRequestRefusal {
  code: OfferRequestErrorCode;
  message: string;
}

/** What a surface hands the parser: an HTTP query (every pair, repeated keys kept) or a tool call's JSON arguments. */
export type OfferRequestInput = URLSearchParams | Readonly<Record<string, unknown>>;

export type OfferRequestResult = { ok: true; request: ParsedOfferRequest } | { ok: false; error: OfferRequestRefusal };

export interface OfferRequestContext {
  /** Today in the property's time zone (`YYYY-MM-DD`): `check_in` before it is `date_in_past`. Omitted: not checked (agent, CLI). */
  today?: string;
  /** Days after `today` a stay may start (`beyond_horizon` past it); only checked together with `today`. */
  horizonDays?: number;
}

type Name = 'check_in' | 'check_out' | 'guests' | 'language';

/**
 * The `camelCase` aliases a node accepts and the `snake_case` key each one stands for (Node Tool
 * Binding v0.1 §4; MCP Composition Profile, argument key casing).
 */
export const OFFER_ARGUMENT_ALIASES: ReadonlyMap<string, 'check_in' | 'check_out'> = new Map([
  ['checkIn', 'check_in'],
  ['checkOut', 'check_out'],
]);

/** Accepted argument names and the parameter each one sets. */
const NAMES: ReadonlyMap<string, Name> = new Map<string, Name>([
  ['check_in', 'check_in'],
  ['check_out', 'check_out'],
  ['guests', 'guests'],
  ['language', 'language'],
  ...OFFER_ARGUMENT_ALIASES,
]);

const refuse = (code: OfferRequestErrorCode, message: string): OfferRequestResult => ({ ok: false, error: { code, message } });

/** The key/value pairs of a request: a query keeps every repeated key; a JSON object contributes its own enumerable keys only. */
function entriesOf(input: unknown): Iterable<[string, unknown]> | null {
  // Both forms can be iterated more than once.
  if (input instanceof URLSearchParams) return input;
  if (!isRecord(input)) return null;
  // Own keys only: a JSON `"__proto__"` member is an own key here and is refused as unknown, never read through a prototype.
  return Object.entries(input);
}

/**
 * `guests` as the form its carrier has: the decimal digits an HTTP query carries (every query
 * value is text), or a JSON number in a tool call's JSON arguments. Over MCP, A2A and WebMCP the
 * arguments are JSON and the advertised schema says `integer`, so `"2"` there is refused like any
 * other non-integer (issue 32 item 7: the Python MCP SDK sent `guests: "2"` and the node signed
 * it); string-to-number belongs to the HTTP query reader only.
 */
function guestsOf(v: unknown, fromQuery: boolean): number | null {
  const n = fromQuery
    ? typeof v === 'string' && GUESTS_DIGITS_RE.test(v)
      ? Number(v)
      : Number.NaN
    : typeof v === 'number'
      ? v
      : Number.NaN;
  return Number.isInteger(n) && n >= 1 && n <= MAX_GUESTS ? n : null;
}

/**
 * `parseOfferRequest(input, { today, horizonDays })`: read a Core VRP v0.1 §4 offer request from an HTTP
 * query (`URLSearchParams`, where `guests` is decimal digits) or a tool call's JSON arguments
 * (where it is a JSON number, as the advertised schema says). Refusals, first one wins, in this
 * order: `invalid_arguments` (not an object), `unknown_parameter`, `duplicate_parameter` (a key
 * twice, or `check_in` and `checkIn` together), `missing_parameter` (absent, null or empty),
 * `invalid_date`, `invalid_guests`, `invalid_range`, `invalid_language`, then — with a context —
 * `date_in_past` and `beyond_horizon`. Never throws.
 */
export function parseOfferRequest(input: unknown, context: OfferRequestContext = {}): OfferRequestResult {
  const entries = entriesOf(input);
  if (!entries) return refuse('invalid_arguments', 'the arguments must be one JSON object {check_in, check_out, guests}');
  // Two passes, so the code never depends on member order (RFC 8259 §4: an object is unordered;
  // Chromium's WebMCP bridge, for one, hands the page the members sorted by name).
  for (const [key] of entries) {
    if (!NAMES.has(key)) {
      return refuse('unknown_parameter', `unknown parameter "${key.slice(0, 40)}"; accepted: check_in, check_out, guests, language`);
    }
  }
  const seen: Partial<Record<Name, unknown>> = {};
  // The key each value came under, so a refusal names the parameter as the client sent it.
  const sentAs: Partial<Record<Name, string>> = {};
  for (const [key, value] of entries) {
    const name = NAMES.get(key) as Name;
    const earlier = sentAs[name];
    if (earlier !== undefined)
      return refuse('duplicate_parameter', earlier === key ? `${key} given more than once` : `${earlier} and ${key} given together`);
    seen[name] = value;
    sentAs[name] = key;
  }
  for (const required of ['check_in', 'check_out', 'guests'] as const) {
    const v = seen[required];
    if (v === undefined || v === null || v === '') return refuse('missing_parameter', `${required} is required`);
  }
  const { check_in, check_out } = seen;
  const first = typeof check_in === 'string' ? dayNumber(check_in) : null;
  if (first === null) return refuse('invalid_date', 'check_in must be a real calendar date YYYY-MM-DD');
  const last = typeof check_out === 'string' ? dayNumber(check_out) : null;
  if (last === null) return refuse('invalid_date', 'check_out must be a real calendar date YYYY-MM-DD');
  const fromQuery = input instanceof URLSearchParams;
  const guests = guestsOf(seen.guests, fromQuery);
  if (guests === null)
    return refuse(
      'invalid_guests',
      fromQuery || typeof seen.guests !== 'string'
        ? `guests must be an integer from 1 to ${MAX_GUESTS}`
        : `guests must be a JSON number, an integer from 1 to ${MAX_GUESTS}, not a string`,
    );
  const nights = last - first;
  if (nights < 1) return refuse('invalid_range', 'check_out must be after check_in');
  if (nights > MAX_STAY_NIGHTS) return refuse('invalid_range', `a stay is at most ${MAX_STAY_NIGHTS} nights`);
  const request: ParsedOfferRequest = { check_in: check_in as string, check_out: check_out as string, guests, nights };
  if (seen.language !== undefined) {
    if (typeof seen.language !== 'string' || !LANGUAGE_RE.test(seen.language))
      return refuse('invalid_language', 'language must be a BCP 47 tag such as en or sv-SE');
    request.language = seen.language;
  }
  const refusal = stayWindowRefusal(request, context);
  return refusal ? { ok: false, error: refusal } : { ok: true, request };
}

/**
 * The last two refusals of `parseOfferRequest`, on a request it already accepted: `date_in_past`
 * (`check_in` before `context.today`) and `beyond_horizon` (more than `context.horizonDays` after
 * it); null when neither applies or there is no valid `today`. A node parses a request once, where
 * it arrives, and judges it against the property's today when it answers (that day is the store's).
 */
export function stayWindowRefusal(request: ParsedOfferRequest, context: OfferRequestContext): OfferRequestRefusal | null {
  const today = context.today === undefined ? null : dayNumber(context.today);
  if (today === null) return null;
  const first = dayNumber(request.check_in) as number;
  if (first < today) return { code: 'date_in_past', message: `check_in is before today (${context.today})` };
  if (context.horizonDays !== undefined && first - today > context.horizonDays)
    return { code: 'beyond_horizon', message: `check_in is more than ${context.horizonDays} days after today (${context.today})` };
  return null;
}

/**
 * The JSON Schema the tool surfaces advertise for `get_verified_stay_offer` (the MCP `tools/list`
 * `inputSchema` and the WebMCP `registerTool` `inputSchema`; an A2A skill carries no schema, its
 * example is an instance of this one), generated from
 * `OfferRequestSchema`: `check_in`, `check_out` and `guests` required and nothing else (Node Tool
 * Binding v0.1 §4), the aliases and `language` optional, no other key. A fresh object per call
 * (callers may hand it to SDKs that annotate it).
 */
export function offerToolInputSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(OfferRequestSchema) as Record<string, unknown>;
  return schema;
}
