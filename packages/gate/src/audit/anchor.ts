/**
 * Anchoring the audit chain outside its store (issue 36 defect 3). A hash chain with signed
 * checkpoints stops an editor from rewriting entries (the rewrite fails at the next checkpoint,
 * and deleting the checkpoints fails verify's count), but not whoever holds the store from
 * cutting off its newest entries together with their checkpoints and moving the head back. So
 * each signed checkpoint is also appended to a sink the store's writer cannot rewrite: a file
 * opened append-only (`O_APPEND`) on another host or mount, one checkpoint per line as JSON — the
 * checkpoint row itself, `{seq, hash, at, kid, public_jwk, jws}`, signed by the gate key. `verify`
 * with the anchors fails when the chain ends before an anchored checkpoint or differs from one.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { VrpError } from '@vrpkit/core';
import type { AuditCheckpoint } from './chain.js';
import { type AuditVerifyResult, type VerifyAuditOptions, verifyAuditChain } from './log.js';
import type { AuditLog } from './port.js';

/** The anchor sink cannot be read as anchors (a line that is not a checkpoint, or out of chain order). */
export class AnchorError extends VrpError {
  constructor(message: string) {
    super('bad_anchor', message);
  }
}

const INTEGER = (v: unknown): v is number => Number.isSafeInteger(v);
const TEXT = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The anchors of a sink's text: one checkpoint per line, in increasing `seq` (blank lines skipped). */
export function parseAnchors(text: string): AuditCheckpoint[] {
  const anchors: AuditCheckpoint[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let v: Partial<Record<keyof AuditCheckpoint, unknown>> | null;
    try {
      v = JSON.parse(line);
    } catch {
      throw new AnchorError(`line ${i + 1} is not JSON`);
    }
    if (!v || !INTEGER(v.seq) || !TEXT(v.hash) || !INTEGER(v.at) || !TEXT(v.kid) || !TEXT(v.public_jwk) || !TEXT(v.jws))
      throw new AnchorError(`line ${i + 1} is not a signed checkpoint {seq, hash, at, kid, public_jwk, jws}`);
    const previous = anchors[anchors.length - 1];
    if (previous && v.seq <= previous.seq) throw new AnchorError(`line ${i + 1} (seq ${v.seq}) does not follow seq ${previous.seq}`);
    anchors.push({ seq: v.seq, hash: v.hash, at: v.at, kid: v.kid, public_jwk: v.public_jwk, jws: v.jws });
  }
  return anchors;
}

/** The anchors in the sink file; none when it does not exist yet. */
export function readAnchors(file: string): AuditCheckpoint[] {
  if (!existsSync(file)) return [];
  try {
    return parseAnchors(readFileSync(file, 'utf8'));
  } catch (e) {
    throw e instanceof AnchorError ? new AnchorError(`anchor file ${file}: ${e.message}`) : e;
  }
}

export type AnchorOutcome =
  /** `appended`: checkpoints newly anchored; `last_anchored_seq`: the newest anchored checkpoint, if any. */
  | { ok: true; appended: number; last_anchored_seq: number | null }
  /** The chain does not verify against the store's checkpoints and the anchors already there: nothing was anchored. */
  | Extract<AuditVerifyResult, { ok: false }>;

/**
 * Append every signed checkpoint newer than the sink's last to the sink (opened `O_APPEND`, then
 * fsync'd). Only a chain that verifies — against the store's checkpoints and the sink's anchors —
 * is anchored, so a rewrite is never frozen in as the truth.
 */
export async function anchorCheckpoints(log: AuditLog, sink: string, opts: VerifyAuditOptions = {}): Promise<AnchorOutcome> {
  const existing = readAnchors(sink);
  const verified = await verifyAuditChain(log, { ...opts, anchors: existing });
  if (!verified.ok) return verified;
  const lastAnchored = existing[existing.length - 1]?.seq ?? 0;
  const fresh = (await log.checkpoints()).filter((c) => Number(c.seq) > lastAnchored).sort((a, b) => a.seq - b.seq);
  if (fresh.length > 0) {
    const lines = fresh.map((c) =>
      JSON.stringify({ seq: Number(c.seq), hash: c.hash, at: Number(c.at), kid: c.kid, public_jwk: c.public_jwk, jws: c.jws }),
    );
    // O_APPEND: every write lands at the end whatever the offset; the sink is only ever appended to.
    const fd = openSync(sink, 'a', 0o644);
    try {
      writeSync(fd, `${lines.join('\n')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  const newest = fresh[fresh.length - 1]?.seq ?? existing[existing.length - 1]?.seq;
  return { ok: true, appended: fresh.length, last_anchored_seq: newest === undefined ? null : Number(newest) };
}
