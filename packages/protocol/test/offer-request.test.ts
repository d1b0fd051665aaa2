/**
 * The Core VRP v0.1 §4 offer request: `parseOfferRequest` and the JSON Schema generated from
 * `OfferRequestSchema` say the same thing. Every entry point's agreement with the parser is
 * proved over the wire in packages/cli/test/offer-request-table.test.ts.
 */
import {
  dayNumber,
  OFFER_REQUEST_ERRORS,
  OfferRequestSchema,
  offerToolInputSchema,
  parseOfferRequest,
  VerificationResultSchema,
} from '@vrpkit/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const OK = { check_in: '2027-07-01', check_out: '2027-07-04', guests: 2 };

describe('parseOfferRequest', () => {
  it('returns the request in snake_case with the nights counted', () => {
    expect(parseOfferRequest({ checkIn: '2028-02-28', checkOut: '2028-03-01', guests: 3, language: 'sv-SE' })).toEqual({
      ok: true,
      request: { check_in: '2028-02-28', check_out: '2028-03-01', guests: 3, nights: 2, language: 'sv-SE' },
    });
  });

  it('reads an HTTP query with every repeated key kept', () => {
    expect(parseOfferRequest(new URLSearchParams('check_in=2027-07-01&check_out=2027-07-04&guests=2'))).toMatchObject({ ok: true });
    expect(parseOfferRequest(new URLSearchParams('check_in=2027-07-01&check_out=2027-07-04&guests=2&guests=2'))).toMatchObject({
      ok: false,
      error: { code: 'duplicate_parameter' },
    });
  });

  it('reads guests as digits from an HTTP query only: in JSON arguments it is a number, as the schema says (issue 32 item 7)', () => {
    const query = new URLSearchParams('check_in=2027-07-01&check_out=2027-07-04&guests=2');
    expect(parseOfferRequest(query)).toMatchObject({ ok: true, request: { guests: 2 } });
    for (const guests of ['2', '02', ' 2', '2.0']) {
      expect(parseOfferRequest({ ...OK, guests })).toMatchObject({ ok: false, error: { code: 'invalid_guests' } });
    }
    expect(parseOfferRequest({ ...OK, guests: '2' })).toMatchObject({ error: { message: expect.stringContaining('not a string') } });
    expect(parseOfferRequest({ ...OK, guests: 2 })).toMatchObject({ ok: true, request: { guests: 2 } });
  });

  it('judges today and the booking horizon only when given them', () => {
    expect(parseOfferRequest(OK, { today: '2027-07-02' })).toMatchObject({ error: { code: 'date_in_past' } });
    expect(parseOfferRequest(OK, { today: '2027-07-01', horizonDays: 0 })).toMatchObject({ ok: true });
    expect(parseOfferRequest(OK, { today: '2027-06-30', horizonDays: 0 })).toMatchObject({ error: { code: 'beyond_horizon' } });
    expect(parseOfferRequest({ ...OK, check_in: '1999-01-01', check_out: '1999-01-02' })).toMatchObject({ ok: true });
  });

  it('refuses anything but one object as invalid_arguments, and never throws', () => {
    for (const input of [null, undefined, 'check_in=2027-07-01', 42, [OK], true]) {
      expect(parseOfferRequest(input)).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    }
  });

  it('answers with codes of the one table only', () => {
    fc.assert(
      fc.property(fc.object({ maxDepth: 1 }), (input) => {
        const r = parseOfferRequest(input);
        return r.ok || Object.hasOwn(OFFER_REQUEST_ERRORS, r.error.code);
      }),
    );
  });

  it('gives the same code whatever the order of the members (an object is unordered)', () => {
    const member = fc.tuple(
      fc.constantFrom('check_in', 'checkIn', 'check_out', 'checkOut', 'guests', 'language', '__proto__', 'x'),
      fc.oneof(fc.constantFrom('2027-07-01', '2027-07-04', '2026-02-30', '', 'en'), fc.integer({ min: -1, max: 3 }), fc.constant(null)),
    );
    fc.assert(
      fc.property(fc.uniqueArray(member, { selector: (m) => m[0], maxLength: 6 }), (members) => {
        const forward = parseOfferRequest(Object.fromEntries(members));
        const backward = parseOfferRequest(Object.fromEntries([...members].reverse()));
        expect(forward.ok ? 'ok' : forward.error.code).toBe(backward.ok ? 'ok' : backward.error.code);
      }),
    );
  });

  it('refuses a calendar date that does not exist, by integer arithmetic (no Date rollover)', () => {
    expect(dayNumber('2026-02-30')).toBeNull();
    expect(dayNumber('2027-02-29')).toBeNull();
    expect(dayNumber('2028-02-29')).toBe(dayNumber('2028-02-28')! + 1);
    expect(dayNumber('2100-02-29')).toBeNull();
    expect(dayNumber('2000-02-29')).not.toBeNull();
  });
});

describe('the advertised JSON Schema is generated from OfferRequestSchema and agrees with the parser', () => {
  const schema = offerToolInputSchema();
  const validate = new Ajv2020({ strict: false }).compile(schema);

  it('requires the three arguments and admits only the keys the parser accepts', () => {
    expect(schema).toMatchObject({ type: 'object', required: ['check_in', 'check_out', 'guests'], additionalProperties: false });
    expect(Object.keys(schema.properties as object).sort()).toEqual(Object.keys(OfferRequestSchema.shape).sort());
    expect(schema).not.toHaveProperty('$schema');
    expect(offerToolInputSchema()).not.toBe(offerToolInputSchema());
  });

  it('JSON arguments with snake_case keys and a numeric guests: what the parser accepts the schema accepts; what the schema refuses the parser refuses', () => {
    const args = fc.record(
      {
        check_in: fc.oneof(fc.constantFrom('2027-07-01', '2026-02-30', '2027-13-01', ' 2027-07-01'), fc.string({ maxLength: 10 })),
        check_out: fc.oneof(fc.constantFrom('2027-07-04', '2027-06-30', '2028-07-02', '2027-02-29'), fc.string({ maxLength: 10 })),
        guests: fc.oneof(fc.integer({ min: -2, max: 1002 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0)),
        language: fc.constantFrom('en', 'sv-SE', '<b>', 'x'),
        other: fc.string({ maxLength: 3 }),
      },
      { requiredKeys: ['guests'] },
    );
    fc.assert(
      fc.property(args, (input) => {
        const parsed = parseOfferRequest(input);
        const valid = validate(input);
        if (parsed.ok) expect(valid).toBe(true);
        if (!valid) expect(parsed.ok).toBe(false);
        // Beyond a JSON Schema: real calendar days and the stay's length.
        if (valid && !parsed.ok) expect(['invalid_date', 'invalid_range']).toContain(parsed.error.code);
      }),
      { numRuns: 500 },
    );
  });
});

describe('document schemas', () => {
  it('the official verification-result shape: a complete object passes, an extra member does not (closed)', () => {
    const result = {
      domain: 'villa.example',
      verified: true,
      protocol_version: '0.1',
      fresh: true,
      payload_matches_offer: true,
      signature: { alg: 'EdDSA', verified: true },
      agent_citation: {
        may_quote_as_official_direct_offer: true,
        safe_to_quote_as_official_direct_offer: true,
        quote_status: 'official_host_domain_verified_offer',
        blocked_reason: null,
      },
      official_offer_summary: {
        availability: { available: true, source: 'official_host_domain' },
        price: { currency: 'SEK', public_total: 100, agent_total: 100, minor_unit: true, exact: true },
        direct_booking_url: 'https://villa.example/book',
        valid_until: '2027-07-01T10:15:00Z',
        bookable: true,
      },
      agent_guardrails: { safe_to_quote: true, must_quote_from_signed_offer: true, required_phrase_when_safe: 'x' },
    };
    expect(VerificationResultSchema.safeParse(result).success).toBe(true);
    expect(VerificationResultSchema.safeParse({ ...result, extra: 1 }).success).toBe(false);
  });
});
