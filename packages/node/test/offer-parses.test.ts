/**
 * The offer request parser's memo (surfaces/offer-parses.ts), behind the offer endpoint and the
 * MCP direct answer: an accepted parse is given again without parsing, a refusal is parsed every
 * time (a client cannot fill the memo with refusals), and the memo stays bounded.
 */
import { parseOfferRequest } from '@vrpkit/protocol';
import { describe, expect, it } from 'vitest';
import { offerParses } from '../src/surfaces/offer-parses.js';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe('offerParses', () => {
  it('remembers an accepted parse by its key and parses a refusal every time', () => {
    const memo = offerParses();
    let parses = 0;
    const counted = (input: unknown) => () => {
      parses++;
      return parseOfferRequest(input);
    };
    const args = { check_in: day(30), check_out: day(33), guests: 2 };
    const key = JSON.stringify(args);
    const first = memo(key, counted(args));
    expect(first.ok).toBe(true);
    expect(memo(key, counted(args))).toBe(first);
    expect(parses).toBe(1);
    const refused = { check_in: day(30), check_out: day(33) };
    for (let i = 0; i < 3; i++) expect(memo(JSON.stringify(refused), counted(refused)).ok).toBe(false);
    expect(parses).toBe(4);
  });

  it('is emptied when full, so it stays bounded', () => {
    const memo = offerParses();
    let parses = 0;
    const parse = (n: number) => () => {
      parses++;
      return parseOfferRequest({ check_in: day(30), check_out: day(33), guests: 1 + (n % 5) });
    };
    for (let n = 0; n < 4096; n++) memo(`k${n}`, parse(n));
    memo('k0', parse(0));
    expect(parses).toBe(4096);
    // The 4097th key empties the memo: what was remembered is parsed again.
    memo('k4096', parse(4096));
    memo('k1', parse(1));
    expect(parses).toBe(4098);
  });
});
