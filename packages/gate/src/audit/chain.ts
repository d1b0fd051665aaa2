/**
 * The audit log's chain rule, shared by the writer (the store, inside the transaction of the
 * decision an entry records) and the verifier: entry n carries the hash of entry n − 1, and
 * its own hash is SHA-256 over the RFC 8785 (JCS) form of the entry without `hash`, absent
 * members omitted. A checkpoint is the chain head signed with the gate key (compact JWS,
 * EdDSA), so a rewritten chain whose hashes were all recomputed still fails at the signature.
 */
import {
  decodeJwsPayload,
  type Ed25519PublicJwk,
  importEd25519PublicKey,
  type JwsSigner,
  parseCompactJws,
  sha256Base64url,
  verifyEd25519Signature,
} from '@vrpkit/core';
import type { AuditCheckpointTable, AuditKind, AuditTable } from './schema.js';

export type AuditEntry = AuditTable;
export type AuditCheckpoint = AuditCheckpointTable;
export type { AuditKind };

/** One decision to record: what `appendAudit` takes (the store assigns seq, hashes and, unless given, the time). */
export interface AuditEvent {
  kind: AuditKind;
  act_id?: string | null;
  tool?: string | null;
  server?: string | null;
  digest?: string | null;
  code?: string | null;
  actor?: string | null;
}

/** The gate key that signs checkpoints, and how often (every `every` entries; also on close). */
export interface AuditSigner {
  signer: JwsSigner;
  publicJwk: Ed25519PublicJwk;
  every: number;
}

/** Default checkpoint interval. */
export const AUDIT_CHECKPOINT_EVERY = 100;

/** The JWS `typ` of a checkpoint. */
export const AUDIT_CHECKPOINT_JWS_TYPE = 'gate-audit-checkpoint+jws';

/**
 * SHA-256 over JCS of the entry without `hash` (null members omitted). The members are strings
 * and integers, which JCS serializes exactly as JSON.stringify does (RFC 8785 §3.2.2), so one
 * JSON.stringify of the members in JCS key order (RFC 8785 §3.2.3: sorted by UTF-16 code units;
 * JSON.stringify keeps insertion order and leaves out `undefined`) is the JCS text: one string
 * and one hash per entry on the append path, no generic canonicalization.
 */
export function auditEntryHash(e: Omit<AuditEntry, 'hash'>): string {
  return sha256Base64url(
    JSON.stringify({
      act_id: e.act_id ?? undefined,
      actor: e.actor ?? undefined,
      at: e.at ?? undefined,
      code: e.code ?? undefined,
      digest: e.digest ?? undefined,
      kind: e.kind ?? undefined,
      prev_hash: e.prev_hash ?? undefined,
      seq: e.seq ?? undefined,
      server: e.server ?? undefined,
      tool: e.tool ?? undefined,
    }),
  );
}

/** The entries that follow `head`, chained: each built once, its hash set when computed. */
export function chainEntries(head: { seq: number; hash: string }, events: readonly AuditEvent[], at: number): AuditEntry[] {
  let seq = head.seq;
  let prev = head.hash;
  return events.map((ev) => {
    seq += 1;
    const e: AuditEntry = {
      seq,
      at,
      kind: ev.kind,
      act_id: ev.act_id ?? null,
      tool: ev.tool ?? null,
      server: ev.server ?? null,
      digest: ev.digest ?? null,
      code: ev.code ?? null,
      actor: ev.actor ?? null,
      prev_hash: prev,
      hash: '',
    };
    // `hash` is not among the hashed members.
    e.hash = prev = auditEntryHash(e);
    return e;
  });
}

/** Whether appending entries `from + 1 … to` crosses a checkpoint boundary. */
export function checkpointDue(from: number, to: number, every: number): boolean {
  return every > 0 && Math.floor(from / every) !== Math.floor(to / every);
}

/** Sign the chain head. */
export function signCheckpoint(s: AuditSigner, seq: number, hash: string, at: number): AuditCheckpoint {
  const jws = s.signer.sign(JSON.stringify({ at, hash, seq }), { typ: AUDIT_CHECKPOINT_JWS_TYPE });
  return { seq, hash, at, kid: s.signer.kid, public_jwk: JSON.stringify(s.publicJwk), jws };
}

/**
 * Check a checkpoint's signature and that its payload is its row. With `trusted`, the
 * signing key must be one of them (same kid and key); otherwise the key recorded with the
 * checkpoint is used (integrity against edits, not against someone who can also re-sign).
 */
export function checkCheckpoint(cp: AuditCheckpoint, trusted?: readonly Ed25519PublicJwk[]): string | undefined {
  const parsed = parseCompactJws(cp.jws);
  if (!parsed.ok) return `not a compact JWS (${parsed.reason})`;
  const { header, signingInput, signature, payloadSegment } = parsed.jws;
  if (header.alg !== 'EdDSA' || header.typ !== AUDIT_CHECKPOINT_JWS_TYPE || header.kid !== cp.kid)
    return 'header is not an EdDSA checkpoint of its kid';
  let jwk: unknown;
  try {
    jwk = JSON.parse(cp.public_jwk);
  } catch {
    return 'recorded public key is not JSON';
  }
  if (trusted) {
    const x = (jwk as { x?: unknown } | null)?.x;
    const match = trusted.find((k) => k.kid === cp.kid && k.x === x);
    if (!match) return `signed by key ${cp.kid}, which is not a trusted key`;
    jwk = match;
  }
  const key = importEd25519PublicKey(jwk);
  if (!key) return 'recorded public key is not an Ed25519 key';
  if (!verifyEd25519Signature(signingInput, signature, key)) return 'signature does not verify';
  let payload: { at?: unknown; hash?: unknown; seq?: unknown };
  try {
    payload = JSON.parse(decodeJwsPayload(payloadSegment) ?? '');
  } catch {
    return 'payload is not JSON';
  }
  if (payload?.seq !== cp.seq || payload.hash !== cp.hash || payload.at !== cp.at) return 'signed payload differs from the checkpoint row';
  return undefined;
}
