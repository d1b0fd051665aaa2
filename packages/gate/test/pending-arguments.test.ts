/**
 * The pending arguments port's contract suite (ui/pending-arguments.ts) and the audit trail
 * the approvals page reads (the audit chain's search), on a real SQLite file and on PostgreSQL
 * (`VRPKIT_TEST_PG_URL`, a fresh schema per test): arguments live until their act is decided (or
 * expires) plus the retention period, and no longer.
 */
import type { EscalationRow, EvidenceRow, GateStore } from '@vrpkit/gate';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { auditChainTrail } from '../src/ui/audit.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('pending-arguments');
afterAll(removeTmpDirs);

const T0 = 1_800_000_000_000;
const MIN = 60_000;
const EPOCHS = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };

const backends = storeBackends('the pending arguments port', dir, 'gate_args');

function evidence(actId: string, at: number): EvidenceRow {
  return {
    evidence_id: `ev-${actId}`,
    candidate_act_id: actId,
    act_digest: 'act-digest',
    arguments_digest: `args-${actId}`,
    decision: 'ESCALATED',
    code: 'EF_APPROVAL_REQUIRED',
    reason: 'needs a person',
    policy_id: 'p',
    ...EPOCHS,
    approver: null,
    recorded_at: at,
  };
}

function escalation(actId: string, at: number, expiresAt: number): EscalationRow {
  return {
    candidate_act_id: actId,
    evidence_id: `ev-${actId}`,
    binding_digest: `binding-${actId}`,
    act_json: '{}',
    status: 'PENDING',
    approver: null,
    requested_at: at,
    decided_at: null,
    expires_at: expiresAt,
  };
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(`pending arguments and the audit trail on ${backend.name}`, () => {
    let db: StoreDatabase | undefined;
    let store: GateStore | undefined;
    afterEach(async () => {
      await store?.close();
      await db?.drop();
      store = undefined;
      db = undefined;
    });

    it('keeps arguments while pending, then until decided or expired plus retention; arguments of no escalation are purged', async () => {
      db = await backend.fresh();
      store = await db.open();
      const args = store.pendingArguments;
      // waiting: pending for an hour; decided_x: approved at T0+10m; expired: pending, expired at T0+5m.
      for (const [id, expires] of [
        ['waiting', T0 + 60 * MIN],
        ['decided_x', T0 + 60 * MIN],
        ['expired', T0 + 5 * MIN],
      ] as const) {
        await store.ledger.recordDecision({ evidence: evidence(id, T0), escalation: escalation(id, T0, expires) });
        await args.record({ candidate_act_id: id, arguments_json: `{"id":"${id}"}`, arguments_digest: `args-${id}`, recorded_at: T0 });
      }
      await args.record({ candidate_act_id: 'orphan', arguments_json: '{}', arguments_digest: 'x', recorded_at: T0 });
      expect(await store.escalations.decide('decided_x', 'binding-decided_x', 'APPROVED', 'alice', T0 + 10 * MIN)).toBeDefined();
      // The first copy stays: a second record for the same act changes nothing.
      await args.record({ candidate_act_id: 'waiting', arguments_json: '{"other":1}', arguments_digest: 'y', recorded_at: T0 + 1 });
      expect((await args.get('waiting'))?.arguments_json).toBe('{"id":"waiting"}');

      const keep = 30 * MIN;
      expect(await args.purge(T0 + 35 * MIN - 1, keep)).toBe(1); // the orphan only
      expect(await args.get('expired')).toBeDefined();
      expect(await args.purge(T0 + 35 * MIN + 1, keep)).toBe(1); // expired at +5m, retention 30m
      expect(await args.get('expired')).toBeUndefined();
      expect(await args.get('decided_x')).toBeDefined();
      expect(await args.purge(T0 + 40 * MIN + 1, keep)).toBe(1); // decided at +10m
      expect(await args.get('decided_x')).toBeUndefined();
      expect(await args.purge(T0 + 59 * MIN, keep)).toBe(0);
      expect(await args.get('waiting')).toBeDefined();
    });

    it('the audit trail: the audit chain entries newest first (a replay deny and a pin included), filtered by kind, code, actor, act id substring (literally) and time', async () => {
      db = await backend.fresh();
      store = await db.open();
      await store.audit.append(
        [
          { kind: 'escalate', act_id: 'a_1', tool: 'write_file', digest: 'args-a_1', code: 'EF_APPROVAL_REQUIRED' },
          { kind: 'escalate', act_id: 'ab1', tool: 'write_file', digest: 'args-ab1', code: 'EF_APPROVAL_REQUIRED' },
          { kind: 'pin', tool: 'read_file', server: 'srv', digest: 'def', actor: 'alice' },
        ],
        T0,
      );
      await store.audit.append([{ kind: 'approve', act_id: 'a_1', digest: 'binding-a_1', actor: 'alice' }], T0 + 2 * MIN);
      await store.audit.append([{ kind: 'deny', act_id: 'a_1', tool: 'write_file', digest: 'args-a_1', code: 'EF_005' }], T0 + 3 * MIN);
      await store.audit.append([{ kind: 'reject', act_id: 'ab1', digest: 'binding-ab1', actor: 'bob' }], T0 + 4 * MIN);
      const trail = auditChainTrail(store.audit);

      const all = await trail.list({ limit: 50 });
      expect(all.chain).toBe(6);
      expect(all.entries.map((e) => [e.seq, e.kind, e.act_id, e.code, e.actor])).toEqual([
        [6, 'reject', 'ab1', null, 'bob'],
        [5, 'deny', 'a_1', 'EF_005', null],
        [4, 'approve', 'a_1', null, 'alice'],
        [3, 'pin', null, null, 'alice'],
        [2, 'escalate', 'ab1', 'EF_APPROVAL_REQUIRED', null],
        [1, 'escalate', 'a_1', 'EF_APPROVAL_REQUIRED', null],
      ]);
      expect(all.entries[5]).toMatchObject({ at: T0, tool: 'write_file', digest: 'args-a_1', hash: expect.any(String) });
      const seqs = async (f: Omit<Parameters<typeof trail.list>[0], 'limit'>) =>
        (await trail.list({ limit: 50, ...f })).entries.map((e) => e.seq);
      expect(await seqs({ code: 'EF_005' })).toEqual([5]);
      expect(await seqs({ kind: 'escalate' })).toEqual([2, 1]);
      expect(await seqs({ actor: 'alice' })).toEqual([4, 3]);
      // `_` in the filter is a character, not a wildcard: `ab1` does not match `a_`.
      expect(await seqs({ act: 'a_' })).toEqual([5, 4, 1]);
      expect(await seqs({ since: T0 + 3 * MIN })).toEqual([6, 5]);
      expect((await trail.list({ limit: 2 })).entries.map((e) => e.seq)).toEqual([6, 5]);
    });
  });
}
