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
  let pos = 0;

  const skipWs = (): void => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };

  const parseString = (): string => {
    const start = pos;
    pos++; // opening quote
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
      const e = text[pos + 1];
      const simple = e === undefined ? undefined : SIMPLE_ESCAPES.get(e);
      if (simple !== undefined) {
        out += simple;
        pos += 2;
      } else if (e === 'u') {
        const hex = text.slice(pos + 2, pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw malformed('bad \\u escape', pos);
        out += String.fromCharCode(Number.parseInt(hex, 16));
        pos += 6;
      } else {
        throw malformed('bad escape', pos);
      }
      chunk = pos;
    }
    out += text.slice(chunk, pos);
    pos++; // closing quote
    if (hasLoneSurrogate(out)) throw malformed('lone surrogate in string', start);
    return out;
  };

  const parseValue = (depth: number): unknown => {
    if (depth > MAX_IJSON_DEPTH) throw malformed('nesting too deep', pos);
    skipWs();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const obj: Record<string, unknown> = {};
      skipWs();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text[pos] !== '"') throw malformed('expected a member name', pos);
        const keyAt = pos;
        const key = parseString();
        // RFC 7493 §2.3: member names MUST be unique.
        if (Object.hasOwn(obj, key)) throw malformed('duplicate member name', keyAt);
        skipWs();
        if (text[pos] !== ':') throw malformed("expected ':'", pos);
        pos++;
        const v = parseValue(depth + 1);
        // defineProperty so a "__proto__" member is data, not a prototype change.
        Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        throw malformed("expected ',' or '}'", pos);
      }
    }
    if (c === '[') {
      pos++;
      const arr: unknown[] = [];
      skipWs();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        throw malformed("expected ',' or ']'", pos);
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (m) {
      const at = pos;
      pos = NUMBER.lastIndex;
      const n = Number(m[0]);
      checkNumber(n, at);
      return n;
    }
    throw malformed(pos >= text.length ? 'unexpected end of text' : 'unexpected token', pos);
  };

  const value = parseValue(0);
  skipWs();
  if (pos !== text.length) throw malformed('trailing text after the JSON value', pos);
  return value;
}

/**
 * Check an already-parsed argument value (an Anthropic `input`, MCP `arguments`) against the
 * I-JSON data model: plain objects, arrays, strings without lone surrogates, finite numbers
 * with safe integers, booleans and null — nothing else (no undefined, BigInt, Date, cycles).
 */
export function assertIJson(value: unknown): void {
  const onPath = new Set<object>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_IJSON_DEPTH) throw malformed('nesting too deep');
    switch (typeof v) {
      case 'string':
        if (hasLoneSurrogate(v)) throw malformed('lone surrogate in string');
        return;
      case 'number':
        checkNumber(v);
        return;
      case 'boolean':
        return;
      case 'object': {
        if (v === null) return;
        if (onPath.has(v)) throw malformed('cyclic value');
        const proto = Object.getPrototypeOf(v);
        const isArray = Array.isArray(v);
        if (!isArray && proto !== Object.prototype && proto !== null) throw malformed('not a plain JSON object');
        onPath.add(v);
        if (isArray) for (const item of v) walk(item, depth + 1);
        else
          for (const [k, item] of Object.entries(v)) {
            if (hasLoneSurrogate(k)) throw malformed('lone surrogate in member name');
            walk(item, depth + 1);
          }
        onPath.delete(v);
        return;
      }
      default:
        throw malformed(`${typeof v} is not a JSON value`);
    }
  };
  walk(value, 0);
}
