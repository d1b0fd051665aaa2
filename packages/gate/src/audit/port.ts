/**
 * The audit log's port: what the gate, the proxy, the CLI and the verifier need of the chain,
 * whichever database holds it. The store appends the entries of every decision it writes in that
 * decision's own transaction; `append` is for decisions made elsewhere.
 */
import type { StoreCallOptions } from '../store/dialect.js';
import type { AuditEvent, AuditSigner } from './chain.js';
import type { AuditCheckpointTable, AuditTable } from './schema.js';

/** The audit chain's head: the last entry's seq and hash (seq 0 and the genesis hash when empty). */
export interface AuditHead {
  seq: number;
  hash: string;
}

export interface AuditReadOptions {
  /** Entries with a greater seq. Default 0. */
  afterSeq?: number;
  /** Entries at or after this time (epoch ms). */
  since?: number;
  limit: number;
}

/** A search of the chain (the approvals page's audit view); every member narrows it. */
export interface AuditSearch {
  /** The entry's kind: what was decided (`deny`, `approve`, …). */
  kind?: string;
  /** The EF code (exact). */
  code?: string;
  /** Who decided (exact): the approver, the pinning person, the enforcer instance. */
  actor?: string;
  /** Substring of the candidate act id, matched literally. */
  act?: string;
  since?: number;
  limit: number;
}

export interface AuditLog {
  /** Append decisions made outside the store's own transactions (a deny decided before the store, …), in one transaction. */
  append(events: readonly AuditEvent[], now: number, opts?: StoreCallOptions): Promise<AuditHead>;
  head(): Promise<AuditHead>;
  read(opts: AuditReadOptions): Promise<AuditTable[]>;
  /** The entries matching `search`, newest first (seq and at as numbers, as the export prints them). */
  search(search: AuditSearch): Promise<AuditTable[]>;
  checkpoints(): Promise<AuditCheckpointTable[]>;
  /** Sign checkpoints with this key from now on (every `every` entries, and the head on close). */
  useSigner(signer: AuditSigner): void;
  /**
   * Sign the current head unless it is signed already. No-op without a signer. `ifOwed`: only when
   * the head's window of `every` entries has no checkpoint yet (a writer without the gate key
   * reached its boundary), which a gate does on start.
   */
  checkpoint(now: number, opts?: { ifOwed?: boolean }): Promise<void>;
}
