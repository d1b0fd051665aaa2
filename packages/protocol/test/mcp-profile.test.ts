import {
  assertionMatchesToolCall,
  BOUND_TOOL_NAME,
  buildMcpTransportAssertion,
  hashArguments,
  normalizeToolArguments,
  offerRef,
  readMcpTransportAssertion,
} from '@vrpkit/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Worked values computed with the reference implementation's hashArguments (HemmaBo-se/hemmabo-mcp-server lib/vrp-mcp-profile.ts).
const WITH_DOMAIN = { check_in: '2026-09-02', check_out: '2026-09-05', domain: 'villaakerlyckan.se', guests: 4 };
const PLAIN = { check_in: '2026-09-02', check_out: '2026-09-05', guests: 4 };

describe('hashArguments', () => {
  it('reproduces the profile worked values', () => {
    expect(hashArguments(WITH_DOMAIN)).toBe('f76d5bc8e14c4e83a4df30d4469a8e837369bc84e548d9122182aeb275a424a8');
    expect(hashArguments(PLAIN)).toBe('12de1b288f931e0c4e7acb8b69f35414aee5421b49bed784d12969b15e35da63');
  });

  it('does not normalise casing itself (the profile puts that on the caller)', () => {
    const camel = { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 4 };
    expect(hashArguments(camel)).not.toBe(hashArguments(PLAIN));
    expect(hashArguments(normalizeToolArguments(camel))).toBe(hashArguments(PLAIN));
  });

  it('throws not_canonicalizable for values JSON cannot carry', () => {
    expect(() => hashArguments({ guests: Number.NaN })).toThrow(expect.objectContaining({ code: 'not_canonicalizable' }));
  });

  const date = fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const extraKey = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !['check_in', 'check_out', 'checkIn', 'checkOut'].includes(k));
  const argsArb = fc.record({
    check_in: date,
    check_out: date,
    guests: fc.integer({ min: 1, max: 50 }),
    extra: fc.dictionary(extraKey, fc.jsonValue(), { maxKeys: 4 }),
  });

  it('property: invariant under key order', () => {
    fc.assert(
      fc.property(argsArb, fc.infiniteStream(fc.integer()), ({ extra, ...core }, keys) => {
        const args = { ...extra, ...core };
        const shuffled = Object.fromEntries(
          Object.entries(args)
            .map((e) => [keys.next().value as number, e] as const)
            .sort((a, b) => a[0] - b[0])
            .map(([, e]) => e),
        );
        expect(hashArguments(shuffled)).toBe(hashArguments(args));
      }),
    );
  });

  it('property: invariant under camelCase→snake_case normalisation of the aliases', () => {
    fc.assert(
      fc.property(argsArb, fc.boolean(), fc.boolean(), ({ extra, ...core }, camelIn, camelOut) => {
        const snake = { ...extra, ...core };
        const mixed: Record<string, unknown> = { ...extra, guests: core.guests };
        mixed[camelIn ? 'checkIn' : 'check_in'] = core.check_in;
        mixed[camelOut ? 'checkOut' : 'check_out'] = core.check_out;
        expect(hashArguments(normalizeToolArguments(mixed))).toBe(hashArguments(snake));
        expect(normalizeToolArguments(snake)).toEqual(snake);
      }),
    );
  });
});

describe('normalizeToolArguments', () => {
  it('renames only the two aliases and keeps optional arguments as carried', () => {
    expect(normalizeToolArguments({ checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 4, language: 'sv' })).toEqual({
      check_in: '2026-09-02',
      check_out: '2026-09-05',
      guests: 4,
      language: 'sv',
    });
  });

  it('collapses an alias that repeats its snake_case key and rejects a conflicting one', () => {
    expect(normalizeToolArguments({ check_in: '2026-09-02', checkIn: '2026-09-02', check_out: '2026-09-05', guests: 2 })).toEqual({
      check_in: '2026-09-02',
      check_out: '2026-09-05',
      guests: 2,
    });
    expect(() => normalizeToolArguments({ checkIn: '2026-09-03', check_in: '2026-09-02' })).toThrow(
      expect.objectContaining({ code: 'conflicting_argument_alias' }),
    );
  });

  it('rejects non-objects and keeps a "__proto__" key as data', () => {
    for (const bad of [null, [], 'x', 3]) {
      expect(() => normalizeToolArguments(bad)).toThrow(expect.objectContaining({ code: 'invalid_tool_arguments' }));
    }
    const out = normalizeToolArguments(JSON.parse('{"__proto__":{"polluted":true},"guests":1}'));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'guests']);
  });
});

describe('buildMcpTransportAssertion / assertionMatchesToolCall', () => {
  const assertion = buildMcpTransportAssertion({
    tool: BOUND_TOOL_NAME,
    arguments: { checkIn: '2026-09-02', checkOut: '2026-09-05', guests: 4 },
    servedAt: '2026-06-24T11:40:00Z',
    issuer: 'villaakerlyckan.se',
    offerRef: 'offer:villaakerlyckan.se:2026-09-02/05',
  });

  it('builds the profile object in the reference member order, hashing normalised arguments', () => {
    expect(JSON.stringify(assertion)).toBe(
      JSON.stringify({
        vrp_mcp_profile_version: '1.0',
        type: 'vrp.mcp.transport.1',
        tool: 'get_verified_stay_offer',
        arguments_sha256: '12de1b288f931e0c4e7acb8b69f35414aee5421b49bed784d12969b15e35da63',
        served_at: '2026-06-24T11:40:00Z',
        issuer: 'villaakerlyckan.se',
        offer_ref: 'offer:villaakerlyckan.se:2026-09-02/05',
      }),
    );
    expect(readMcpTransportAssertion(assertion)).toBe(assertion);
  });

  it('binds only the same tool with the same canonical arguments', () => {
    expect(
      assertionMatchesToolCall(assertion, {
        tool: BOUND_TOOL_NAME,
        arguments: { guests: 4, check_out: '2026-09-05', check_in: '2026-09-02' },
      }),
    ).toBe(true);
    expect(assertionMatchesToolCall(assertion, { tool: 'other_tool', arguments: PLAIN })).toBe(false);
    expect(assertionMatchesToolCall(assertion, { tool: BOUND_TOOL_NAME, arguments: { ...PLAIN, guests: 5 } })).toBe(false);
    expect(assertionMatchesToolCall(assertion, { tool: BOUND_TOOL_NAME, arguments: { ...PLAIN, guests: '4' } })).toBe(false);
    expect(assertionMatchesToolCall(assertion, { tool: BOUND_TOOL_NAME, arguments: { ...PLAIN, language: 'sv' } })).toBe(false);
    expect(assertionMatchesToolCall(null, { tool: BOUND_TOOL_NAME, arguments: PLAIN })).toBe(false);
    expect(assertionMatchesToolCall(assertion, { tool: BOUND_TOOL_NAME, arguments: { guests: Number.NaN } })).toBe(false);
  });

  it('omits undefined optional members and reads back only well-formed assertions', () => {
    const bare = buildMcpTransportAssertion({
      tool: BOUND_TOOL_NAME,
      arguments: PLAIN,
      servedAt: '2026-06-24T11:40:00Z',
      issuer: 'a.example',
    });
    expect(Object.keys(bare)).toEqual(['vrp_mcp_profile_version', 'type', 'tool', 'arguments_sha256', 'served_at', 'issuer']);
    expect(readMcpTransportAssertion({ ...bare, type: 'vrp.mcp.transport.2' })).toBeNull();
    expect(readMcpTransportAssertion({ ...bare, arguments_sha256: 'ABC' })).toBeNull();
    expect(readMcpTransportAssertion({ ...bare, offer_ref: 5 })).toBeNull();
    expect(readMcpTransportAssertion([bare])).toBeNull();
  });
});

describe('offerRef', () => {
  it('uses the vectors shape with an ISO 8601 abbreviated end', () => {
    expect(offerRef('villaakerlyckan.se', '2026-09-02', '2026-09-05')).toBe('offer:villaakerlyckan.se:2026-09-02/05');
    expect(offerRef('villa.example', '2026-09-28', '2026-10-02')).toBe('offer:villa.example:2026-09-28/10-02');
    expect(offerRef('villa.example', '2026-12-30', '2027-01-02')).toBe('offer:villa.example:2026-12-30/2027-01-02');
    expect(() => offerRef('villa.example', '2026-9-2', '2026-09-05')).toThrow(expect.objectContaining({ code: 'invalid_date' }));
  });
});
