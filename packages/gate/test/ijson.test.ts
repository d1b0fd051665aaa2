import { assertIJson, GateError, parseIJson } from '@vrpkit/gate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof GateError ? e.code : `non-gate:${(e as Error).message}`;
  }
  return undefined;
}

describe('parseIJson (RFC 7493)', () => {
  it('parses what JSON.parse parses, to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        const expected = JSON.parse(text);
        let ok = true;
        try {
          assertIJson(expected);
        } catch {
          ok = false; // e.g. an unsafe integer fast-check generated: both must refuse
        }
        if (ok) expect(parseIJson(text)).toEqual(expected);
        else expect(codeOf(() => parseIJson(text))).toBe('EF_MALFORMED_ARGUMENTS');
      }),
    );
  });

  it.each([
    ['duplicate member names', '{"to":"alice@example.com","to":"attacker@ex.com"}'],
    ['duplicate member names after unescaping', '{"to":1,"\\u0074o":2}'],
    ['a nested duplicate', '{"a":{"b":1,"b":1}}'],
    ['an escaped lone high surrogate', '{"s":"\\ud800"}'],
    ['an escaped lone low surrogate', '["\\udc00x"]'],
    ['a raw lone surrogate', `{"s":"${String.fromCharCode(0xd83d)}"}`],
    ['a lone surrogate in a member name', '{"\\ud800":1}'],
    ['an integer above 2^53-1', '{"amount":9007199254740992}'],
    ['an integer below -(2^53-1)', '[-9007199254740993]'],
    ['an integral exponent beyond the safe range', '[1e20]'],
    ['an overflowing number', '[1e400]'],
    // Past 2^53 every double is integral and inexact, whatever the token looked like.
    ['a huge float', '[1.5e300]'],
    ['NaN', '[NaN]'],
    ['Infinity', '{"a":Infinity}'],
    ['trailing text', '{} {}'],
    ['a trailing comma', '{"a":1,}'],
    ['a truncated stream fragment', '{"amount":"150.00","curr'],
    ['an unescaped control character', '"a\u0001b"'],
    ['single quotes', "{'a':1}"],
    ['empty text', ''],
  ])('rejects %s with EF_MALFORMED_ARGUMENTS', (_name, text) => {
    expect(codeOf(() => parseIJson(text))).toBe('EF_MALFORMED_ARGUMENTS');
  });

  it('accepts the edges of I-JSON', () => {
    expect(parseIJson('[9007199254740991,-9007199254740991,1.5e-300,0.1,-0,2.5E+3]')).toEqual([
      9007199254740991, -9007199254740991, 1.5e-300, 0.1, -0, 2500,
    ]);
    expect(parseIJson('"\\ud83d\\ude00"')).toBe('😀');
    expect(parseIJson(' {"a" : [ true , false , null ] } ')).toEqual({ a: [true, false, null] });
  });

  it('keeps "__proto__" as a data member instead of changing the prototype', () => {
    const v = parseIJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never puts the offending text into the error (it may hold PII)', () => {
    try {
      parseIJson('{"to":"secret@example.com","to":"x"}');
      expect.unreachable();
    } catch (e) {
      expect(JSON.stringify((e as GateError).toJSON())).not.toContain('secret@example.com');
    }
  });
});

describe('assertIJson (parsed values)', () => {
  it.each([
    ['undefined', { a: undefined }],
    ['a BigInt', { a: 1n }],
    ['NaN', [Number.NaN]],
    ['an unsafe integer', { n: 2 ** 53 }],
    ['a Date', { d: new Date(0) }],
    ['a function', { f: () => 1 }],
    ['a lone surrogate', { s: '\ud800' }],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    ['a sparse array', [1, , 3]],
  ])('rejects %s', (_name, v) => {
    expect(codeOf(() => assertIJson(v))).toBe('EF_MALFORMED_ARGUMENTS');
  });

  it('rejects cycles and accepts shared (acyclic) references', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => assertIJson(cyclic))).toBe('EF_MALFORMED_ARGUMENTS');
    const shared = { x: 1 };
    expect(codeOf(() => assertIJson({ a: shared, b: shared }))).toBeUndefined();
  });
});
