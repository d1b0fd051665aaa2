/**
 * The pending arguments port's contract suite (ui/pending-arguments.ts) and the decision trail
 * the approvals page reads (`Ledger.decisionTrail`), on a real SQLite file and on PostgreSQL
 * (`VRPKIT_TEST_PG_URL`, a fresh schema per test): arguments live until their act is decided (or
 * expires) plus the retention period, and no longer.
 */
import type { EscalationRow, EvidenceRow, GateStore } from '@vrpkit/gate';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { decisionTablesAuditTrail } from '../src/ui/audit.js';
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

    it('the audit trail: gate and person decisions newest first, filtered by decision, by act id substring (literally) and by time', async () => {
      db = await backend.fresh();
      store = await db.open();
      for (const id of ['a_1', 'ab1', 'c'])
        await store.ledger.recordDecision({ evidence: evidence(id, T0), escalation: escalation(id, T0, T0 + 60 * MIN) });
      await store.escalations.decide('a_1', 'binding-a_1', 'APPROVED', 'alice', T0 + 2 * MIN);
      await store.escalations.decide('c', 'binding-c', 'REJECTED', 'bob', T0 + 3 * MIN);
      const trail = decisionTablesAuditTrail(store.ledger);

      const all = await trail.list({ limit: 50 });
      expect(all.slice(0, 2).map((e) => [e.decision, e.candidate_act_id, e.actor])).toEqual([
        ['REJECTED', 'c', 'bob'],
        ['APPROVED', 'a_1', 'alice'],
      ]);
      expect(
        all
          .filter((e) => e.decision === 'ESCALATED')
          .map((e) => e.candidate_act_id)
          .sort(),
      ).toEqual(['a_1', 'ab1', 'c']);
      expect((await trail.list({ limit: 50, decision: 'APPROVED' })).map((e) => e.candidate_act_id)).toEqual(['a_1']);
      // `_` in the filter is a character, not a wildcard: `ab1` does not match `a_`.
      expect((await trail.list({ limit: 50, act: 'a_' })).map((e) => e.candidate_act_id)).toEqual(['a_1', 'a_1']);
      expect((await trail.list({ limit: 50, since: T0 + 1 })).map((e) => e.decision)).toEqual(['REJECTED', 'APPROVED']);
    });
  });
}
