/** The signed authority: a cooperating sink verifies it with verifyAuthority (and jose agrees). */
import { join } from 'node:path';
import { base64urlEncode, ed25519PrivateJwkFromSeed, fixedClock, publicJwkOf } from '@vrpkit/core';
import { type AgentCandidateAct, AUTHORITY_JWS_TYPE, Gate, loadPolicy, openSqliteStore, verifyAuthority } from '@vrpkit/gate';
import { compactVerify, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAct, PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

const NOW = Date.parse('2026-11-29T20:00:00Z');
let jws: string;
let act: AgentCandidateAct;
const ARGS = { q: 'lisbon' };

beforeAll(async () => {
  const store = await openSqliteStore(join(tmpDir('authority'), 'gate.db'));
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock: fixedClock(NOW) });
  act = makeAct({
    id: 'auth-1',
    args: ARGS,
    destination: 'maps.example',
    endpoint: 'mcp://maps.example/mcp',
    policy_state: await gate.policyState(),
    now: NOW,
  });
  await gate.authorize(act);
  jws = (await store.ledger.getAuthority('auth-1'))!.jws;
  await store.close();
});

const opts = () => ({ keys: [PUBLIC_JWK], sinkId: SINK, now: NOW + 1000 });

describe('verifyAuthority', () => {
  it('accepts the authority with its binding to the act and the live arguments; jose verifies the same JWS', async () => {
    const r = verifyAuthority(jws, { ...opts(), act, liveArgs: ARGS });
    expect(r).toMatchObject({
      ok: true,
      kid: SIGNING_KEY.kid,
      authority: {
        object_type: 'agent_finality_authority',
        profile: 'tool-binding-02',
        candidate_act_id: 'auth-1',
        arguments_digest: act.arguments_digest,
        tool: { tool_id: 'search', function_id: 'search', tool_endpoint: 'mcp://maps.example/mcp' },
        destination_id: 'maps.example',
        sink_id: SINK,
        consequence_class: 'INFORMATIONAL',
        policy_state: act.policy_state,
        reuse_policy: 'SINGLE_USE',
      },
    });
    const { protectedHeader } = await compactVerify(jws, await importJWK(PUBLIC_JWK, 'EdDSA'));
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: AUTHORITY_JWS_TYPE, kid: SIGNING_KEY.kid });
  });

  it('refuses a tampered payload, an unknown key, another alg/typ, and garbage', () => {
    const [h, p, s] = jws.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${base64urlEncode(JSON.stringify({ ...payload, sink_id: SINK, consequence_class: 'FINANCIAL' }))}.${s}`;
    expect(verifyAuthority(forged, opts())).toMatchObject({ ok: false, code: 'EF_002' });
    const stranger = publicJwkOf(ed25519PrivateJwkFromSeed(new Uint8Array(32).fill(9)), SIGNING_KEY.kid);
    expect(verifyAuthority(jws, { ...opts(), keys: [stranger] })).toMatchObject({ ok: false, code: 'EF_002' });
    const otherTyp = `${base64urlEncode(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: SIGNING_KEY.kid }))}.${p}.${s}`;
    expect(verifyAuthority(otherTyp, opts())).toMatchObject({ ok: false, code: 'EF_002' });
    expect(verifyAuthority('not-a-jws', opts())).toMatchObject({ ok: false, code: 'EF_002' });
  });

  it('refuses an expired authority and one bound to another sink', () => {
    expect(verifyAuthority(jws, { ...opts(), now: NOW + 61_000 })).toMatchObject({ ok: false, code: 'EF_002' });
    expect(verifyAuthority(jws, { ...opts(), sinkId: 'host-dispatch-2' })).toMatchObject({ ok: false, code: 'EF_040' });
  });

  it('refuses other live arguments, another tool, another destination, another act', () => {
    expect(verifyAuthority(jws, { ...opts(), liveArgs: { q: 'porto' } })).toMatchObject({ ok: false, code: 'EF_SCOPE_MISMATCH' });
    expect(verifyAuthority(jws, { ...opts(), liveArgs: { q: '\ud800' } })).toMatchObject({ ok: false, code: 'EF_MALFORMED_ARGUMENTS' });
    const send = { ...act, tool: { ...act.tool, tool_id: 'email_send', function_id: 'email_send' } };
    expect(verifyAuthority(jws, { ...opts(), act: send })).toMatchObject({ ok: false, code: 'EF_SCOPE_MISMATCH' });
    const swapped = { ...act, destination: { destination_id: 'maps.attacker' } };
    expect(verifyAuthority(jws, { ...opts(), act: swapped })).toMatchObject({ ok: false, code: 'EF_DESTINATION_MISMATCH' });
    expect(verifyAuthority(jws, { ...opts(), act: { ...act, candidate_act_id: 'auth-2' } })).toMatchObject({ ok: false, code: 'EF_002' });
  });
});

afterAll(removeTmpDirs);
