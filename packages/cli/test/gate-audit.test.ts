/**
 * `vrp gate audit verify|export` on a real SQLite gate store written by a Gate: exit 0 on an
 * intact chain, exit 1 naming the first bad entry after an edit, a JSONL stream from export.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

beforeAll(async () => {
  const store = await openSqliteStore(file);
  const gate = new Gate({
    store,
    policy: loadPolicy({ version: 1, policy_id: 'cli-audit', hot_envelopes: [{ name: 'reads', consequence_classes: ['INFORMATIONAL'] }] }),
    sinkId: 'cli-sink',
    signingKey: { privateJwk, kid: 'cli-key' },
  });
  const policy_state = await gate.policyState();
  for (let i = 0; i < 3; i++) {
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
