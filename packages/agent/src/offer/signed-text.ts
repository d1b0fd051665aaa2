/**
 * The signed payload's own text, kept beside the parsed object. `JSON.parse` rounds numbers to
 * IEEE doubles: a signed total of 9007199254740993 reads as …992 and 123.0000000000000001 as
 * 123. Whether the node signed an exact integer can only be read from the text it signed
 * (I-JSON, RFC 7493 §2.2: integers are exact only within ±(2^53−1)). Internal to the package.
 */

/**
 * The JSON text a payload was parsed from, and the literals already looked up in it (one offer is
 * asked about the same totals by the quote check, the facts and the official result).
 */
interface SignedText {
  text: string;
  /** Whether some number in the text may be signed, fractional or in exponent form (null: not yet looked). */
  maybeNonPlainNumbers: boolean | null;
  literals: Map<string, string | undefined> | null;
}

/** Payload object → its signed text; weak, so it lives exactly as long as the payload. */
const signedTextOf = new WeakMap<object, SignedText>();

/**
 * Record the text `payload` was parsed from (called by `verifyOffer` after the signature verified).
 * Not needed for a text whose every number is a plain non-negative integer literal (`memberText`
 * tells): `signedAsNonPlainNumber` answers false for such a payload with or without it.
 */
export function rememberSignedText(payload: object, text: string): void {
  signedTextOf.set(payload, { text, maybeNonPlainNumbers: null, literals: null });
}

/** JSON insignificant whitespace (RFC 8259 §2): space, tab, line feed, carriage return. */
const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(text: string, i: number): number {
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Index just past the string token starting at `i` (a `"`): the next quote that no odd run of
 * backslashes escapes. Found with `indexOf`, so a long string (a compact JWS) is passed in one step.
 */
function skipString(text: string, i: number): number {
  for (let q = text.indexOf('"', i + 1); q >= 0; q = text.indexOf('"', q + 1)) {
    let escapes = q;
    while (text.charCodeAt(escapes - 1) === 0x5c) escapes--;
    if ((q - escapes) % 2 === 0) return q + 1;
  }
  return text.length;
}

/** Index just past the value starting at `i`; iterative, so a deeply nested value cannot overflow the stack. */
function skipValue(text: string, i: number): number {
  return valueEndWithin(text, i, Number.POSITIVE_INFINITY);
}

/** What `valueEndWithin` saw of the numbers it passed. */
interface NumberForms {
  /** Some number is negative, fractional or in exponent form. */
  nonPlain: boolean;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * Outside strings, a `-` or `.` belongs to a number (RFC 8259 §6), and so does an `e` or `E` after
 * a digit (the one in `true` and `false` follows a letter).
 */
const marksNonPlainNumber = (c: number, before: number) => c === 0x2d || c === 0x2e || ((c === 0x65 || c === 0x45) && isDigit(before));

/**
 * `skipValue`, or -1 when the value nests more than `maxDepth` arrays and objects deep (`{}` is 1).
 * With `numbers`, records whether a number it passed is not a plain non-negative integer.
 */
function valueEndWithin(text: string, i: number, maxDepth: number, numbers?: NumberForms): number {
  const first = text.charCodeAt(i);
  if (first === 0x22) return skipString(text, i);
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next structural character or whitespace.
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x2c || c === 0x7d || c === 0x5d || isWs(c)) break;
      if (numbers && marksNonPlainNumber(c, text.charCodeAt(i - 1))) numbers.nonPlain = true;
    }
    return i;
  }
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = skipString(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return -1;
    } else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
    else if (numbers && marksNonPlainNumber(c, text.charCodeAt(i - 1))) numbers.nonPlain = true;
  }
  return i;
}

/** Where a member's value lies in a text (`start` -1 when there is no such member). */
interface MemberSpan {
  start: number;
  /** Just past the value, or -1 when it nests deeper than asked. */
  end: number;
  /** The value is the `known` text, found without scanning it. */
  known: boolean;
}

/**
 * Where the value of member `key` of the object starting at `start` lies. The last duplicate wins,
 * as in `JSON.parse`; member names are compared after unescaping. `numbers` is as for
 * `valueEndWithin`, over that member's value. `known` is a JSON object's complete text (so no
 * longer text starting with it is one value): a value that starts with it is that text.
 */
function memberValue(
  text: string,
  start: number,
  key: string,
  maxDepth = Number.POSITIVE_INFINITY,
  numbers?: NumberForms,
  known?: string,
): MemberSpan {
  let i = skipWs(text, start);
  let found: MemberSpan = { start: -1, end: -1, known: false };
  if (text.charCodeAt(i) !== 0x7b) return found;
  i = skipWs(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === 0x22) {
    const end = skipString(text, i);
    const raw = text.slice(i, end);
    const name = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    const valueStart = skipWs(text, skipWs(text, end) + 1); // past the `:`
    let valueEnd = -1;
    if (name === key) {
      // A slice compared with `===` (one memory comparison), not `startsWith` (character by character).
      const isKnown = known !== undefined && text.slice(valueStart, valueStart + known.length) === known;
      if (numbers) numbers.nonPlain = false;
      valueEnd = isKnown ? valueStart + (known as string).length : valueEndWithin(text, valueStart, maxDepth, numbers);
      found = { start: valueStart, end: valueEnd, known: isKnown };
    }
    i = skipWs(text, valueEnd < 0 ? skipValue(text, valueStart) : valueEnd);
    if (text.charCodeAt(i) !== 0x2c) break;
    i = skipWs(text, i + 1);
  }
  return found;
}

/** The text of a member's value, and whether every number in it is a plain non-negative integer literal. */
export interface MemberText {
  text: string;
  plainNumbers: boolean;
}

/**
 * The object `memberText` found last, for that key and depth bound: a node serves the same signed
 * offer again while it caches it, and a value that starts with a complete object's text is that
 * object (its closing brace is where the value ends), so it is not scanned again. Being a slice,
 * it keeps one response text alive.
 */
let lastObjectMember: { key: string; maxDepth: number; member: MemberText } | undefined;

/**
 * The text of the top-level member `key` of the JSON object `text` — the one `JSON.parse` keeps,
 * the last — when its value nests at most `maxDepth` arrays and objects deep; undefined when it
 * is absent or deeper. `text` must be JSON that parses.
 */
export function memberText(text: string, key: string, maxDepth: number): MemberText | undefined {
  const last = lastObjectMember?.key === key && lastObjectMember.maxDepth === maxDepth ? lastObjectMember.member : undefined;
  const numbers: NumberForms = { nonPlain: false };
  const span = memberValue(text, 0, key, maxDepth, numbers, last?.text);
  if (span.end < 0) return undefined;
  if (span.known) return last;
  const member = { text: text.slice(span.start, span.end), plainNumbers: !numbers.nonPlain };
  if (text.charCodeAt(span.start) === 0x7b) lastObjectMember = { key, maxDepth, member };
  return member;
}

/**
 * Every number that is negative, fractional or in exponent form, and perhaps a few look-alikes
 * inside strings: in JSON a value follows `:`, `[` or `,` (RFC 8259 §4, §5), then whitespace.
 */
const NON_PLAIN_NUMBER = /[:,[]\s*(?:-|\d+[.eE])/;
/** A plain non-negative integer literal: no sign, fraction or exponent. */
const PLAIN_INTEGER = /^(0|[1-9]\d*)$/;

/**
 * Whether the node signed the number at `path` as something other than a plain non-negative
 * integer literal (`-0`, `1e2`, `123.0000000000000001`). False when the payload was not parsed by
 * `verifyOffer`, or the member is absent or not a number. A text with no such number anywhere
 * (one pattern test, remembered per payload) answers without a scan.
 */
export function signedAsNonPlainNumber(payload: object, path: readonly string[]): boolean {
  const signed = signedTextOf.get(payload);
  if (signed === undefined) return false;
  signed.maybeNonPlainNumbers ??= NON_PLAIN_NUMBER.test(signed.text);
  if (!signed.maybeNonPlainNumbers) return false;
  const key = path.join('\u0000');
  signed.literals ??= new Map();
  let literal = signed.literals.get(key);
  if (literal === undefined && !signed.literals.has(key)) {
    literal = numberLiteralAt(signed.text, path);
    signed.literals.set(key, literal);
  }
  return literal !== undefined && !PLAIN_INTEGER.test(literal);
}

/** The number literal at `path` exactly as the node signed it, or undefined when the member is absent or not a number. */
function numberLiteralAt(text: string, path: readonly string[]): string | undefined {
  let at = 0;
  let end = path.length === 0 ? skipValue(text, 0) : -1;
  for (const key of path) {
    ({ start: at, end } = memberValue(text, at, key));
    if (at < 0) return undefined;
  }
  const literal = text.slice(at, end);
  return /^-?\d/.test(literal) ? literal : undefined;
}
