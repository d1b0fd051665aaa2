import { GateError } from './errors.js';

/**
 * I-JSON (RFC 7493) for tool arguments. The Tool-Use Binding draft (OpenAI mapping) requires arguments to be parsed, then
 * canonicalized, then hashed, and "two equivalent JSON strings MUST NOT produce two different
 * authorities"; `JSON.parse` silently keeps the last of two duplicate keys and rounds
 * integers beyond 2^53, so a model could get one value authorized and another one run.
 * Anything outside I-JSON makes the act malformed (EF_MALFORMED_ARGUMENTS).
 */

/** Nesting beyond this is refused rather than risking a stack overflow on hostile input. */
export const MAX_IJSON_DEPTH = 256;

function malformed(reason: string, at?: number): GateError {
  // The reason names the rule and the offset, never the offending text (it may hold PII).
  return new GateError(
    'EF_MALFORMED_ARGUMENTS',
    `arguments are not I-JSON: ${reason}`,
    at === undefined ? { reason } : { reason, offset: at },
  );
}

/** RFC 7493 §2.1: strings (and member names) MUST NOT contain lone surrogates. */
function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(i + 1);
      if (n >= 0xdc00 && n <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** RFC 7493 §2.2: numbers are IEEE doubles and integers stay within ±(2^53−1) so they are exact. */
function checkNumber(n: number, at?: number): void {
  if (!Number.isFinite(n)) throw malformed('non-finite number', at);
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) throw malformed('integer outside ±(2^53−1)', at);
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;
/** RFC 8259 §7 two-character escapes (`\uXXXX` is parsed on its own). */
const SIMPLE_ESCAPES = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

/**
 * Parse JSON text as I-JSON: duplicate member names, lone surrogates (raw or escaped),
 * non-finite numbers and integers outside ±(2^53−1) throw GateError('EF_MALFORMED_ARGUMENTS').
 */
export function parseIJson(text: string): unknown {
  if (typeof text !== 'string') throw malformed('not a JSON text');
  const p = new IJsonParser(text);
  const value = p.value(0);
  p.skipWs();
  if (p.pos !== text.length) throw malformed('trailing text after the JSON value', p.pos);
  return value;
}

/** One pass over a JSON text (RFC 8259 grammar), refusing what I-JSON refuses as it reads. */
class IJsonParser {
  pos = 0;
  constructor(private readonly text: string) {}

  skipWs(): void {
    WS.lastIndex = this.pos;
    WS.exec(this.text);
    this.pos = WS.lastIndex;
  }

  /** A value: object, array, string, literal or number. */
  value(depth: number): unknown {
    if (depth > MAX_IJSON_DEPTH) throw malformed('nesting too deep', this.pos);
    this.skipWs();
    const c = this.text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    return this.scalar();
  }

  /** `{ "name": value, … }`: names unique (RFC 7493 §2.3), `__proto__` kept as data. */
  private object(depth: number): Record<string, unknown> {
    const { text } = this;
    this.pos++;
    const obj: Record<string, unknown> = {};
    this.skipWs();
    if (text[this.pos] === '}') {
      this.pos++;
      return obj;
    }
    for (;;) {
      this.skipWs();
      if (text[this.pos] !== '"') throw malformed('expected a member name', this.pos);
      const keyAt = this.pos;
      const key = this.string();
      if (Object.hasOwn(obj, key)) throw malformed('duplicate member name', keyAt);
      this.skipWs();
      if (text[this.pos] !== ':') throw malformed("expected ':'", this.pos);
      this.pos++;
      const v = this.value(depth + 1);
      // defineProperty so a "__proto__" member is data, not a prototype change.
      Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
      if (this.endOfList('}')) return obj;
    }
  }

  /** `[ value, … ]`. */
  private array(depth: number): unknown[] {
    this.pos++;
    const arr: unknown[] = [];
    this.skipWs();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return arr;
    }
    for (;;) {
      arr.push(this.value(depth + 1));
      if (this.endOfList(']')) return arr;
    }
  }

  /** After a member or element: `,` goes on (false), `close` ends the list (true), anything else is malformed. */
  private endOfList(close: '}' | ']'): boolean {
    this.skipWs();
    const c = this.text[this.pos];
    if (c === ',' || c === close) {
      this.pos++;
      return c === close;
    }
    throw malformed(`expected ',' or '${close}'`, this.pos);
  }

  /** `true`, `false`, `null` or a number (RFC 7493 §2.2: finite, integers exact). */
  private scalar(): unknown {
    const { text } = this;
    for (const [word, v] of LITERALS) {
      if (text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(text);
    if (!m) throw malformed(this.pos >= text.length ? 'unexpected end of text' : 'unexpected token', this.pos);
    const at = this.pos;
    this.pos = NUMBER.lastIndex;
    const n = Number(m[0]);
    checkNumber(n, at);
    return n;
  }

  /** A string at `pos` (its opening quote): escapes decoded, no control characters, no lone surrogates. */
  string(): string {
    const { text } = this;
    const start = this.pos;
    let pos = start + 1; // opening quote
    let out = '';
    let chunk = pos;
    for (;;) {
      if (pos >= text.length) throw malformed('unterminated string', start);
      const c = text.charCodeAt(pos);
      if (c === 0x22) break;
      if (c < 0x20) throw malformed('control character in string', pos);
      if (c !== 0x5c) {
        pos++;
        continue;
      }
      out += text.slice(chunk, pos);
      const [decoded, length] = escapeAt(text, pos);
      out += decoded;
      pos += length;
      chunk = pos;
    }
    out += text.slice(chunk, pos);
    this.pos = pos + 1; // closing quote
    if (hasLoneSurrogate(out)) throw malformed('lone surrogate in string', start);
    return out;
  }
}

const LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** The escape at `pos` (a backslash): its decoded text and its length in the source. */
function escapeAt(text: string, pos: number): [string, number] {
  const e = text[pos + 1];
  const simple = e === undefined ? undefined : SIMPLE_ESCAPES.get(e);
  if (simple !== undefined) return [simple, 2];
  if (e !== 'u') throw malformed('bad escape', pos);
  const hex = text.slice(pos + 2, pos + 6);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw malformed('bad \\u escape', pos);
  return [String.fromCharCode(Number.parseInt(hex, 16)), 6];
}

/**
 * Check an already-parsed argument value (an Anthropic `input`, MCP `arguments`) against the
 * I-JSON data model: plain objects, arrays, strings without lone surrogates, finite numbers
 * with safe integers, booleans and null — nothing else (no undefined, BigInt, Date, cycles).
 */
export function assertIJson(value: unknown): void {
  writeIJson(value, false);
}

/**
 * The RFC 8785 (JCS) text of an I-JSON value, checked as `assertIJson` checks it, in the same walk
 * that writes the text, reading every member once. For I-JSON values JCS is: members sorted by
 * their names' UTF-16 code units (RFC 8785 §3.2.3, what `Array.prototype.sort` compares), strings
 * and numbers as `JSON.stringify` writes them (§3.2.2), no whitespace. It is the text
 * `canonicalJson` (the `canonicalize` package) gives for the same value, without that package's
 * per-member arrays and template strings (the hot path digests arguments on every call); a
 * differential test holds the two byte-equal (test/ijson.test.ts).
 * Throws GateError('EF_MALFORMED_ARGUMENTS') like `assertIJson`.
 */
export function canonicalIJson(value: unknown): string {
  return writeIJson(value, false).text;
}

/**
 * A deep, frozen plain copy of an I-JSON value and the JCS text of that copy, from one walk that
 * checks the value as `assertIJson` does and reads every member of the original exactly once: a
 * getter answers once, so what was checked is what was copied and written (issue 36 defect 15).
 * The copy keeps the original's member order; the text is `canonicalIJson`'s.
 * Throws GateError('EF_MALFORMED_ARGUMENTS') like `assertIJson`.
 */
export function snapshotIJson(value: unknown): { copy: unknown; canonical: string } {
  const { text, copy } = writeIJson(value, true);
  return { copy, canonical: text };
}

/** The one I-JSON walk: the check and the JCS text; with `snapshot`, also the frozen copy (else `copy` is undefined). */
function writeIJson(value: unknown, snapshot: boolean): { text: string; copy: unknown } {
  const onPath = new Set<object>();
  /** With `snapshot`: the frozen copy of the value the last `walk` wrote. */
  let copied: unknown;
  const walk = (v: unknown, depth: number): string => {
    if (depth > MAX_IJSON_DEPTH) throw malformed('nesting too deep');
    if (v === null || typeof v !== 'object') {
      copied = v;
      if (v === null) return 'null';
      checkScalar(v);
      return JSON.stringify(v);
    }
    let text: string;
    if (enterObject(v, onPath)) {
      const out = snapshot ? new Array<unknown>(v.length) : undefined;
      text = '[';
      for (let i = 0; i < v.length; i++) {
        text += (i === 0 ? '' : ',') + walk(v[i], depth + 1);
        if (out) out[i] = copied;
      }
      text += ']';
      copied = out && Object.freeze(out);
    } else {
      const keys = Object.keys(v);
      // The copy's members in the original's order: placed first, given their values as the walk reaches them.
      const out: Record<string, unknown> | undefined = snapshot ? {} : undefined;
      if (out) for (const k of keys) setMember(out, k, undefined);
      sortKeys(keys);
      text = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        if (hasLoneSurrogate(k)) throw malformed('lone surrogate in member name');
        text += `${i === 0 ? '' : ','}${JSON.stringify(k)}:${walk((v as Record<string, unknown>)[k], depth + 1)}`;
        if (out) setMember(out, k, copied);
      }
      text += '}';
      copied = out && Object.freeze(out);
    }
    onPath.delete(v);
    return text;
  };
  const text = walk(value, 0);
  return { text, copy: snapshot ? copied : undefined };
}

/** A member of a copy as data: a "__proto__" member stays data, as parseIJson keeps it. */
function setMember(out: Record<string, unknown>, k: string, value: unknown): void {
  if (k === '__proto__') Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  else out[k] = value;
}

/** A value that is neither an object nor null, checked as I-JSON (RFC 7493 §2.1, §2.2): a string, a number or a boolean. */
function checkScalar(v: unknown): void {
  switch (typeof v) {
    case 'string':
      if (hasLoneSurrogate(v)) throw malformed('lone surrogate in string');
      return;
    case 'number':
      checkNumber(v);
      return;
    case 'boolean':
      return;
    default:
      throw malformed(`${typeof v} is not a JSON value`);
  }
}

/**
 * Member names in JCS order, in place: by UTF-16 code units, which is what `<` compares on
 * strings (and what `Array.prototype.sort` compares by default). An insertion sort: argument
 * objects have a handful of members, and `sort` allocates its work arrays on every call.
 */
function sortKeys(keys: string[]): void {
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
}

/** An object entered on the walk's path: refused when cyclic or not a plain object or array; whether it is an array. */
function enterObject(v: object, onPath: Set<object>): v is unknown[] {
  if (onPath.has(v)) throw malformed('cyclic value');
  const isArray = Array.isArray(v);
  const proto = Object.getPrototypeOf(v);
  if (!isArray && proto !== Object.prototype && proto !== null) throw malformed('not a plain JSON object');
  onPath.add(v);
  return isArray;
}
