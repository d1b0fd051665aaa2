/**
 * The audit log port's contract suite, on a real SQLite file and a real PostgreSQL schema: the decisions a Gate and
 * the proxy's pins make form one hash chain with signed checkpoints; `verifyAuditChain` passes
 * an intact chain and names the first bad entry of an edited, deleted, reordered or truncated
 * one; concurrent writer processes on one SQLite file or one PostgreSQL keep one chain.
 */
import { join } from 'node:path';
import {
  type AuditEntry,
  anchorCheckpoints,
  auditEntryHash,
  exportAudit,
  Gate,
  type GateStore,
  loadPolicy,
  readAnchors,
  verifyAuditChain,
} from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';
import { spawnProc } from './procs/spawn.js';
import { type StoreBackend, type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('audit');
const backends = storeBackends('the audit log port', dir, 'gate_audit');
/** Every database a test made, dropped after the file. */
const made: StoreDatabase[] = [];
const fresh = async (b: StoreBackend) => {
  const db = await b.fresh();
  made.push(db);
  return db;
};
/** A raw argument value that must never reach the log (only its digest may). */
const SECRET = 'guest-name-Maria-Alves';

describe('audit entry hash', () => {
  it('is SHA-256 over the JCS form of the entry without its hash, null members omitted', async () => {
    const { canonicalSha256Base64url } = await import('@vrpkit/core');
    const full = {
      seq: 12,
      at: 1_800_000_000_123,
      kind: 'deny' as const,
      act_id: 'act "quoted" \\ \u2028 é 😀',
      tool: 'mail\u0001send',
      server: 'https://mcp.example/ü',
      digest: 'abc_-',
      code: 'EF_005',
      actor: 'host\n1',
      prev_hash: 'A'.repeat(43),
    };
    expect(auditEntryHash(full)).toBe(canonicalSha256Base64url(full));
    const sparse = { ...full, act_id: null, server: null, code: null, actor: null };
    expect(auditEntryHash(sparse)).toBe(
      canonicalSha256Base64url({ seq: 12, at: full.at, kind: 'deny', tool: full.tool, digest: full.digest, prev_hash: full.prev_hash }),
    );
  });
});

afterAll(async () => {
  removeTmpDirs();
  for (const db of made) await db.drop();
});

/**
 * Make a chain: two dispatched reads (allow, issued, consumed, invoked, result each), a
 * replayed one (deny EF_005), live arguments that differ (deny EF_SCOPE_MISMATCH), an
 * escalated send that a person approves, a pin and an unpin. Checkpoints every 4 entries and on close.
 */
async function writeChain(store: GateStore): Promise<void> {
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, auditCheckpointEvery: 4 });
  const policy_state = await gate.policyState();
  const args = { q: SECRET };
  for (const id of ['read-1', 'read-2']) {
    const r = await gate.dispatch(makeAct({ id, args, policy_state }), args, async () => 'ok');
    expect(r.invoked).toBe(true);
  }
  expect((await gate.dispatch(makeAct({ id: 'read-1', args, policy_state }), args, async () => 'again')).invoked).toBe(false);
  const read3 = makeAct({ id: 'read-3', args, policy_state });
  expect((await gate.authorize(read3)).status).toBe('issued');
  expect((await gate.enforce(read3, { q: 'other' })).code).toBe('EF_SCOPE_MISMATCH');
  const send = makeAct({ id: 'send-1', tool: 'mail_send', consequence_class: 'COMMUNICATION', args, policy_state });
  expect((await gate.authorize(send)).status).toBe('escalated');
  expect((await gate.approve('send-1', 'alice')).status).toBe('issued');
  const pins = store.proxy;
  await pins.recordSeen([{ server_id: 'srv', tool_name: 'note_write', digest: 'def-1', definition: '{}', server_info: null }], Date.now());
  expect((await pins.pin('srv', 'note_write', { by: 'bob', now: Date.now() })).pinned).toBe(true);
  expect(await pins.unpin('srv', 'note_write', { by: 'bob' })).toBe(true);
  // The proxy's own deny of an unpinned tool is a decision; what observe mode would have denied is not.
  const observation = { server_id: 'srv', tool_name: 'note_write', consequence_class: 'PERSISTENT_STATE_CHANGE', arguments_digest: 'd' };
  await pins.recordObservation({
    ...observation,
    recorded_at: Date.now(),
    mode: 'enforce',
    code: 'EF_TOOL_NOT_PINNED',
    candidate_act_id: 'mcp-1',
  });
  await pins.recordObservation({
    ...observation,
    recorded_at: Date.now(),
    mode: 'observe',
    code: 'EF_TOOL_NOT_PINNED',
    candidate_act_id: 'mcp-2',
  });
  await gate.close();
}

/**
 * The SQL of a forger with write access to the store: entry `from` rewritten (another code), every
 * later entry relinked and rehashed, the head moved to the new last hash. Checkpoints are left as
 * they are (they cannot be re-signed without the gate key).
 */
async function rewriteFrom(db: StoreDatabase, from: number): Promise<string> {
  const store = await db.open();
  const log = await entries(store);
  await store.close();
  let prev = log[from - 2]?.hash ?? 'A'.repeat(43);
  const updates: string[] = [];
  for (const e of log.slice(from - 1)) {
    const body = { ...e, code: e.seq === from ? 'EF_FORGED' : e.code, prev_hash: prev };
    const { hash: _old, ...rest } = body;
    prev = auditEntryHash(rest);
    updates.push(
      `UPDATE gate_audit SET code = ${body.code === null ? 'NULL' : `'${body.code}'`}, prev_hash = '${body.prev_hash}', hash = '${prev}' WHERE seq = ${e.seq}`,
    );
  }
  updates.push(`UPDATE gate_audit_head SET hash = '${prev}'`);
  return updates.join('; ');
}

async function entries(store: GateStore): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of exportAudit(store.audit, { pageSize: 5 })) out.push(e);
  return out;
}

for (const b of backends) {
  describe.skipIf(b.skip)(`audit log on ${b.name}`, () => {
    it('records every decision in one chain that verifies, with signed checkpoints and digests only', async () => {
      const db = await fresh(b);
      await writeChain(await db.open());
      const store = await db.open();
      try {
        const log = await entries(store);
        expect(log.map((e) => e.kind)).toEqual([
          ...['allow', 'issued', 'consumed', 'invoked', 'result'],
          ...['allow', 'issued', 'consumed', 'invoked', 'result'],
          'deny',
          'allow',
          'issued',
          'deny',
          'escalate',
          'approve',
          'allow',
          'issued',
          'pin',
          'unpin',
          'deny',
        ]);
        expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
        expect(log.filter((e) => e.kind === 'deny').map((e) => e.code)).toEqual(['EF_005', 'EF_SCOPE_MISMATCH', 'EF_TOOL_NOT_PINNED']);
        expect(log.find((e) => e.kind === 'approve')).toMatchObject({ act_id: 'send-1', tool: 'mail_send', actor: 'alice' });
        expect(log.find((e) => e.kind === 'pin')).toMatchObject({ server: 'srv', tool: 'note_write', digest: 'def-1', actor: 'bob' });
        expect(JSON.stringify(log)).not.toContain(SECRET);
        const v = await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK], pageSize: 3 });
        expect(v).toMatchObject({ ok: true, entries: log.length, head: { seq: log.length } });
        // One per 4 entries (an append that crosses a boundary signs its last entry: a dispatch's allow, issued, consumed, invoked at 6–9 signs 9), and the head on close.
        expect((await store.audit.checkpoints()).map((c) => c.seq)).toEqual([4, 9, 13, 16, 20, 21]);
        // A key that is not trusted fails closed.
        const other = { ...PUBLIC_JWK, x: 'A'.repeat(43) };
        expect(await verifyAuditChain(store.audit, { trustedKeys: [other] })).toMatchObject({
          ok: false,
          seq: 4,
          problem: 'bad_checkpoint',
        });
      } finally {
        await store.close();
      }
    });

    const tampering: { name: string; sql: string; expected: { seq: number; problem: string } }[] = [
      { name: 'an edited entry', sql: "UPDATE gate_audit SET code = 'EF_FORGED' WHERE seq = 7", expected: { seq: 7, problem: 'edited' } },
      { name: 'a deleted entry', sql: 'DELETE FROM gate_audit WHERE seq = 6', expected: { seq: 6, problem: 'deleted' } },
      {
        name: 'two swapped entries',
        sql: 'UPDATE gate_audit SET seq = 1000 WHERE seq = 9; UPDATE gate_audit SET seq = 9 WHERE seq = 10; UPDATE gate_audit SET seq = 10 WHERE seq = 1000',
        expected: { seq: 9, problem: 'reordered' },
      },
      {
        name: 'a truncated tail with its head moved back',
        sql: 'DELETE FROM gate_audit WHERE seq > 15; UPDATE gate_audit_head SET seq = 15, hash = (SELECT hash FROM gate_audit WHERE seq = 15)',
        expected: { seq: 16, problem: 'truncated' },
      },
      {
        name: 'a forged checkpoint signature',
        sql: "UPDATE gate_audit_checkpoint SET jws = jws || 'x' WHERE seq = 9",
        expected: { seq: 9, problem: 'bad_checkpoint' },
      },
    ];
    for (const t of tampering) {
      it(`names the first bad entry of ${t.name}`, async () => {
        const db = await fresh(b);
        await writeChain(await db.open());
        await db.exec(t.sql);
        const store = await db.open();
        try {
          expect(await verifyAuditChain(store.audit, { pageSize: 4 })).toMatchObject({ ok: false, ...t.expected });
        } finally {
          await store.close();
        }
      });
    }

    it('catches an entry rewritten with every later hash and the head recomputed, at the next signed checkpoint', async () => {
      const db = await fresh(b);
      await writeChain(await db.open());
      // The forger recomputes the chain from entry 5 on, but cannot re-sign the checkpoints.
      await db.exec(await rewriteFrom(db, 5));
      const again = await db.open();
      try {
        expect(await verifyAuditChain(again.audit)).toMatchObject({ ok: false, seq: 9, problem: 'edited' });
      } finally {
        await again.close();
      }
    });

    // Issue 36 defect 3: rewriting entry 4, recomputing every later hash and the head, then
    // deleting every checkpoint row passed verify ("checkpoints: 0"), also with the trusted key.
    it('a rewrite with every checkpoint row deleted fails at the first window of checkpointEvery entries left unsigned', async () => {
      const db = await fresh(b);
      await writeChain(await db.open());
      await db.exec(`${await rewriteFrom(db, 4)}; DELETE FROM gate_audit_checkpoint`);
      const store = await db.open();
      try {
        expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK], checkpointEvery: 4 })).toMatchObject({
          ok: false,
          seq: 4,
          problem: 'missing_checkpoint',
        });
        // Anchoring refuses such a chain: nothing is frozen in as the truth.
        const sink = join(dir, `refused-${b.name}.anchors`);
        expect(await anchorCheckpoints(store.audit, sink, { checkpointEvery: 4 })).toMatchObject({
          ok: false,
          problem: 'missing_checkpoint',
        });
        expect(readAnchors(sink)).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('a window a writer without the gate key reached is signed by the next gate that starts', async () => {
      const db = await fresh(b);
      const store = await db.open();
      // `vrp gate approve` and `vrp gate tools pin` append without the key: no checkpoint at 4 … 5.
      await store.audit.append(
        [1, 2, 3, 4, 5].map((i) => ({ kind: 'pin' as const, tool: `t${i}`, actor: 'cli' })),
        Date.now(),
      );
      expect(await verifyAuditChain(store.audit, { checkpointEvery: 4 })).toMatchObject({
        ok: false,
        seq: 4,
        problem: 'missing_checkpoint',
      });
      const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, auditCheckpointEvery: 4 });
      await gate.policyState();
      expect(await verifyAuditChain(store.audit, { checkpointEvery: 4, trustedKeys: [PUBLIC_JWK] })).toMatchObject({
        ok: true,
        entries: 5,
      });
      await gate.close();
    });

    it('anchors each signed checkpoint once; truncating the newest entries with their checkpoints fails only against the anchors', async () => {
      const db = await fresh(b);
      await writeChain(await db.open());
      const sink = join(dir, `anchors-${b.name}-${Date.now()}.jsonl`);
      let store = await db.open();
      const signed = (await store.audit.checkpoints()).map((c) => Number(c.seq));
      expect(await anchorCheckpoints(store.audit, sink, { checkpointEvery: 4 })).toEqual({
        ok: true,
        appended: signed.length,
        last_anchored_seq: signed[signed.length - 1],
      });
      // A second run appends nothing new; the file holds each checkpoint once, in chain order.
      expect(await anchorCheckpoints(store.audit, sink, { checkpointEvery: 4 })).toMatchObject({ ok: true, appended: 0 });
      expect(readAnchors(sink).map((a) => a.seq)).toEqual(signed);
      await store.close();

      // Whoever holds the store cuts the chain back to its second checkpoint, checkpoints and head included.
      const keep = signed[1]!;
      await db.exec(
        `DELETE FROM gate_audit WHERE seq > ${keep}; DELETE FROM gate_audit_checkpoint WHERE seq > ${keep};
         UPDATE gate_audit_head SET seq = ${keep}, hash = (SELECT hash FROM gate_audit WHERE seq = ${keep})`,
      );
      store = await db.open();
      try {
        // The store alone cannot tell: what is left is a valid, signed chain.
        expect(await verifyAuditChain(store.audit, { checkpointEvery: 4, trustedKeys: [PUBLIC_JWK] })).toMatchObject({
          ok: true,
          entries: keep,
        });
        expect(
          await verifyAuditChain(store.audit, { checkpointEvery: 4, trustedKeys: [PUBLIC_JWK], anchors: readAnchors(sink) }),
        ).toMatchObject({ ok: false, seq: keep + 1, problem: 'truncated' });
      } finally {
        await store.close();
      }
    });

    it('an anchored entry rewritten with the chain, the head and the store checkpoints redone fails against the anchors', async () => {
      const db = await fresh(b);
      await writeChain(await db.open());
      const sink = join(dir, `anchors-rewrite-${b.name}-${Date.now()}.jsonl`);
      const store = await db.open();
      expect(await anchorCheckpoints(store.audit, sink, { checkpointEvery: 4 })).toMatchObject({ ok: true });
      await store.close();
      const first = readAnchors(sink)[0]!.seq;
      // No checkpoint required by count (checkpointEvery 0): only the anchor stands in the way.
      await db.exec(`${await rewriteFrom(db, first)}; DELETE FROM gate_audit_checkpoint`);
      const again = await db.open();
      try {
        expect(await verifyAuditChain(again.audit, { checkpointEvery: 0 })).toMatchObject({ ok: true });
        expect(await verifyAuditChain(again.audit, { checkpointEvery: 0, anchors: readAnchors(sink) })).toMatchObject({
          ok: false,
          seq: first,
          problem: 'edited',
        });
      } finally {
        await again.close();
      }
    });
  });
}

for (const b of backends) {
  describe.skipIf(b.skip)(`audit log with concurrent writers on one ${b.name} store`, () => {
    it('keeps one valid chain when 4 processes decide at once', async () => {
      const db = await fresh(b);
      await (await db.open()).close(); // migrate once, so the writers race on decisions, not on the schema
      const count = b.name === 'postgres' ? 12 : 6;
      const writers = [0, 1, 2, 3].map((i) => spawnProc('audit-writer', { store: db.config, instance: `writer-${i}`, count }));
      try {
        await Promise.all(writers.map((w) => w.waitFor('READY')));
        for (const w of writers) w.proc.stdin!.write('GO\n');
        const done = await Promise.all(writers.map((w) => w.waitFor('DONE')));
        expect(done).toEqual(writers.map(() => `DONE ${count}`));
      } finally {
        for (const w of writers) w.proc.kill();
      }
      const store = await db.open();
      try {
        const log = await entries(store);
        expect(log).toHaveLength(4 * count * 5);
        expect(new Set(log.map((e) => e.actor).filter((a) => a?.startsWith('writer-')))).toEqual(
          new Set(['writer-0', 'writer-1', 'writer-2', 'writer-3']),
        );
        expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({ ok: true, entries: 4 * count * 5 });
      } finally {
        await store.close();
      }
    }, 120_000);
  });
}
