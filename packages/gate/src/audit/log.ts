/**
 * The audit log's public verbs over its port (audit/port.ts): verify the chain (naming the
 * first bad entry and why), export entries as a stream. The store appends every decision it
 * writes in the decision's own transaction; `AuditLog.append` is for decisions made elsewhere.
 */
import type { Ed25519PublicJwk } from '@vrpkit/core';
import { AUDIT_CHECKPOINT_EVERY, type AuditCheckpoint, type AuditEntry, auditEntryHash, checkCheckpoint } from './chain.js';
import type { AuditHead, AuditLog } from './port.js';
import { AUDIT_GENESIS } from './schema.js';

/**
 * Why an entry is bad:
 * - `edited`: its content no longer hashes to its hash, or it was rewritten with a fresh hash
 *   (the next entry, the head, a signed checkpoint or an anchored one no longer matches it);
 * - `deleted`: its seq is missing from the middle of the chain;
 * - `reordered`: it hashes correctly only under another seq (moved);
 * - `truncated`: the chain ends before the head row, a signed checkpoint or an anchored one says it does;
 * - `bad_checkpoint`: the checkpoint (or anchored checkpoint) at this seq is not signed by the gate key (or by a trusted one);
 * - `missing_checkpoint`: a window of `checkpointEvery` entries the chain reached holds no signed
 *   checkpoint (rows deleted to hide a rewrite: issue 36 defect 3).
 */
export type AuditProblem = 'edited' | 'deleted' | 'reordered' | 'truncated' | 'bad_checkpoint' | 'missing_checkpoint';

export type AuditVerifyResult =
  | { ok: true; entries: number; head: AuditHead; checkpoints: number; last_checkpoint_seq: number | null; anchored: number }
  | { ok: false; seq: number; problem: AuditProblem; reason: string; entries_checked: number };

export interface VerifyAuditOptions {
  /** Only checkpoints signed by one of these keys (kid and key) count as valid. Default: the key recorded with each checkpoint. */
  trustedKeys?: readonly Ed25519PublicJwk[];
  /** Entries read per query. Default 1000. */
  pageSize?: number;
  /**
   * The interval the gates writing this chain sign at (`GateOptions.auditCheckpointEvery`): every
   * window [k·n, (k+1)·n) the chain reached must hold a signed checkpoint (the writers' rule,
   * store/engine.ts `appendEntries`). Default `AUDIT_CHECKPOINT_EVERY`; 0 requires none.
   */
  checkpointEvery?: number;
  /**
   * Signed checkpoints anchored outside the store (`vrp gate audit anchor`, audit/anchor.ts): each
   * must verify and be in the chain as signed, so truncating the newest entries with their
   * checkpoints, or rewriting an anchored entry, fails.
   */
  anchors?: readonly AuditCheckpoint[];
}

type Failure = Extract<AuditVerifyResult, { ok: false }>;

/** How far from its position an entry is looked for when its hash fails (classifies a move as `reordered`). */
const REORDER_WINDOW = 64;

/** Walk the chain from seq 1 and report the first bad entry (fails closed: any doubt is a failure). */
export async function verifyAuditChain(log: AuditLog, opts: VerifyAuditOptions = {}): Promise<AuditVerifyResult> {
  const head = await log.head();
  const stored = await log.checkpoints();
  // The store's checkpoints and the anchored ones: every one is checked against the chain alike.
  const signed = new Map<number, AuditCheckpoint[]>();
  for (const cp of [...stored, ...(opts.anchors ?? [])]) signed.set(Number(cp.seq), [...(signed.get(Number(cp.seq)) ?? []), cp]);
  const walked = await walk(log, signed, opts);
  if ('problem' in walked) return walked;
  const { last, prev } = walked;
  const fail = (seq: number, problem: AuditProblem, reason: string): Failure => ({
    ok: false,
    seq,
    problem,
    reason,
    entries_checked: last,
  });
  if (head.seq > last) return fail(last + 1, 'truncated', `the chain ends at ${last} but its head is at ${head.seq}`);
  const beyond = [...signed.keys()].filter((s) => s > last).sort((a, b) => a - b)[0];
  if (beyond !== undefined) {
    const where = (opts.anchors ?? []).some((a) => Number(a.seq) === beyond) ? 'an anchored checkpoint' : 'a checkpoint';
    return fail(last + 1, 'truncated', `the chain ends at ${last} but ${where} signed entry ${beyond}`);
  }
  if (head.seq < last) return fail(head.seq + 1, 'edited', `entry ${head.seq + 1} was not appended through the head (head at ${head.seq})`);
  if (head.hash !== prev) return fail(last, 'edited', `entry ${last} differs from the head`);
  const missing = missingWindow(last, [...signed.keys()], opts.checkpointEvery ?? AUDIT_CHECKPOINT_EVERY);
  if (missing !== undefined)
    return fail(
      missing.from,
      'missing_checkpoint',
      `no signed checkpoint between entries ${missing.from} and ${missing.to}: a chain of ${last} entries has one every ${missing.every}`,
    );
  const seqs = stored.map((c) => Number(c.seq));
  return {
    ok: true,
    entries: last,
    head,
    checkpoints: seqs.length,
    last_checkpoint_seq: seqs.length ? Math.max(...seqs) : null,
    anchored: opts.anchors?.length ?? 0,
  };
}

/** Every entry in order: its seq, its hash, its link, and the signed checkpoints at it. */
async function walk(
  log: AuditLog,
  signed: ReadonlyMap<number, readonly AuditCheckpoint[]>,
  opts: VerifyAuditOptions,
): Promise<Failure | { last: number; prev: string }> {
  const pageSize = opts.pageSize ?? 1000;
  let expected = 1;
  let prev = AUDIT_GENESIS;
  const fail = (seq: number, problem: AuditProblem, reason: string): Failure => ({
    ok: false,
    seq,
    problem,
    reason,
    entries_checked: expected - 1,
  });
  for (;;) {
    const page = await log.read({ afterSeq: expected - 1, limit: pageSize });
    if (page.length === 0) return { last: expected - 1, prev };
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
      for (const cp of signed.get(e.seq) ?? []) {
        const why = checkCheckpoint(cp, opts.trustedKeys);
        if (why) return fail(e.seq, 'bad_checkpoint', `checkpoint at ${e.seq}: ${why}`);
        if (cp.hash !== e.hash) return fail(e.seq, 'edited', `entry ${e.seq} differs from the signed checkpoint at ${e.seq}`);
      }
      prev = e.hash;
      expected += 1;
    }
  }
}

/**
 * The first window [k·every, (k+1)·every) of a chain of `entries` entries with no signed
 * checkpoint in it, for every boundary k·every the chain reached (`every` 0: none required).
 */
function missingWindow(entries: number, signed: readonly number[], every: number): { from: number; to: number; every: number } | undefined {
  if (every <= 0) return undefined;
  const sorted = [...signed].sort((x, y) => x - y);
  let i = 0;
  for (let from = every; from <= entries; from += every) {
    const to = Math.min(from + every - 1, entries);
    while (i < sorted.length && sorted[i]! < from) i++;
    if (i === sorted.length || sorted[i]! > to) return { from, to, every };
  }
  return undefined;
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
