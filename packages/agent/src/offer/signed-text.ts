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

/** Record the text `payload` was parsed from (called by `verifyOffer` after the signature verified). */
export function rememberSignedText(payload: object, text: string): void {
  signedTextOf.set(payload, { text, maybeNonPlainNumbers: null, literals: null });
}

/** JSON insignificant whitespace (RFC 8259 §2): space, tab, line feed, carriage return. */
const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(text: string, i: number): number {
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string token starting at `i` (a `"`). */
function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return i;
}

/** Index just past the value starting at `i`; iterative, so a deeply nested value cannot overflow the stack. */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 0x22) return skipString(text, i);
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next structural character or whitespace.
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x2c || c === 0x7d || c === 0x5d || isWs(c)) break;
    }
    return i;
  }
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = skipString(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
  }
  return i;
}

/**
 * Start index of the value of member `key` in the object starting at `start`, or -1. The last
 * duplicate wins, as in `JSON.parse`; member names are compared after unescaping.
 */
function memberValueAt(text: string, start: number, key: string): number {
  let i = skipWs(text, start);
  if (text.charCodeAt(i) !== 0x7b) return -1;
  let found = -1;
  i = skipWs(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === 0x22) {
    const end = skipString(text, i);
    const raw = text.slice(i, end);
    const name = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    const valueStart = skipWs(text, skipWs(text, end) + 1); // past the `:`
    if (name === key) found = valueStart;
    i = skipWs(text, skipValue(text, valueStart));
    if (text.charCodeAt(i) !== 0x2c) break;
    i = skipWs(text, i + 1);
  }
  return found;
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
  for (const key of path) {
    at = memberValueAt(text, at, key);
    if (at < 0) return undefined;
  }
  const end = skipValue(text, at);
  const literal = text.slice(at, end);
  return /^-?\d/.test(literal) ? literal : undefined;
}
