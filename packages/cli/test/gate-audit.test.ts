/**
 * `vrp gate audit verify|export|anchor` on a real SQLite gate store written by a Gate: exit 0 on
 * an intact chain, exit 1 naming the first bad entry after an edit, a JSONL stream from export,
 * checkpoints counted and anchored to an append-only file.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateJwkFromSeed, publicJwkOf } from '@vrpkit/core';
import { digestArguments, Gate, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'vrpkit-cli-gate-audit-'));
const file = join(dir, 'gate.db');
const privateJwk = ed25519PrivateJwkFromSeed(new Uint8Array(32).fill(9));
const jwks = join(dir, 'jwks.json');

/** A store written by a Gate (its key `cli-key`, checkpoints at its default interval): `acts` dispatched reads, five entries each. */
async function writeStore(path: string, acts: number): Promise<void> {
  const store = await openSqliteStore(path);
  const gate = new Gate({
    store,
    policy: loadPolicy({ version: 1, policy_id: 'cli-audit', hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }] }),
    sinkId: 'cli-sink',
    signingKey: { privateJwk, kid: 'cli-key' },
  });
  const policy_state = await gate.policyState();
  for (let i = 0; i < acts; i++) {
    const args = { q: `query ${i}` };
    const now = Date.now();
    const act = {
      version: '1.0',
      object_type: 'agent_candidate_act',
      candidate_act_id: `cli-act-${i}`,
      act_type: 'TOOL_CALL',
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + 600_000).toISOString(),
      initiating_principal: { principal_id: 'org-1' },
      agent: { agent_id: 'agent-1', model_id: 'm', delegation_depth: 0 },
      tool: { tool_id: 'search', function_id: 'search', tool_protocol: 'LOCAL_FUNCTION' },
      purpose: { purpose_id: 'user-turn' },
      arguments_digest: digestArguments(args),
      consequence_class: 'INFORMATIONAL',
      policy_state,
      freshness: { nonce: 'C0FFEE11DEADBEEF', session_id: 's' },
      finality_sink: { sink_id: 'cli-sink', sink_type: 'TOOL_DISPATCH' },
      instruction_provenance: { source_type: 'user' },
    } as const;
    expect((await gate.dispatch(act, args, async () => 'ok')).invoked).toBe(true);
  }
  await gate.close();
}

beforeAll(async () => {
  await writeStore(file, 3);
  writeFileSync(jwks, JSON.stringify({ keys: [publicJwkOf(privateJwk, 'cli-key')] }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('vrp gate audit', () => {
  it('verify passes an intact chain against the trusted key', async () => {
    const r = await runVrpInProcess(['gate', 'audit', 'verify', '--store', file, '--jwks', jwks, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, entries: 15, head: { seq: 15 }, checkpoints: 1, last_checkpoint_seq: 15 });
  });

  it('export streams every entry as one JSON line, digests only; --since in the future streams none', async () => {
    const r = await runVrpInProcess(['gate', 'audit', 'export', '--store', file, '--format', 'jsonl']);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => e.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(r.stdout).not.toContain('query 1');
    expect(r.stderr).toContain('exported 15 entries');
    const none = await runVrpInProcess(['gate', 'audit', 'export', '--store', file, '--since', '2999-01-01T00:00:00Z']);
    expect(none.stdout).toBe('');
    const bad = await runVrpInProcess(['gate', 'audit', 'export', '--store', file, '--format', 'csv']);
    expect(bad.code).toBe(64);
  });

  it('verify exits 1 naming the first edited entry', async () => {
    const db = new Database(file);
    db.exec("UPDATE gate_audit SET actor = 'mallory' WHERE seq = 9");
    db.close();
    const r = await runVrpInProcess(['gate', 'audit', 'verify', '--store', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[audit_edited]: entry 9 edited');
    const j = await runVrpInProcess(['gate', 'audit', 'verify', '--store', file, '--json']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, seq: 9, problem: 'edited' });
  });
});

/**
 * Issue 36 defect 3: with write access to the store, deleting every `gate_audit_checkpoint` row
 * passed verify ("ok: true … checkpoints: 0"), and so did cutting off the newest entries with
 * their checkpoint and moving the head back.
 */
describe('vrp gate audit: checkpoints counted, anchored outside the store', () => {
  const base = join(dir, 'long.db');
  const copy = (name: string) => {
    const to = join(dir, name);
    copyFileSync(base, to);
    return to;
  };
  const sql = (path: string, text: string) => {
    const db = new Database(path);
    db.exec(text);
    db.close();
  };
  beforeAll(async () => {
    await writeStore(base, 25); // 125 entries: a checkpoint at the act that reaches 100, and the head at close
  });

  it('verify fails when the checkpoint rows are deleted: a chain of 125 entries has one between 100 and 125', async () => {
    const path = copy('no-checkpoints.db');
    expect((await runVrpInProcess(['gate', 'audit', 'verify', '--store', path, '--jwks', jwks])).code).toBe(0);
    sql(path, 'DELETE FROM gate_audit_checkpoint');
    const r = await runVrpInProcess(['gate', 'audit', 'verify', '--store', path, '--jwks', jwks]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[audit_missing_checkpoint]: entry 100 missing_checkpoint');
  });

  it('anchor appends the signed checkpoints to a file; verify --anchor fails on a chain truncated with its checkpoints', async () => {
    const path = copy('truncated.db');
    const sink = join(dir, 'anchors.jsonl');
    const first = await runVrpInProcess(['gate', 'audit', 'anchor', '--store', path, '--to', sink, '--jwks', jwks]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('anchored 2 checkpoints');
    const lines = readFileSync(sink, 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual([expect.any(Number), 125]);
    expect((await runVrpInProcess(['gate', 'audit', 'anchor', '--store', path, '--to', sink, '--json'])).stdout).toContain('"appended": 0');
    // Cut back to the first checkpoint: entries, their checkpoint and the head.
    const keep = JSON.parse(lines[0]!).seq as number;
    sql(
      path,
      `DELETE FROM gate_audit WHERE seq > ${keep}; DELETE FROM gate_audit_checkpoint WHERE seq > ${keep};
       UPDATE gate_audit_head SET seq = ${keep}, hash = (SELECT hash FROM gate_audit WHERE seq = ${keep})`,
    );
    expect((await runVrpInProcess(['gate', 'audit', 'verify', '--store', path, '--jwks', jwks])).code).toBe(0);
    const r = await runVrpInProcess(['gate', 'audit', 'verify', '--store', path, '--jwks', jwks, '--anchor', sink]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error[audit_truncated]: entry ${keep + 1} truncated`);
    expect(r.stderr).toContain('an anchored checkpoint signed entry 125');
  });

  it('an anchor file that is not anchors is refused with its line', async () => {
    const sink = join(dir, 'not-anchors.jsonl');
    writeFileSync(sink, '{"seq": 1}\n');
    const r = await runVrpInProcess(['gate', 'audit', 'verify', '--store', base, '--anchor', sink]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[bad_anchor]');
    expect(r.stderr).toContain('line 1 is not a signed checkpoint');
  });
});
