/**
 * The journal's retry rule, and the `vrp gate` CLI (approve, pending, journal, revoke,
 * bump-epoch, policy check, keys) run in-process against a real SQLite store written by a Gate.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentCandidateAct, Gate, type GateStore, type JournalRow, loadPolicy, openSqliteStore, retryOutcome } from '@vrpkit/gate';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

describe('retryOutcome (seed §Retries: a fetch of the original tool_result, never a second invoke)', () => {
  const row = (over: Partial<JournalRow>): JournalRow => ({
    candidate_act_id: 'a',
    authority_id: 'afa-a',
    arguments_digest: 'D',
    tool_id: 't',
    owner: 'o',
    state: 'EFFECTUATED',
    consumed_at: 1,
    invoked_at: 2,
    finished_at: 3,
    result_json: '{"ok":1}',
    error_code: null,
    ...over,
  });
  it('returns the recorded result for the same digest, as a deny', () => {
    expect(retryOutcome(row({}), 'D')).toEqual({
      decision: expect.objectContaining({ allow: false, code: 'EF_005' }),
      replayed: true,
      result: { ok: 1 },
    });
  });
  it('denies other arguments under the same id, in-flight, failed and unknown rows', () => {
    expect(retryOutcome(row({}), 'OTHER')).toMatchObject({ replayed: false, decision: { code: 'EF_005' } });
    expect(retryOutcome(row({ state: 'INVOKED', result_json: null }), 'D')).toMatchObject({
      replayed: false,
      decision: { code: 'EF_005' },
    });
    expect(retryOutcome(row({ state: 'FAILED', result_json: null }), 'D')).toMatchObject({ replayed: false, decision: { code: 'EF_005' } });
    expect(retryOutcome(row({ state: 'EFFECT_RESULT_UNKNOWN' }), 'D')).toMatchObject({
      replayed: false,
      decision: { code: 'EF_EFFECT_RESULT_UNKNOWN' },
    });
  });
});

const vrp = (...args: string[]) => runVrpInProcess(args);

describe('vrp gate (CLI) on a real store', () => {
  const dir = tmpDir('cli');
  const db = join(dir, 'gate.db');
  let store: GateStore;
  let gate: Gate;
  let payout: AgentCandidateAct;
  const secret = 'beneficiary-IBAN-DE00123';

  beforeAll(async () => {
    store = await openSqliteStore(db);
    gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY });
    const ps = await gate.policyState();
    await gate.dispatch(makeAct({ id: 'search-1', policy_state: ps }), { q: 'lisbon' }, async () => ({ hits: 2 }));
    payout = makeAct({ id: 'payout-1', tool: 'payout_create', consequence_class: 'FINANCIAL', args: { to: secret }, policy_state: ps });
    expect((await gate.dispatch(payout, { to: secret }, async () => 'paid')).decision.code).toBe('EF_APPROVAL_REQUIRED');
  });
  afterAll(async () => {
    await gate.close();
  });

  it('pending lists the escalation with digests, never the arguments', async () => {
    const r = await vrp('gate', 'pending', '--db', db, '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows).toEqual([
      expect.objectContaining({
        candidate_act_id: 'payout-1',
        tool_id: 'payout_create',
        consequence_class: 'FINANCIAL',
        arguments_digest: payout.arguments_digest.value,
      }),
    ]);
    expect(r.stdout).not.toContain(secret);
  });

  it("approve --digest binds the digest the person reviewed: another one is EF_SCOPE_MISMATCH (the gate's code) and decides nothing", async () => {
    const other = 'A'.repeat(43);
    const r = await vrp('gate', 'approve', 'payout-1', '--db', db, '--digest', other, '--approver', 'mallory');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error\[EF_SCOPE_MISMATCH\]: act payout-1 is bound to digest [A-Za-z0-9_-]{43}, not the reviewed A{43}; nothing was decided\n$/,
    );
    expect(await store.escalations.get('payout-1')).toMatchObject({ status: 'PENDING', approver: null });
    // The Gate's own approve refuses the same way, with the same code.
    expect(await gate.approve('payout-1', 'mallory', other)).toMatchObject({ status: 'denied', code: 'EF_SCOPE_MISMATCH' });
  });

  it('approve records the decision; the gate then issues and the held act runs once; a second approve is refused', async () => {
    const r = await vrp('gate', 'approve', 'payout-1', '--db', db, '--approver', 'alice', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ candidate_act_id: 'payout-1', status: 'APPROVED', approver: 'alice' });
    expect(await gate.dispatch(payout, { to: secret }, async () => 'paid')).toMatchObject({ invoked: true, result: 'paid' });
    const again = await vrp('gate', 'approve', 'payout-1', '--db', db);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('error[not_pending]: act payout-1 is approved\n');
  });

  it('journal shows consumed → invoked → result per act, as JSON or text, without arguments', async () => {
    const r = await vrp('gate', 'journal', '--db', db, '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows.map((x: { candidate_act_id: string; state: string }) => `${x.candidate_act_id}:${x.state}`).sort()).toEqual([
      'payout-1:EFFECTUATED',
      'search-1:EFFECTUATED',
    ]);
    expect(rows[0]).toHaveProperty('has_result', true);
    expect(r.stdout).not.toContain(secret);
    const text = await vrp('gate', 'journal', '--db', db, '--state', 'EFFECTUATED', '--limit', '1');
    expect(text.stdout.trim().split('\n')).toHaveLength(1);
    expect(text.stdout).toContain('EFFECTUATED');
  });

  it('revoke and bump-epoch change what enforce accepts', async () => {
    const ps = await gate.policyState();
    const a = makeAct({ id: 'search-2', policy_state: ps });
    const issued = await gate.authorize(a);
    const r = await vrp('gate', 'revoke', issued.authority_id!, '--db', db, '--json');
    expect(JSON.parse(r.stdout)).toEqual({ authority_id: issued.authority_id, state: 'REVOKED' });
    expect(await gate.enforce(a, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_REVOKED' });
    expect((await vrp('gate', 'revoke', issued.authority_id!, '--db', db)).code).toBe(1);
    const b = makeAct({ id: 'search-3', policy_state: ps });
    await gate.authorize(b);
    const bump = await vrp('gate', 'bump-epoch', 'authority', '--db', db, '--json');
    expect(JSON.parse(bump.stdout)).toEqual({ ...ps, authority_epoch: ps.authority_epoch + 1 });
    expect(await gate.enforce(b, { q: 'lisbon' })).toMatchObject({ allow: false, code: 'EF_EPOCH_STALE' });
  });

  it('usage errors exit 64; a missing store file is an error, not a new database', async () => {
    expect((await vrp('gate', 'journal')).code).toBe(64);
    expect((await vrp('gate', 'journal', '--db', db, '--database-url', 'postgres://x')).code).toBe(64);
    expect((await vrp('gate', 'bump-epoch', 'everything', '--db', db)).code).toBe(64);
    const missing = await vrp('gate', 'journal', '--db', join(dir, 'nope.db'));
    expect(missing).toMatchObject({ code: 1, stderr: `error[no_store]: no gate store at ${join(dir, 'nope.db')}\n` });
  });

  it('policy check validates, classifies, and reports every problem', async () => {
    const good = join(dir, 'policy.json');
    writeFileSync(good, JSON.stringify(TEST_POLICY));
    const ok = await vrp('gate', 'policy', 'check', good, '--classify', 'payout_create', 'search', '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      valid: true,
      policy_id: 'gate-tests',
      classify: { payout_create: 'FINANCIAL', search: 'INFORMATIONAL' },
    });
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'version: 1\npolicy_id: x\nhot_envelopes:\n  - name: pay\n    consequence_classes: [FINANCIAL]\n');
    const r = await vrp('gate', 'policy', 'check', bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error\[invalid_policy\]: .*hot_envelopes\.0\.consequence_classes: FINANCIAL is fail-closed/);
  });

  it('keys writes a private JWK with mode 0600 and prints only the public JWKS', async () => {
    const out = join(dir, 'key.json');
    const r = await vrp('gate', 'keys', '--out', out, '--kid', 'gate-cli', '--json');
    expect(r.code).toBe(0);
    const jwks = JSON.parse(r.stdout);
    const priv = JSON.parse(readFileSync(out, 'utf8'));
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: 'gate-cli', x: priv.x });
    expect(r.stdout).not.toContain(priv.d);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // it never overwrites an existing key
    expect((await vrp('gate', 'keys', '--out', out)).code).toBe(1);
  });
});

afterAll(removeTmpDirs);
