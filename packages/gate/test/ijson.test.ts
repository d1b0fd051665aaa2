import { canonicalJson, sha256Base64url } from '@vrpkit/core';
import { assertIJson, GateError, parseIJson } from '@vrpkit/gate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actDigest } from '../src/act.js';
import { canonicalIJson, snapshotIJson } from '../src/ijson.js';
import { makeAct } from './procs/common.js';

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

// The hot path's JCS (ijson.ts `canonicalIJson`) against the reference, `canonicalJson` (the `canonicalize` package).
describe('canonicalIJson (RFC 8785 on I-JSON values)', () => {
  /** Member names and strings across the UTF-16 range: sorting is by code units, astral characters included. */
  const text = fc.string({ unit: 'binary', maxLength: 8 });
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(null, true, false, 0, -0, 1e21, 1e-7, 0.1, -5e-324, Number.MAX_SAFE_INTEGER),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      text,
      fc.array(tie('v'), { maxLength: 5 }),
      fc.dictionary(text, tie('v'), { maxKeys: 6 }),
    ),
  })).v;

  /** Whether assertIJson accepts `v` (fast-check generates lone surrogates). */
  const isIJson = (v: unknown): boolean => codeOf(() => assertIJson(v)) === undefined;

  it('is byte-equal to canonicalJson on every I-JSON value, and refuses what assertIJson refuses', () => {
    fc.assert(
      fc.property(value, (v) => {
        if (isIJson(v)) expect(canonicalIJson(v)).toBe(canonicalJson(v));
        else expect(codeOf(() => canonicalIJson(v))).toBe('EF_MALFORMED_ARGUMENTS');
      }),
      { numRuns: 2000 },
    );
  });

  // LiveArguments' one walk (act.ts `LiveArguments.take`): the copy invoke gets and the text its digest covers.
  it('snapshotIJson: a deep, frozen copy in the original member order and canonicalJson of it, or the same refusal', () => {
    const deepFrozen = (x: unknown): boolean =>
      typeof x !== 'object' || x === null || (Object.isFrozen(x) && Object.values(x).every(deepFrozen));
    fc.assert(
      fc.property(value, (v) => {
        if (!isIJson(v)) return void expect(codeOf(() => snapshotIJson(v))).toBe('EF_MALFORMED_ARGUMENTS');
        const { copy, canonical } = snapshotIJson(v);
        expect(canonical).toBe(canonicalJson(v));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        expect(copy).toEqual(v);
        expect(deepFrozen(copy)).toBe(true);
        if (typeof v === 'object' && v !== null) expect(copy).not.toBe(v);
      }),
      { numRuns: 2000 },
    );
    const copy = snapshotIJson(parseIJson('{"b":1,"__proto__":{"polluted":true},"a":[2]}')).copy as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['b', '__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('refuses what is not I-JSON, as assertIJson does', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const v of [cyclic, { d: new Date(0) }, { u: undefined }, new Array(2), { n: Number.NaN }, { big: 2 ** 53 }, { f: () => 1 }])
      expect(codeOf(() => canonicalIJson(v))).toBe('EF_MALFORMED_ARGUMENTS');
    const shared = { x: 1 };
    expect(canonicalIJson({ b: shared, a: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('digests an act as the reference does, falling back to it for members that are not I-JSON', () => {
    const act = makeAct({ id: 'act-1', policy_state: { policy_epoch: 1, authority_epoch: 2, revocation_epoch: 3 }, destination: 'maps' });
    const reference = (a: unknown) => sha256Base64url(canonicalJson(a));
    expect(actDigest(act)).toBe(reference(act));
    // The schema lets extra members through inside nested objects: a Date is digested by the reference.
    const extra = { ...act, agent: { ...act.agent, seen: new Date(0), big: 2 ** 60 } };
    expect(actDigest(extra)).toBe(reference(extra));
  });
});
