/**
 * The approval links port's contract suite (approvals/links.ts) on a real SQLite file and on
 * PostgreSQL (`VRPKIT_TEST_PG_URL`, a fresh schema per test; skipped, saying so, without it): a
 * link is stored by its token's digest only, opens exactly its act, is spent by one decision and
 * never again, decides nothing for another act or after it expired, and never outlives its
 * escalation. The escalations are made by the real Gate (a FINANCIAL act policy sends to a person).
 */
import {
  type AgentCandidateAct,
  actBindingDigest,
  approvalLinkUrl,
  Gate,
  type GateStore,
  isApprovalLinkToken,
  issueApprovalLink,
  loadPolicy,
  readApprovalLink,
} from '@vrpkit/gate';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvalLinkDigest } from '../src/approvals/links.js';
import { makeAct, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('approval-links');
afterAll(removeTmpDirs);
const backends = storeBackends('the approval links port', dir, 'gate_links');

const T0 = Date.parse('2026-12-05T18:00:00Z');
const MIN = 60_000;

for (const b of backends) {
  describe.skipIf(b.skip)(`approval links on ${b.name}`, () => {
    let db: StoreDatabase;
    let store: GateStore;
    let gate: Gate;
    let t = T0;
    let n = 0;

    /** An act the test policy escalates (FINANCIAL), escalated by the Gate: a PENDING row in the store. */
    async function escalated(
      ttlMs = 30 * MIN,
    ): Promise<{ act: AgentCandidateAct; scope: { candidate_act_id: string; binding_digest: string; expires_at: number } }> {
      const act = makeAct({
        id: `pay-${n++}`,
        tool: 'payout_create',
        consequence_class: 'FINANCIAL',
        args: { amount: '5.00' },
        policy_state: await gate.policyState(),
        now: t,
        ttlMs,
      });
      expect((await gate.authorize(act)).status).toBe('escalated');
      const row = await store.escalations.get(act.candidate_act_id);
      expect(row?.binding_digest).toBe(actBindingDigest(act, SINK));
      return { act, scope: { candidate_act_id: row!.candidate_act_id, binding_digest: row!.binding_digest, expires_at: row!.expires_at } };
    }

    beforeEach(async () => {
      t = T0;
      db = await b.fresh();
      store = await db.open({ poolSize: 6 });
      gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, clock: { now: () => t } });
    });
    afterEach(async () => {
      await store.close();
      await db.drop();
    });

    it('stores the digest of the token, never the token; the link opens exactly its act until it expires', async () => {
      const { scope } = await escalated();
      const link = await issueApprovalLink(store.approvalLinks, scope, { now: t });
      expect(isApprovalLinkToken(link.token)).toBe(true);
      expect(link.expires_at).toBe(t + 10 * MIN); // the default: ten minutes
      const row = await store.approvalLinks.get(approvalLinkDigest(link.token));
      expect(row).toEqual({
        link_digest: approvalLinkDigest(link.token),
        candidate_act_id: scope.candidate_act_id,
        binding_digest: scope.binding_digest,
        issued_at: t,
        expires_at: t + 10 * MIN,
        used_at: null,
        used_by: null,
      });
      expect(Object.values(row!)).not.toContain(link.token);
      expect(await store.approvalLinks.get(link.token)).toBeUndefined();
      expect(await readApprovalLink(store.approvalLinks, link.token, t + 1)).toEqual({ state: 'open', link: row });
      expect((await readApprovalLink(store.approvalLinks, link.token, t + 10 * MIN)).state).toBe('expired');
      expect(approvalLinkUrl('http://127.0.0.1:8932/', link.token)).toBe(`http://127.0.0.1:8932/act/${link.token}`);
      expect(approvalLinkUrl('https://gate.example/ui', link.token)).toBe(`https://gate.example/ui/act/${link.token}`);
    });

    it('a link never outlives its escalation, and a configured lifetime is honoured', async () => {
      const short = await escalated(3 * MIN);
      expect((await issueApprovalLink(store.approvalLinks, short.scope, { now: t })).expires_at).toBe(short.scope.expires_at);
      const long = await escalated();
      expect((await issueApprovalLink(store.approvalLinks, long.scope, { now: t, ttlMs: 2 * MIN })).expires_at).toBe(t + 2 * MIN);
    });

    it('is spent once: the second use, a use for another act or binding, and a use after expiry spend nothing', async () => {
      const a = await escalated();
      const other = await escalated();
      const link = await issueApprovalLink(store.approvalLinks, a.scope, { now: t });
      const digest = approvalLinkDigest(link.token);
      // Another act's scope, or this act under another binding: nothing is spent.
      const foreign = { candidate_act_id: other.scope.candidate_act_id, binding_digest: other.scope.binding_digest };
      expect(await store.approvalLinks.use(digest, foreign, 'mallory', t + 1)).toBeUndefined();
      expect(
        await store.approvalLinks.use(digest, { ...a.scope, binding_digest: other.scope.binding_digest }, 'mallory', t + 1),
      ).toBeUndefined();
      expect((await readApprovalLink(store.approvalLinks, link.token, t + 1)).state).toBe('open');
      const spent = await store.approvalLinks.use(digest, a.scope, 'alice', t + 2);
      expect(spent).toMatchObject({ used_at: t + 2, used_by: 'alice' });
      expect(await store.approvalLinks.use(digest, a.scope, 'alice', t + 3)).toBeUndefined();
      expect(await readApprovalLink(store.approvalLinks, link.token, t + 3)).toMatchObject({ state: 'used', link: { used_by: 'alice' } });
      // Expired: nothing is spent, however it is asked.
      const late = await issueApprovalLink(store.approvalLinks, other.scope, { now: t });
      expect(await store.approvalLinks.use(approvalLinkDigest(late.token), other.scope, 'alice', late.expires_at)).toBeUndefined();
      expect(await store.approvalLinks.get(approvalLinkDigest(late.token))).toMatchObject({ used_at: null });
    });

    it('of many concurrent decisions through one link, exactly one spends it', async () => {
      const { scope } = await escalated();
      const link = await issueApprovalLink(store.approvalLinks, scope, { now: t });
      const digest = approvalLinkDigest(link.token);
      // Opened one after the other: two SQLite opens in one thread would wait on each other's migration lock.
      const others = [await db.open({ poolSize: 2 }), await db.open({ poolSize: 2 })];
      try {
        const ports = [store, ...others].map((s) => s.approvalLinks);
        const uses = await Promise.all(Array.from({ length: 9 }, (_, i) => ports[i % 3]!.use(digest, scope, `p${i}`, t + 1)));
        expect(uses.filter((u) => u !== undefined)).toHaveLength(1);
      } finally {
        await Promise.all(others.map((s) => s.close()));
      }
    });

    it('a malformed or unknown token opens nothing; purge drops links expired past the retention', async () => {
      const { scope } = await escalated();
      expect(await readApprovalLink(store.approvalLinks, 'not-a-token', t)).toEqual({ state: 'unknown' });
      expect(await readApprovalLink(store.approvalLinks, 'A'.repeat(43), t)).toEqual({ state: 'unknown' });
      const old = await issueApprovalLink(store.approvalLinks, scope, { now: t, ttlMs: MIN });
      const fresh = await issueApprovalLink(store.approvalLinks, scope, { now: t + 20 * MIN, ttlMs: 5 * MIN });
      expect(await store.approvalLinks.purge(t + 30 * MIN, 10 * MIN)).toBe(1);
      expect(await store.approvalLinks.get(approvalLinkDigest(old.token))).toBeUndefined();
      expect(await store.approvalLinks.get(approvalLinkDigest(fresh.token))).toBeDefined();
    });
  });
}
