import { canonicalJson, sha256Base64url } from '@vrpkit/core';
import { type AgentCandidateAct, digestArguments, GateError, parseIJson, validateAct } from '@vrpkit/gate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** The seed's mapped Anthropic example, with a real digest. */
function seedExample(): AgentCandidateAct {
  return {
    version: '1.0',
    object_type: 'agent_candidate_act',
    candidate_act_id: 'act-toolu-01A-sess55',
    act_type: 'TOOL_CALL',
    created_at: '2026-11-29T12:00:00Z',
    expires_at: '2026-11-29T12:10:00Z',
    initiating_principal: { principal_id: 'org-acme' },
    agent: { agent_id: 'claude-work-seat-12', runtime_id: 'anthropic-host-loop', model_id: 'claude-family', delegation_depth: 0 },
    tool: { tool_id: 'email_send', function_id: 'email_send', tool_protocol: 'LOCAL_FUNCTION' },
    purpose: { purpose_id: 'user-turn', declared_purpose: 'send invoice email' },
    arguments_digest: digestArguments({ to: 'alice@example.com', subject: 'Invoice', body: '...' }),
    destination: { destination_id: 'smtp-gw-1' },
    consequence_class: 'COMMUNICATION',
    policy_state: { policy_epoch: 9, authority_epoch: 3, revocation_epoch: 1 },
    freshness: { nonce: 'C0FFEE11DEADBEEF' },
    instruction_provenance: { source_type: 'user' },
    finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'TOOL_DISPATCH' },
  };
}

const REQUIRED = [
  'version',
  'object_type',
  'candidate_act_id',
  'act_type',
  'created_at',
  'expires_at',
  'initiating_principal',
  'agent',
  'tool',
  'purpose',
  'arguments_digest',
  'consequence_class',
  'policy_state',
  'freshness',
  'finality_sink',
] as const;

describe('AgentCandidateAct schema', () => {
  it("accepts the seed's mapped example", () => {
    const r = validateAct(seedExample());
    expect(r.ok).toBe(true);
  });

  it.each(REQUIRED)('refuses an act without the required field %s', (field) => {
    const act: Record<string, unknown> = { ...seedExample() };
    delete act[field];
    const r = validateAct(act);
    expect(r).toMatchObject({ ok: false, code: 'EF_MALFORMED_ACT' });
    if (!r.ok) expect(r.message).toContain(field);
  });

  it.each([
    ['an unknown act_type', { act_type: 'TOOL_USE' }],
    ['an unknown consequence_class', { consequence_class: 'HARMLESS' }],
    ['an unknown tool_protocol', { tool: { tool_id: 'x', function_id: 'x', tool_protocol: 'GRPC' } }],
    ['a tool without function_id', { tool: { tool_id: 'x' } }],
    ['an additional top-level property', { authority_id: 'afa-1' }],
    ['a digest value that is not base64url', { arguments_digest: { algorithm: 'SHA-256', value: 'q+/w==', canonicalization: 'JCS' } }],
    ['another digest algorithm', { arguments_digest: { algorithm: 'SHA-1', value: 'A'.repeat(27), canonicalization: 'JCS' } }],
    ['another canonicalization', { arguments_digest: { algorithm: 'SHA-256', value: 'A'.repeat(43), canonicalization: 'NONE' } }],
    ['a negative epoch', { policy_state: { policy_epoch: -1, authority_epoch: 0, revocation_epoch: 0 } }],
    ['a non-RFC 3339 time', { created_at: 'yesterday' }],
    ['expiry before creation', { expires_at: '2026-11-29T11:00:00Z' }],
    ['an empty sink type', { finality_sink: { sink_id: 's', sink_type: '' } }],
    ['a finality_sink with an extra member', { finality_sink: { sink_id: 's', sink_type: 'TOOL_DISPATCH', authority: 'x' } }],
  ])('refuses %s', (_name, patch) => {
    expect(validateAct({ ...seedExample(), ...patch })).toMatchObject({ ok: false, code: 'EF_MALFORMED_ACT' });
  });

  it('refuses non-objects without throwing', () => {
    for (const v of [null, 42, 'act', []]) expect(validateAct(v).ok).toBe(false);
  });
});

describe('digestArguments (JCS + SHA-256, base64url)', () => {
  it('is SHA-256 over the RFC 8785 canonical JSON', () => {
    const args = { currency: 'EUR', amount: '150.00', beneficiary: 'vendor-441' };
    expect(digestArguments(args)).toEqual({
      algorithm: 'SHA-256',
      value: sha256Base64url('{"amount":"150.00","beneficiary":"vendor-441","currency":"EUR"}'),
      canonicalization: 'JCS',
    });
  });

  it('property: two equivalent JSON strings give one digest', () => {
    // Equivalent texts: member order shuffled, whitespace added, characters \u-escaped.
    const reorder = (v: unknown, seed: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => reorder(x, seed + i));
      if (v && typeof v === 'object') {
        const entries = Object.entries(v).map(([k, x], i) => [k, reorder(x, seed + i)] as const);
        entries.sort(
          ([a], [b]) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7) || (seed % 2 ? a.localeCompare(b) : b.localeCompare(a)),
        );
        return Object.fromEntries(entries);
      }
      return v;
    };
    const escapeAll = (text: string): string => text.replace(/[a-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), fc.nat(), (obj, seed) => {
        fc.pre(!JSON.stringify(obj).match(/\d{16,}|e\+?\d{2}/)); // stay inside safe integers
        let a: unknown;
        try {
          a = parseIJson(JSON.stringify(obj));
        } catch {
          return; // non-I-JSON input is covered elsewhere
        }
        const other = JSON.stringify(reorder(obj, seed), null, seed % 3);
        // \u-escaping letters inside strings only: escape a copy where letters sit in string tokens.
        const escaped = other.replace(/"(?:[^"\\]|\\.)*"/g, (s) => (s.includes('\\') ? s : escapeAll(s)));
        expect(digestArguments(parseIJson(escaped)).value).toBe(digestArguments(a).value);
      }),
    );
  });

  it('property: mutated arguments give a different digest', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { minKeys: 1 }),
        fc.string(),
        (obj, replacement) => {
          const key = Object.keys(obj)[0]!;
          fc.pre(obj[key] !== replacement);
          const mutated = { ...obj, [key]: replacement };
          expect(canonicalJson(mutated)).not.toBe(canonicalJson(obj));
          expect(digestArguments(mutated).value).not.toBe(digestArguments(obj).value);
        },
      ),
    );
  });

  it('an approved search cannot become a send: different tools, same shape, different digests', () => {
    expect(digestArguments({ query: 'invoice', to: 'alice@example.com' }).value).not.toBe(
      digestArguments({ query: 'invoice', to: 'attacker@ex.com' }).value,
    );
  });

  it('throws GateError EF_MALFORMED_ARGUMENTS for non-I-JSON values', () => {
    expect(() => digestArguments({ amount: 2 ** 60 })).toThrow(GateError);
    try {
      digestArguments({ s: '\udfff' });
    } catch (e) {
      expect((e as GateError).code).toBe('EF_MALFORMED_ARGUMENTS');
    }
  });
});
