/**
 * The audit log's public verbs over its port (audit/port.ts): verify the chain (naming the
 * first bad entry and why), export entries as a stream. The store appends every decision it
 * writes in the decision's own transaction; `AuditLog.append` is for decisions made elsewhere.
 */
import type { Ed25519PublicJwk } from '@vrpkit/core';
import { type AuditCheckpoint, type AuditEntry, auditEntryHash, checkCheckpoint } from './chain.js';
import type { AuditHead, AuditLog } from './port.js';
import { AUDIT_GENESIS } from './schema.js';

/**
 * Why an entry is bad:
 * - `edited`: its content no longer hashes to its hash, or it was rewritten with a fresh hash
 *   (the next entry, the head or a signed checkpoint no longer matches it);
 * - `deleted`: its seq is missing from the middle of the chain;
 * - `reordered`: it hashes correctly only under another seq (moved);
 * - `truncated`: the chain ends before the head row or a signed checkpoint says it does;
 * - `bad_checkpoint`: the checkpoint at this seq is not signed by the gate key (or by a trusted one).
 */
export type AuditProblem = 'edited' | 'deleted' | 'reordered' | 'truncated' | 'bad_checkpoint';

export type AuditVerifyResult =
  | { ok: true; entries: number; head: AuditHead; checkpoints: number; last_checkpoint_seq: number | null }
  | { ok: false; seq: number; problem: AuditProblem; reason: string; entries_checked: number };

export interface VerifyAuditOptions {
  /** Only checkpoints signed by one of these keys (kid and key) count as valid. Default: the key recorded with each checkpoint. */
  trustedKeys?: readonly Ed25519PublicJwk[];
  /** Entries read per query. Default 1000. */
  pageSize?: number;
}

/** How far from its position an entry is looked for when its hash fails (classifies a move as `reordered`). */
const REORDER_WINDOW = 64;

/** Walk the chain from seq 1 and report the first bad entry (fails closed: any doubt is a failure). */
export async function verifyAuditChain(log: AuditLog, opts: VerifyAuditOptions = {}): Promise<AuditVerifyResult> {
  const pageSize = opts.pageSize ?? 1000;
  const head = await log.head();
  const checkpoints = new Map<number, AuditCheckpoint>((await log.checkpoints()).map((c) => [Number(c.seq), c]));
  let expected = 1;
  let prev = AUDIT_GENESIS;
  let checked = 0;
  const fail = (seq: number, problem: AuditProblem, reason: string): AuditVerifyResult => ({
    ok: false,
    seq,
    problem,
    reason,
    entries_checked: checked,
  });
  for (;;) {
    const page = await log.read({ afterSeq: expected - 1, limit: pageSize });
    if (page.length === 0) break;
    for (const e of page) {
      if (e.seq !== expected) return fail(expected, 'deleted', `entry ${expected} is missing (the chain continues at ${e.seq})`);
      const { hash, ...body } = e;
      if (auditEntryHash(body) !== hash) {
        const was = originalSeq(e);
        return was === undefined
          ? fail(e.seq, 'edited', `entry ${e.seq} does not hash to its recorded hash`)
          : fail(e.seq, 'reordered', `entry at seq ${e.seq} was written as seq ${was}`);
      }
      if (e.prev_hash !== prev) {
        // This entry is intact but does not follow its predecessor: the predecessor was rewritten (and rehashed).
        const bad = Math.max(1, e.seq - 1);
        return fail(bad, 'edited', `entry ${bad} was rewritten: entry ${e.seq} links to another hash`);
      }
      const cp = checkpoints.get(e.seq);
      if (cp) {
        const why = checkCheckpoint(cp, opts.trustedKeys);
        if (why) return fail(e.seq, 'bad_checkpoint', `checkpoint at ${e.seq}: ${why}`);
        if (cp.hash !== e.hash) return fail(e.seq, 'edited', `entry ${e.seq} differs from the signed checkpoint at ${e.seq}`);
      }
      prev = e.hash;
      expected += 1;
      checked += 1;
    }
  }
  const last = expected - 1;
  if (head.seq > last) return fail(last + 1, 'truncated', `the chain ends at ${last} but its head is at ${head.seq}`);
  const beyond = [...checkpoints.keys()].filter((s) => s > last).sort((a, b) => a - b)[0];
  if (beyond !== undefined) return fail(last + 1, 'truncated', `the chain ends at ${last} but a checkpoint signed entry ${beyond}`);
  if (head.seq < last) return fail(head.seq + 1, 'edited', `entry ${head.seq + 1} was not appended through the head (head at ${head.seq})`);
  if (head.hash !== prev) return fail(last, 'edited', `entry ${last} differs from the head`);
  const signed = [...checkpoints.keys()];
  return {
    ok: true,
    entries: last,
    head,
    checkpoints: signed.length,
    last_checkpoint_seq: signed.length ? Math.max(...signed) : null,
  };
}

/** The seq under which a moved entry hashes correctly, near where it sits now. */
function originalSeq(e: AuditEntry): number | undefined {
  const { hash, ...body } = e;
  for (let d = 1; d <= REORDER_WINDOW; d++) {
    for (const s of [e.seq - d, e.seq + d]) if (s >= 1 && auditEntryHash({ ...body, seq: s }) === hash) return s;
  }
  return undefined;
}

export interface ExportAuditOptions {
  /** Entries at or after this time (epoch ms). */
  since?: number;
  pageSize?: number;
}

/** Stream entries in chain order, one page in memory at a time. */
export async function* exportAudit(log: AuditLog, opts: ExportAuditOptions = {}): AsyncGenerator<AuditEntry> {
  const pageSize = opts.pageSize ?? 1000;
  let after = 0;
  for (;;) {
    const page = await log.read({ afterSeq: after, limit: pageSize, ...(opts.since !== undefined ? { since: opts.since } : {}) });
    if (page.length === 0) return;
    yield* page;
    after = page[page.length - 1]!.seq;
  }
}
