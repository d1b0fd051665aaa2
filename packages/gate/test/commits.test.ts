/**
 * Durable commits per dispatched act, counted on the SQLite file itself: every commit of a WAL
 * database appends a commit frame to the `-wal` file (SQLite file format, WAL: a frame whose
 * "size of the database in pages after the commit" is nonzero ends a transaction). An allowed
 * act takes ONE commit before invoke (its consume, journaled INVOKED, with the issuance when the
 * policy issues from a hot envelope) and one after it (the outcome), which a gate may defer
 * past dispatch's return. The crash windows around these commits are pinned by crash.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Gate, type GateStore, loadPolicy, openSqliteStore, verifyAuditChain } from '@vrpkit/gate';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAct, PUBLIC_JWK, removeTmpDirs, SIGNING_KEY, SINK, TEST_POLICY, tmpDir } from './procs/common.js';

/** The commit frames of the current WAL generation (frames carrying the header's salts). */
function walCommits(db: string): number {
  const wal = readFileSync(`${db}-wal`);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits += 1;
  }
  return commits;
}

let file: string;
let store: GateStore;

// Each test closes its gate, which closes the store. Checkpoints stay inline: a background one
// lets the next commit start a new WAL generation between two counts.
beforeEach(async () => {
  file = join(tmpDir('commits'), 'gate.db');
  store = await openSqliteStore(file, { checkpoints: 'inline' });
});
afterAll(removeTmpDirs);

async function openGate(deferOutcome = false) {
  const gate = new Gate({ store, policy: loadPolicy(TEST_POLICY), sinkId: SINK, signingKey: SIGNING_KEY, deferOutcome });
  // Start-up (policy digest, recovery) commits on its own; count from after it.
  return { gate, policy_state: await gate.policyState() };
}

describe('durable commits per allowed act (SQLite)', () => {
  it('an act the policy issues from a hot envelope: one commit before invoke (journal INVOKED), one for the outcome', async () => {
    const { gate, policy_state } = await openGate();
    const args = { q: 'porto' };
    const act = makeAct({ id: 'hot-1', tool: 'side_effect', args, policy_state });
    const before = walCommits(file);
    let atInvoke: { commits: number; journal?: string; authority?: string } | undefined;
    const r = await gate.dispatch(act, args, async () => {
      atInvoke = {
        commits: walCommits(file) - before,
        journal: (await store.journal.get('hot-1'))?.state,
        authority: (await store.ledger.getAuthority('hot-1'))?.state,
      };
      return 'done';
    });
    expect(r).toMatchObject({ invoked: true, result: 'done', decision: { allow: true } });
    expect(atInvoke).toEqual({ commits: 1, journal: 'INVOKED', authority: 'CONSUMED' });
    expect(walCommits(file) - before).toBe(2);
    expect((await store.journal.get('hot-1'))?.state).toBe('EFFECTUATED');
    // The one commit holds the whole decision: evidence, authority, and its chained audit entries.
    const authority = await store.ledger.getAuthority('hot-1');
    expect((await store.ledger.getEvidence(authority!.evidence_id))?.decision).toBe('ISSUED');
    const kinds = (await store.audit.read({ limit: 100 })).map((e) => e.kind);
    expect(kinds).toEqual(['allow', 'issued', 'consumed', 'invoked', 'result']);
    expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({ ok: true, entries: 5 });
    await gate.close();
  });

  it('an act with authority issued before (the general path): one commit before invoke too', async () => {
    const { gate, policy_state } = await openGate();
    const args = { q: 'faro' };
    const act = makeAct({ id: 'pre-1', args, policy_state });
    expect((await gate.authorize(act)).status).toBe('issued');
    const before = walCommits(file);
    let atInvoke = -1;
    const r = await gate.dispatch(act, args, async () => {
      atInvoke = walCommits(file) - before;
      return 1;
    });
    expect(r.invoked).toBe(true);
    expect(atInvoke).toBe(1);
    expect(walCommits(file) - before).toBe(2);
    await gate.close();
  });

  it('a refused consume after the issuance commits nothing more and never invokes', async () => {
    const { gate, policy_state } = await openGate();
    const args = { q: 'braga' };
    const act = makeAct({ id: 'stale-1', args, policy_state });
    // The act was built under epochs that moved on: nothing is issued, nothing consumed.
    await gate.bumpEpoch('authority_epoch');
    let invoked = false;
    const r = await gate.dispatch(act, args, async () => {
      invoked = true;
    });
    expect(r.decision).toMatchObject({ allow: false, code: 'EF_EPOCH_STALE' });
    expect(invoked).toBe(false);
    expect(await store.ledger.getAuthority('stale-1')).toBeUndefined();
    expect(await store.journal.get('stale-1')).toBeUndefined();
    await gate.close();
  });

  it('deferOutcome: dispatch returns before the outcome commit; `settled` resolves once it is written, close() waits for it', async () => {
    const { gate, policy_state } = await openGate(true);
    const args = { q: 'evora' };
    const before = walCommits(file);
    const r = await gate.dispatch(makeAct({ id: 'late-1', args, policy_state }), args, async () => 'ok');
    expect(r).toMatchObject({ invoked: true, result: 'ok' });
    expect(walCommits(file) - before).toBe(1);
    expect((await store.journal.get('late-1'))?.state).toBe('INVOKED');
    await r.settled;
    expect(walCommits(file) - before).toBe(2);
    expect((await store.journal.get('late-1'))?.state).toBe('EFFECTUATED');
    const again = await gate.dispatch(makeAct({ id: 'late-2', args, policy_state }), args, async () => 'ok');
    expect(again.invoked).toBe(true);
    await gate.close();
    const reopened = await openSqliteStore(file);
    try {
      expect((await reopened.journal.get('late-2'))?.state).toBe('EFFECTUATED');
    } finally {
      await reopened.close();
    }
  });
});
