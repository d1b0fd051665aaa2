import { asRecord, isRecord } from '@vrpkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('isRecord / asRecord (a JSON object: not null, not an array)', () => {
  it('accepts JSON objects, including empty and prototype-less ones', () => {
    for (const v of [{}, { a: 1 }, JSON.parse('{"__proto__":1}'), Object.create(null)]) {
      expect(isRecord(v)).toBe(true);
      expect(asRecord(v)).toBe(v); // the same object, never a copy
    }
  });

  it('refuses every non-object JSON value and the non-JSON values a caller may hold', () => {
    for (const v of [null, undefined, [], [1], '{}', 0, 1, true, false, Number.NaN, 1n, Symbol('s'), () => ({})]) {
      expect(isRecord(v)).toBe(false);
      expect(asRecord(v)).toBeUndefined();
    }
  });

  it('agrees with JSON.parse on what a JSON object is (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        const isObjectText = text.startsWith('{');
        expect(isRecord(JSON.parse(text))).toBe(isObjectText);
        expect(asRecord(JSON.parse(text)) !== undefined).toBe(isObjectText);
      }),
    );
  });

  it('reads a chain of members as absent when any step has the wrong shape', () => {
    const price = (payload: unknown) => asRecord(asRecord(payload)?.price)?.public_total;
    expect(price({ price: { public_total: 100 } })).toBe(100);
    expect(price({ price: [100] })).toBeUndefined();
    expect(price({ price: null })).toBeUndefined();
    expect(price('price')).toBeUndefined();
    expect(price(null)).toBeUndefined();
  });
});
