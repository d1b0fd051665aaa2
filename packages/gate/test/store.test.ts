/**
 * The ledger's ports' contract suites — epochs, ledger, journal, escalations (store/ports.ts) —
 * each run against SQLite (a real file in a tmp dir) and PostgreSQL (`VRPKIT_TEST_PG_URL`, a
 * fresh schema per test; skipped, saying so, without it), and the migrations both share. The
 * features' ports have theirs beside them: the audit log in audit.test.ts, the proxy tables in
 * proxy-tables.test.ts, the pending arguments (and the decision trail) in pending-arguments.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  type AuthorityRow,
  type ConsumeRequest,
  EscalationBindingConflict,
  type EvidenceRow,
  type GateStore,
  openGateStore,
  openSqliteStore,
  parseGateStoreTarget,
  StoreTimeoutError,
  verifyAuditChain,
} from '@vrpkit/gate';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTmpDirs, SINK, tmpDir } from './procs/common.js';
import { spawnProc } from './procs/spawn.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('store');
const backends = storeBackends('the ledger port contract suites', dir, 'gate_store');

const T0 = 1_800_000_000_000;
const EPOCHS = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };
let seq = 0;

function evidence(actId: string, over: Partial<EvidenceRow> = {}): EvidenceRow {
  return {
    evidence_id: `ev-${actId}-${seq++}`,
    candidate_act_id: actId,
    act_digest: 'act-digest',
    arguments_digest: 'args-digest',
    decision: 'ISSUED',
    code: null,
    reason: 'hot envelope reads',
    policy_id: 'p',
    ...EPOCHS,
    approver: null,
    recorded_at: T0,
    ...over,
  };
}

function authority(actId: string, evidenceId: string, over: Partial<AuthorityRow> = {}): AuthorityRow {
  return {
    authority_id: `afa-${actId}`,
    candidate_act_id: actId,
    evidence_id: evidenceId,
    arguments_digest: 'args-digest',
    tool_id: 'search',
    function_id: 'search',
    tool_endpoint: null,
    destination_id: 'maps.example',
    sink_id: SINK,
    consequence_class: 'INFORMATIONAL',
    issued_at: T0,
    expires_at: T0 + 60_000,
    ...EPOCHS,
    jws: 'x.y.z',
    state: 'ISSUED',
    consumed_at: null,
    consumed_by: null,
    revoked_at: null,
    ...over,
  };
}

function request(actId: string, over: Partial<ConsumeRequest> = {}): ConsumeRequest {
  return {
    candidate_act_id: actId,
    arguments_digest: 'args-digest',
    tool_id: 'search',
    function_id: 'search',
    tool_endpoint: null,
    destination_id: 'maps.example',
    consequence_class: 'INFORMATIONAL',
    act_policy_state: EPOCHS,
    sink_id: SINK,
    owner: 'owner-a',
    now: T0 + 1000,
    ...over,
  };
}

async function issue(store: GateStore, actId: string, over: Partial<AuthorityRow> = {}): Promise<AuthorityRow> {
  const ev = evidence(actId);
  const a = authority(actId, ev.evidence_id, over);
  await store.ledger.recordDecision({ evidence: ev, authority: a });
  return a;
}

for (const b of backends) {
  describe.skipIf(b.skip)(`ledger ports on ${b.name}`, () => {
    let db: StoreDatabase;
    let store: GateStore;
    const open = () => db.open({ timeoutMs: 2000, poolSize: 4 });
    beforeEach(async () => {
      db = await b.fresh();
      store = await open();
    });
    afterEach(async () => {
      await store.close();
      await db.drop();
    });

    describe('epochs', () => {
      it('migrates once; a second open sees the initial epochs', async () => {
        const again = await open();
        expect(again.dialect).toBe(b.name);
        expect(await again.epochs.current()).toEqual(EPOCHS);
        await again.close();
      });

      it('processes opening a fresh store at once each open it (they take turns migrating), by target through openGateStore', async () => {
        const other = await b.fresh();
        const target =
          'sqlite' in other.config ? `sqlite:${other.config.sqlite}` : `${other.config.postgres}?schema=${other.config.schema}`;
        try {
          const openers = Array.from({ length: 4 }, () => spawnProc('open-store', target));
          expect(await Promise.all(openers.map((o) => o.waitFor('OPEN')))).toEqual(openers.map(() => 'OPEN 1'));
          expect(await Promise.all(openers.map((o) => o.exited))).toEqual(openers.map(() => ({ code: 0, signal: null })));
        } finally {
          await other.drop();
        }
      }, 60_000);

      it('records the first policy digest without a bump, bumps on a different one, and bumps single epochs', async () => {
        expect(await store.epochs.syncPolicyDigest('d1', T0)).toEqual(EPOCHS);
        expect(await store.epochs.syncPolicyDigest('d1', T0)).toEqual(EPOCHS);
        expect(await store.epochs.syncPolicyDigest('d2', T0)).toEqual({ ...EPOCHS, policy_epoch: 2 });
        expect(await store.epochs.bump('revocation_epoch', T0)).toEqual({ policy_epoch: 2, authority_epoch: 1, revocation_epoch: 2 });
        expect(await store.epochs.bump('authority_epoch', T0)).toEqual({ policy_epoch: 2, authority_epoch: 2, revocation_epoch: 2 });
      });
    });

    describe('ledger', () => {
      it('refuses an authority without its evidence row (evidence before authority) and a second authority for one act', async () => {
        await expect(
          store.ledger.recordDecision({ evidence: evidence('other'), authority: authority('a1', 'ev-missing') }),
        ).rejects.toThrow();
        expect(await store.ledger.getAuthority('a1')).toBeUndefined();
        expect(await store.ledger.getEvidence('ev-missing')).toBeUndefined();
        await issue(store, 'a1');
        await expect(issue(store, 'a1', { authority_id: 'afa-second' })).rejects.toThrow();
        expect((await store.ledger.getAuthority('a1'))?.authority_id).toBe('afa-a1');
      });

      it('writes an issuance only under the expected epochs, checked inside its transaction', async () => {
        const ev = evidence('e1');
        expect(
          await store.ledger.recordDecision({ expectEpochs: EPOCHS, evidence: ev, authority: authority('e1', ev.evidence_id) }),
        ).toEqual({
          recorded: true,
        });
        await store.epochs.bump('authority_epoch', T0);
        const ev2 = evidence('e2');
        expect(
          await store.ledger.recordDecision({ expectEpochs: EPOCHS, evidence: ev2, authority: authority('e2', ev2.evidence_id) }),
        ).toEqual({
          recorded: false,
          current: { ...EPOCHS, authority_epoch: 2 },
        });
        expect(await store.ledger.getAuthority('e2')).toBeUndefined();
        expect(await store.ledger.getEvidence(ev2.evidence_id)).toBeUndefined();
      });

      it('consumes once: the first consume wins and journals CONSUMED, the replay gets EF_005', async () => {
        await issue(store, 'a1');
        expect(await store.ledger.consume(request('a1'))).toEqual({ ok: true, authority_id: 'afa-a1' });
        const row = await store.ledger.getAuthority('a1');
        expect(row).toMatchObject({ state: 'CONSUMED', consumed_at: T0 + 1000, consumed_by: 'owner-a' });
        expect(await store.journal.get('a1')).toMatchObject({
          state: 'CONSUMED',
          authority_id: 'afa-a1',
          owner: 'owner-a',
          arguments_digest: 'args-digest',
        });
        expect(await store.ledger.consume(request('a1', { owner: 'owner-b' }))).toMatchObject({ ok: false, code: 'EF_005' });
        expect((await store.journal.get('a1'))?.owner).toBe('owner-a');
      });

      const refusals: [string, Partial<AuthorityRow>, Partial<ConsumeRequest>, string][] = [
        ['missing authority', {}, { candidate_act_id: 'nope' }, 'EF_002'],
        ['expired', { expires_at: T0 + 500 }, {}, 'EF_002'],
        ['bound to another sink', { sink_id: 'other-sink' }, {}, 'EF_040'],
        ['other arguments', {}, { arguments_digest: 'other-digest' }, 'EF_SCOPE_MISMATCH'],
        ['other tool', {}, { tool_id: 'email_send', function_id: 'email_send' }, 'EF_SCOPE_MISMATCH'],
        ['other consequence class', {}, { consequence_class: 'COMMUNICATION' }, 'EF_SCOPE_MISMATCH'],
        ['other destination', {}, { destination_id: 'attacker.example' }, 'EF_DESTINATION_MISMATCH'],
        [
          'other endpoint',
          { tool_endpoint: 'mcp://git.example/prod' },
          { tool_endpoint: 'mcp://git.attacker/prod' },
          'EF_DESTINATION_MISMATCH',
        ],
        ['act built under an older policy epoch', {}, { act_policy_state: { ...EPOCHS, policy_epoch: 0 } }, 'EF_EPOCH_STALE'],
      ];
      for (const [what, authOver, reqOver, code] of refusals) {
        it(`refuses ${what} with ${code} and changes nothing`, async () => {
          await issue(store, 'a1', authOver);
          expect(await store.ledger.consume(request('a1', reqOver))).toMatchObject({ ok: false, code });
          expect((await store.ledger.getAuthority('a1'))?.state).toBe('ISSUED');
          expect(await store.journal.get('a1')).toBeUndefined();
          expect(await store.journal.list()).toEqual([]);
        });
      }

      it('an origin change invalidates the authority in the same transaction: consumed as refused, journaled REFUSED', async () => {
        await issue(store, 'o1', { destination_id: 'https://pay.example', tool_endpoint: 'https://pay.example' });
        const moved = { destination_id: 'https://pay.example-evil', tool_endpoint: 'https://pay.example-evil' };
        expect(await store.ledger.consume(request('o1', { ...moved, invalidate_on_origin_change: true }))).toMatchObject({
          ok: false,
          code: 'EF_DESTINATION_MISMATCH',
          invalidated: 'afa-o1',
        });
        expect(await store.ledger.getAuthority('o1')).toMatchObject({ state: 'CONSUMED', consumed_by: 'owner-a' });
        expect(await store.journal.get('o1')).toMatchObject({ state: 'REFUSED', error_code: 'EF_DESTINATION_MISMATCH', invoked_at: null });
        // The original origin cannot use it afterwards.
        const original = { destination_id: 'https://pay.example', tool_endpoint: 'https://pay.example' };
        expect(await store.ledger.consume(request('o1', { ...original, invalidate_on_origin_change: true }))).toMatchObject({
          ok: false,
          code: 'EF_005',
        });
      });

      it('refuses after an epoch bump (policy → EF_EPOCH_STALE, revocation → EF_REVOKED) and after a revocation', async () => {
        await issue(store, 'p1');
        await issue(store, 'r1');
        await issue(store, 'x1');
        expect(await store.ledger.revoke('afa-x1', T0)).toBe(true);
        expect(await store.ledger.revoke('afa-x1', T0)).toBe(false);
        expect(await store.ledger.consume(request('x1'))).toMatchObject({ ok: false, code: 'EF_REVOKED' });
        await store.epochs.bump('policy_epoch', T0);
        expect(await store.ledger.consume(request('p1'))).toMatchObject({ ok: false, code: 'EF_EPOCH_STALE' });
        await store.epochs.bump('revocation_epoch', T0);
        expect(await store.ledger.consume(request('r1'))).toMatchObject({ ok: false, code: 'EF_REVOKED' });
        expect(await store.journal.list()).toEqual([]);
      });

      // In one process a SQLite store is opened once (its connection is synchronous: a second
      // handle's busy-wait would block the thread the first needs); across processes see race.test.ts.
      it(`lets exactly one of many concurrent consumers win (${b.name === 'sqlite' ? 'one handle' : 'separate pools'})`, async () => {
        await issue(store, 'race');
        const others = b.name === 'sqlite' ? [] : await Promise.all(Array.from({ length: 6 }, () => open()));
        const handles = b.name === 'sqlite' ? Array.from({ length: 6 }, () => store) : others;
        try {
          const results = await Promise.all(handles.map((s, i) => s.ledger.consume(request('race', { owner: `o${i}` }))));
          expect(results.filter((r) => r.ok)).toHaveLength(1);
          expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === 'EF_005')).toBe(true);
        } finally {
          await Promise.all(others.map((s) => s.close()));
        }
      });

      it('times out (StoreTimeoutError) while another connection holds the write path, consuming nothing', async () => {
        await issue(store, 'slow');
        const release = await db.holdLock();
        try {
          await expect(store.ledger.consume(request('slow'), { timeoutMs: 150 })).rejects.toBeInstanceOf(StoreTimeoutError);
          // The epoch read is a plain read of the committed row: it does not wait for the writer
          // (every write that depends on the epochs reads them again under the write path).
          expect(await store.epochs.current({ timeoutMs: 150 })).toMatchObject({ policy_epoch: expect.any(Number) });
        } finally {
          await release();
        }
        expect((await store.ledger.getAuthority('slow'))?.state).toBe('ISSUED');
        expect(await store.ledger.consume(request('slow'), { timeoutMs: 1000 })).toMatchObject({ ok: true });
      });

      it('commits concurrent consumes as one group, each decided alone: a duplicate, a replay, a bad digest, a failing member', async () => {
        const groups: number[] = [];
        const grouped = await db.open({ timeoutMs: 2000, poolSize: 4, onGroupCommit: (n) => groups.push(n) });
        try {
          for (const id of ['g-ok1', 'g-ok2', 'g-dup', 'g-replay', 'g-bad', 'g-broken']) await issue(grouped, id);
          expect(await grouped.ledger.consume(request('g-replay'))).toMatchObject({ ok: true });
          // A tampered store: a journal row for an authority still ISSUED makes that member's journal insert fail.
          await db.exec(`INSERT INTO gate_journal (candidate_act_id, authority_id, arguments_digest, tool_id, owner, state, consumed_at)
            VALUES ('g-broken', 'afa-g-broken', 'args-digest', 'search', 'tamperer', 'CONSUMED', ${T0})`);
          groups.length = 0;
          const members = [
            request('g-ok1'),
            request('g-dup', { owner: 'first' }),
            request('g-dup', { owner: 'second' }),
            request('g-replay'),
            request('g-bad', { arguments_digest: 'other-digest' }),
            request('g-broken'),
            request('g-ok2'),
          ];
          const results = await Promise.allSettled(members.map((m) => grouped.ledger.consume(m)));
          expect(groups).toEqual([members.length]);
          const decided = results.map((r) => (r.status === 'rejected' ? 'error' : r.value.ok ? 'ok' : r.value.code));
          expect(decided).toEqual(['ok', 'ok', 'EF_005', 'EF_005', 'EF_SCOPE_MISMATCH', 'error', 'ok']);
          // Each member's writes are its own: the failing one changed nothing, the refused ones consumed nothing.
          expect((await grouped.ledger.getAuthority('g-broken'))?.state).toBe('ISSUED');
          expect((await grouped.ledger.getAuthority('g-bad'))?.state).toBe('ISSUED');
          expect((await grouped.journal.get('g-dup'))?.owner).toBe('first');
          expect(await grouped.ledger.consume(request('g-bad'))).toMatchObject({ ok: true });
          // One chain: the refusals' deny entries and the grants' consumed entries, in member order.
          const kinds = (await grouped.audit.read({ limit: 100 }))
            .filter((e) => e.act_id?.startsWith('g-'))
            .map((e) => `${e.kind}:${e.act_id}`);
          expect(kinds).toEqual([
            'consumed:g-replay',
            'consumed:g-ok1',
            'consumed:g-dup',
            'deny:g-dup',
            'deny:g-replay',
            'deny:g-bad',
            'consumed:g-ok2',
            'consumed:g-bad',
          ]);
          expect(await verifyAuditChain(grouped.audit)).toMatchObject({ ok: true });
        } finally {
          await grouped.close();
        }
      });

      it('a group that cannot commit fails every member and consumes nothing (the write path held past its bound)', async () => {
        for (const id of ['t1', 't2', 't3']) await issue(store, id);
        const release = await db.holdLock();
        let results: PromiseSettledResult<unknown>[];
        try {
          results = await Promise.allSettled(['t1', 't2', 't3'].map((id) => store.ledger.consume(request(id), { timeoutMs: 150 })));
        } finally {
          await release();
        }
        expect(results.map((r) => r.status === 'rejected' && r.reason instanceof StoreTimeoutError)).toEqual([true, true, true]);
        for (const id of ['t1', 't2', 't3']) expect((await store.ledger.getAuthority(id))?.state).toBe('ISSUED');
        expect(await store.journal.list()).toEqual([]);
      });

      // PostgreSQL's issue-and-consume is one statement of its own (gate_issue_consume), not grouped.
      it.runIf(b.name === 'sqlite')(
        "SQLite: dispatch's issue-and-consume joins the consumes' group; a member whose insert fails fails alone",
        async () => {
          const groups: number[] = [];
          const grouped = await db.open({ timeoutMs: 2000, onGroupCommit: (n) => groups.push(n) });
          try {
            await issue(grouped, 'd-taken');
            await issue(grouped, 'd-c');
            const decision = (id: string, over: Partial<AuthorityRow> = {}) => {
              const ev = evidence(id);
              return { evidence: ev, authority: authority(id, ev.evidence_id, over), expectEpochs: EPOCHS };
            };
            // A second authority for an act that has one: its insert breaks the one-authority-per-act rule.
            const taken = decision('d-taken', { authority_id: 'afa-d-taken-2' });
            groups.length = 0;
            const results = await Promise.allSettled([
              grouped.ledger.issueAndConsume(decision('d-1'), request('d-1', { invoke: true })),
              grouped.ledger.issueAndConsume(taken, request('d-taken', { invoke: true })),
              grouped.ledger.consume(request('d-c')),
            ]);
            expect(groups).toEqual([3]);
            expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
            expect(results[0]).toMatchObject({ value: { recorded: true, outcome: { ok: true, authority_id: 'afa-d-1' } } });
            expect(results[2]).toMatchObject({ value: { ok: true, authority_id: 'afa-d-c' } });
            expect(await grouped.journal.get('d-1')).toMatchObject({ state: 'INVOKED' });
            // The failing member wrote nothing: not its evidence, and the act's own authority is untouched.
            expect(await grouped.ledger.getEvidence(taken.evidence.evidence_id)).toBeUndefined();
            expect(await grouped.ledger.getAuthority('d-taken')).toMatchObject({ authority_id: 'afa-d-taken', state: 'ISSUED' });
            expect(await verifyAuditChain(grouped.audit)).toMatchObject({ ok: true });
          } finally {
            await grouped.close();
          }
        },
      );

      it('issues and consumes in one transaction: evidence, authority, journal INVOKED, and one chain of entries', async () => {
        const ev = evidence('h1');
        const a = authority('h1', ev.evidence_id);
        const audit = [
          { kind: 'allow' as const, act_id: 'h1', tool: 'search', digest: 'args-digest' },
          { kind: 'issued' as const, act_id: 'h1', tool: 'search', digest: 'args-digest' },
        ];
        expect(
          await store.ledger.issueAndConsume({ evidence: ev, authority: a, audit, expectEpochs: EPOCHS }, request('h1', { invoke: true })),
        ).toEqual({
          recorded: true,
          outcome: { ok: true, authority_id: 'afa-h1' },
        });
        expect(await store.ledger.getEvidence(ev.evidence_id)).toMatchObject({ decision: 'ISSUED' });
        expect(await store.ledger.getAuthority('h1')).toMatchObject({ state: 'CONSUMED', consumed_by: 'owner-a', consumed_at: T0 + 1000 });
        expect(await store.journal.get('h1')).toMatchObject({ state: 'INVOKED', consumed_at: T0 + 1000, invoked_at: T0 + 1000 });
        // Invoked already: markInvoked has nothing to move; the outcome moves it on.
        expect(await store.journal.markInvoked('h1', 'owner-a', T0 + 2000)).toBe(false);
        expect(await store.journal.recordOutcome('h1', 'owner-a', { state: 'EFFECTUATED', result_json: null }, T0 + 2000)).toBe(true);
        // A second issuance for the act is refused by the one-authority-per-act rule and writes nothing.
        const ev2 = evidence('h1');
        await expect(
          store.ledger.issueAndConsume(
            { evidence: ev2, authority: authority('h1', ev2.evidence_id, { authority_id: 'afa-h1b' }), audit, expectEpochs: EPOCHS },
            request('h1', { invoke: true }),
          ),
        ).rejects.toThrow();
        expect(await store.ledger.getEvidence(ev2.evidence_id)).toBeUndefined();
        // Under epochs that moved on nothing is written and the current epochs come back.
        await store.epochs.bump('policy_epoch', T0);
        const ev3 = evidence('h2');
        expect(
          await store.ledger.issueAndConsume(
            { evidence: ev3, authority: authority('h2', ev3.evidence_id), audit, expectEpochs: EPOCHS },
            request('h2', { invoke: true }),
          ),
        ).toEqual({
          recorded: false,
          current: { ...EPOCHS, policy_epoch: 2 },
        });
        expect(await store.ledger.getEvidence(ev3.evidence_id)).toBeUndefined();
        expect((await store.audit.read({ limit: 100 })).map((e) => `${e.kind}:${e.act_id}:${e.code ?? ''}`)).toEqual([
          'allow:h1:',
          'issued:h1:',
          'consumed:h1:',
          'invoked:h1:',
          'result:h1:',
        ]);
        expect(await verifyAuditChain(store.audit)).toMatchObject({ ok: true, entries: 5 });
      });

      it('an issuance whose consume is refused commits the issuance and the deny entry, and journals nothing', async () => {
        const ev = evidence('h3');
        const a = authority('h3', ev.evidence_id);
        expect(
          await store.ledger.issueAndConsume(
            { evidence: ev, authority: a, expectEpochs: EPOCHS },
            request('h3', { invoke: true, arguments_digest: 'other' }),
          ),
        ).toMatchObject({ recorded: true, outcome: { ok: false, code: 'EF_SCOPE_MISMATCH' } });
        expect(await store.ledger.getAuthority('h3')).toMatchObject({ state: 'ISSUED' });
        expect(await store.journal.get('h3')).toBeUndefined();
        expect((await store.audit.read({ limit: 10 })).map((e) => `${e.kind}:${e.code}`)).toEqual(['deny:EF_SCOPE_MISMATCH']);
        expect(await verifyAuditChain(store.audit)).toMatchObject({ ok: true, entries: 1 });
      });
    });

    describe('journal', () => {
      it('moves the journal CONSUMED → INVOKED → EFFECTUATED only for its owner and only forward', async () => {
        await issue(store, 'j1');
        await store.ledger.consume(request('j1'));
        expect(await store.journal.recordOutcome('j1', 'owner-a', { state: 'EFFECTUATED', result_json: '1' }, T0)).toBe(false);
        expect(await store.journal.markInvoked('j1', 'owner-b', T0)).toBe(false);
        expect(await store.journal.markInvoked('j1', 'owner-a', T0 + 2)).toBe(true);
        expect(await store.journal.markInvoked('j1', 'owner-a', T0 + 3)).toBe(false);
        expect(await store.journal.recordOutcome('j1', 'owner-a', { state: 'EFFECTUATED', result_json: '{"ok":true}' }, T0 + 4)).toBe(true);
        expect(await store.journal.recordOutcome('j1', 'owner-a', { state: 'FAILED', error_code: 'x' }, T0 + 5)).toBe(false);
        expect(await store.journal.get('j1')).toMatchObject({
          state: 'EFFECTUATED',
          invoked_at: T0 + 2,
          finished_at: T0 + 4,
          result_json: '{"ok":true}',
        });
      });

      it("recovers only the restarting owner's unfinished rows into EFFECT_RESULT_UNKNOWN", async () => {
        for (const id of ['c1', 'i1', 'done', 'theirs']) await issue(store, id);
        await store.ledger.consume(request('c1'));
        await store.ledger.consume(request('i1'));
        await store.journal.markInvoked('i1', 'owner-a', T0);
        await store.ledger.consume(request('done'));
        await store.journal.markInvoked('done', 'owner-a', T0);
        await store.journal.recordOutcome('done', 'owner-a', { state: 'FAILED', error_code: 'boom' }, T0);
        await store.ledger.consume(request('theirs', { owner: 'owner-b' }));
        expect(await store.journal.recoverUnfinished('owner-a', T0 + 9)).toBe(2);
        const states = Object.fromEntries((await store.journal.list()).map((r) => [r.candidate_act_id, r.state]));
        expect(states).toEqual({ c1: 'EFFECT_RESULT_UNKNOWN', i1: 'EFFECT_RESULT_UNKNOWN', done: 'FAILED', theirs: 'CONSUMED' });
        // Unknown is terminal: the old owner cannot move it on.
        expect(await store.journal.markInvoked('c1', 'owner-a', T0)).toBe(false);
        expect(await store.journal.list({ state: 'EFFECT_RESULT_UNKNOWN', limit: 1 })).toHaveLength(1);
      });
    });

    describe('escalations', () => {
      it('decides a pending escalation once, and not after it expired', async () => {
        for (const [id, expires] of [
          ['e1', T0 + 60_000],
          ['e2', T0 + 10],
        ] as const) {
          const ev = evidence(id, { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
          await store.ledger.recordDecision({
            evidence: ev,
            escalation: {
              candidate_act_id: id,
              evidence_id: ev.evidence_id,
              binding_digest: 'b',
              act_json: '{}',
              status: 'PENDING',
              approver: null,
              requested_at: T0,
              decided_at: null,
              expires_at: expires,
            },
          });
        }
        expect((await store.escalations.list('PENDING')).map((e) => e.candidate_act_id).sort()).toEqual(['e1', 'e2']);
        expect(await store.escalations.decide('e1', 'b', 'APPROVED', 'alice', T0 + 100)).toMatchObject({
          status: 'APPROVED',
          approver: 'alice',
        });
        expect(await store.escalations.decide('e1', 'b', 'REJECTED', 'mallory', T0 + 200)).toBeUndefined();
        expect(await store.escalations.decide('e2', 'b', 'APPROVED', 'alice', T0 + 100)).toBeUndefined();
        expect((await store.escalations.get('e2'))?.status).toBe('PENDING');
      });

      it('an escalation is immutable in what it binds, and is decided only for the binding the person reviewed', async () => {
        const escalation = (id: string, evidenceId: string, binding: string, actJson: string) => ({
          candidate_act_id: id,
          evidence_id: evidenceId,
          binding_digest: binding,
          act_json: actJson,
          status: 'PENDING' as const,
          approver: null,
          requested_at: T0,
          decided_at: null,
          expires_at: T0 + 60_000,
        });
        const ev1 = evidence('s1', { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
        expect(
          await store.ledger.recordDecision({ evidence: ev1, escalation: escalation('s1', ev1.evidence_id, 'shown', '{"a":1}') }),
        ).toEqual({
          recorded: true,
        });
        const original = await store.escalations.get('s1');
        // Another binding for the same act id: nothing is written, the original row stays as it was.
        const ev2 = evidence('s1', { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
        expect(
          await store.ledger.recordDecision({
            evidence: ev2,
            escalation: escalation('s1', ev2.evidence_id, 'swapped', '{"a":2}'),
            expectEpochs: EPOCHS,
          }),
        ).toEqual({ recorded: false, conflict: 'escalation_binding' });
        expect(await store.escalations.get('s1')).toEqual(original);
        expect(await store.ledger.getEvidence(ev2.evidence_id)).toBeUndefined();
        // A decision for a binding other than the row's decides nothing.
        expect(await store.escalations.decide('s1', 'swapped', 'APPROVED', 'alice', T0 + 100)).toBeUndefined();
        expect(await store.escalations.get('s1')).toEqual(original);
        // The same binding may be re-escalated (still PENDING) and is decided by its digest.
        const ev3 = evidence('s1', { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
        expect(
          await store.ledger.recordDecision({ evidence: ev3, escalation: escalation('s1', ev3.evidence_id, 'shown', '{"a":1}') }),
        ).toEqual({
          recorded: true,
        });
        expect(await store.escalations.decide('s1', 'shown', 'APPROVED', 'alice', T0 + 100)).toMatchObject({
          binding_digest: 'shown',
          act_json: '{"a":1}',
          status: 'APPROVED',
          approver: 'alice',
        });
        // Once approved, another binding is still refused and the approval is untouched.
        const ev4 = evidence('s1', { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
        expect(
          await store.ledger.recordDecision({ evidence: ev4, escalation: escalation('s1', ev4.evidence_id, 'swapped', '{"a":2}') }),
        ).toEqual({
          recorded: false,
          conflict: 'escalation_binding',
        });
        expect(await store.escalations.get('s1')).toMatchObject({ binding_digest: 'shown', status: 'APPROVED', approver: 'alice' });
      });

      it('concurrent escalations of one act id with different bindings: exactly one is recorded, the other writes nothing', async () => {
        const attempt = (binding: string) => {
          const ev = evidence('race', { decision: 'ESCALATED', code: 'EF_APPROVAL_REQUIRED' });
          const escalation = {
            candidate_act_id: 'race',
            evidence_id: ev.evidence_id,
            binding_digest: binding,
            act_json: '{}',
            status: 'PENDING' as const,
            approver: null,
            requested_at: T0,
            decided_at: null,
            expires_at: T0 + 60_000,
          };
          return store.ledger.recordDecision({ evidence: ev, escalation }).then(
            (r) => ({ binding, evidence_id: ev.evidence_id, r }),
            (e: unknown) => ({ binding, evidence_id: ev.evidence_id, r: e }),
          );
        };
        const results = await Promise.all([attempt('one'), attempt('two'), attempt('three')]);
        const won = results.filter((x) => (x.r as { recorded?: unknown }).recorded === true);
        expect(won).toHaveLength(1);
        for (const lost of results.filter((x) => x !== won[0])) {
          if (lost.r instanceof Error) expect(lost.r).toBeInstanceOf(EscalationBindingConflict);
          else expect(lost.r).toEqual({ recorded: false, conflict: 'escalation_binding' });
          expect(await store.ledger.getEvidence(lost.evidence_id)).toBeUndefined();
        }
        expect((await store.escalations.get('race'))?.binding_digest).toBe(won[0]!.binding);
      });
    });
  });
}

describe('gate store targets', () => {
  it('names a SQLite file (sqlite:FILE or a path) or a PostgreSQL schema (postgres://…?schema=NAME)', () => {
    expect(parseGateStoreTarget('sqlite:/var/gate.db')).toEqual({ kind: 'sqlite', file: '/var/gate.db' });
    expect(parseGateStoreTarget('gate.db')).toEqual({ kind: 'sqlite', file: 'gate.db' });
    expect(parseGateStoreTarget('postgres://u@db.example:5432/gate?schema=proxy_a&sslmode=require')).toEqual({
      kind: 'postgres',
      url: 'postgres://u@db.example:5432/gate?sslmode=require',
      schema: 'proxy_a',
    });
    expect(parseGateStoreTarget('postgresql://db.example/gate')).toMatchObject({ kind: 'postgres', schema: 'vrpkit_gate' });
    expect(() => parseGateStoreTarget('sqlite:')).toThrow(expect.objectContaining({ code: 'invalid_database_url' }));
  });

  it('refuses a schema name that is not a lowercase SQL identifier before connecting', async () => {
    await expect(openGateStore('postgres://127.0.0.1:1/x?schema=Bad-Name')).rejects.toMatchObject({ code: 'invalid_schema_name' });
  });
});

describe('ledger migrations on SQLite: no index on evidence by act', () => {
  it('drops the index from a store made before it went, keeps its evidence, and records the migration once', async () => {
    const file = join(dir, `${randomBytes(6).toString('hex')}.db`);
    let store = await openSqliteStore(file);
    await issue(store, 'old');
    await store.close();
    // The store as a gate before migration 0008 left it: the index present, 0008 not applied.
    const raw = new Database(file);
    raw.exec(`CREATE INDEX gate_evidence_act ON gate_evidence (candidate_act_id); DROP TABLE gate_approval_link;
      DELETE FROM gate_migration WHERE name >= '0008'`);
    raw.close();
    store = await openSqliteStore(file);
    await issue(store, 'new');
    const evidenceId = (await store.ledger.getAuthority('old'))!.evidence_id;
    expect((await store.ledger.getEvidence(evidenceId))?.candidate_act_id).toBe('old');
    await store.close();
    const check = new Database(file, { readonly: true });
    const indexes = check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'gate_evidence'").all();
    const applied = check.prepare("SELECT count(*) AS n FROM gate_migration WHERE name = '0008_no_evidence_act_index'").get();
    check.close();
    expect(indexes).toEqual([{ name: 'sqlite_autoindex_gate_evidence_1' }]);
    expect(applied).toEqual({ n: 1 });
  });
});

describe('audit log migrations on SQLite: entries keyed by their rowid', () => {
  it('rebuilds an audit table made with a separate key index: entries, order and chain kept, appends go on', async () => {
    const file = join(dir, `${randomBytes(6).toString('hex')}.db`);
    let store = await openSqliteStore(file);
    await store.audit.append(
      [
        { kind: 'allow', act_id: 'u1' },
        { kind: 'deny', act_id: 'u2', code: 'EF_002' },
      ],
      T0,
    );
    await store.close();
    // The table as migration 0003 made it (`seq bigint primary key`: a second B-tree), 0009 (and what came after) not applied.
    const raw = new Database(file);
    raw.exec(`CREATE TABLE old_audit (seq bigint PRIMARY KEY, at bigint NOT NULL, kind text NOT NULL, act_id text, tool text,
      server text, digest text, code text, actor text, prev_hash text NOT NULL, hash text NOT NULL);
      INSERT INTO old_audit SELECT * FROM gate_audit; DROP TABLE gate_audit; ALTER TABLE old_audit RENAME TO gate_audit;
      CREATE INDEX gate_audit_at ON gate_audit (at); DROP TABLE gate_approval_link; DELETE FROM gate_migration WHERE name >= '0009'`);
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE tbl_name = 'gate_audit' AND type = 'index' ORDER BY name").all()).toEqual([
      { name: 'gate_audit_at' },
      { name: 'sqlite_autoindex_gate_audit_1' },
    ]);
    raw.close();
    store = await openSqliteStore(file);
    await store.audit.append([{ kind: 'allow', act_id: 'u3' }], T0 + 1);
    expect((await store.audit.read({ limit: 10 })).map((e) => `${e.seq}:${e.kind}:${e.act_id}`)).toEqual([
      '1:allow:u1',
      '2:deny:u2',
      '3:allow:u3',
    ]);
    expect(await verifyAuditChain(store.audit)).toMatchObject({ ok: true, entries: 3 });
    await store.close();
    const check = new Database(file, { readonly: true });
    const indexes = check.prepare("SELECT name FROM sqlite_master WHERE tbl_name = 'gate_audit' AND type = 'index'").all();
    check.close();
    // The rowid is the key (0009), and `at` is not indexed on SQLite (0015): no index beside the table.
    expect(indexes).toEqual([]);
  });
});

// The lock is held by another thread: SQLite's busy wait blocks this one, as it blocks a gate
// waiting for another process's write.
describe('SQLite: a write waits for the write lock as long as its own bound, whatever the bound before it', () => {
  /** Hold `file`'s write lock from a worker thread for `ms`; resolves once it is held. */
  async function holdLockFor(file: string, ms: number): Promise<{ released: Promise<void> }> {
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
      const db = new (require(workerData.module))(workerData.file);
      db.exec('BEGIN IMMEDIATE');
      parentPort.postMessage('held');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
      db.exec('ROLLBACK');
      db.close();`,
      { eval: true, workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, ms } },
    );
    await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    return { released: new Promise((resolve) => worker.once('exit', () => resolve())) };
  }

  it('a longer bound after a shorter one waits it out; a shorter one after it gives up within its own', async () => {
    const file = join(dir, `${randomBytes(6).toString('hex')}.db`);
    const store = await openSqliteStore(file);
    try {
      for (const id of ['w1', 'w2', 'w3']) await issue(store, id);
      expect(await store.ledger.consume(request('w1'), { timeoutMs: 100 })).toMatchObject({ ok: true });
      let lock = await holdLockFor(file, 600);
      expect(await store.ledger.consume(request('w2'), { timeoutMs: 5000 })).toMatchObject({ ok: true });
      await lock.released;
      lock = await holdLockFor(file, 2000);
      const t0 = performance.now();
      await expect(store.ledger.consume(request('w3'), { timeoutMs: 100 })).rejects.toBeInstanceOf(StoreTimeoutError);
      expect(performance.now() - t0).toBeLessThan(1500);
      await lock.released;
      expect((await store.ledger.getAuthority('w3'))?.state).toBe('ISSUED');
    } finally {
      await store.close();
    }
  });
});

afterAll(removeTmpDirs);
