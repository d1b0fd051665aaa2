/**
 * The gate store: one object carrying each feature's port as a field — the ledger's own
 * (epochs, ledger, escalations, journal: store/ports.ts) and the features' (the audit log:
 * audit/port.ts; the proxy's tables: proxy/tables.ts; the arguments of escalated acts:
 * ui/pending-arguments.ts; the approval links: approvals/links.ts; the credentials held for downstream servers:
 * auth/downstream-credentials.ts). A caller takes the port it needs (`store.ledger.consume(…)`,
 * `store.audit.append(…)`); no caller needs to know which database is behind it.
 */
import { type ApprovalLinks, SqlApprovalLinks } from '../approvals/links.js';
import { type ApproverPasskeys, SqlApproverPasskeys } from '../approvers/passkeys.js';
import type { AuditLog } from '../audit/port.js';
import { type DownstreamCredentials, SqlDownstreamCredentials } from '../auth/downstream-credentials.js';
import { type ProxyTables, SqlProxyTables } from '../proxy/tables.js';
import { type PendingArguments, SqlPendingArguments } from '../ui/pending-arguments.js';
import { SqlAuditLog } from './audit-log.js';
import type { Dialect } from './dialect.js';
import type { StoreEngine } from './engine.js';
import { SqlEpochs } from './epochs.js';
import { SqlEscalations } from './escalations.js';
import { SqlJournal } from './journal.js';
import { SqlLedger } from './ledger.js';
import type { Epochs, Escalations, Journal, Ledger } from './ports.js';

export interface GateStore {
  readonly dialect: Dialect;
  /** Where the store lives, for messages (a file path, or a URL without credentials). */
  readonly location: string;
  readonly epochs: Epochs;
  readonly ledger: Ledger;
  readonly escalations: Escalations;
  readonly journal: Journal;
  readonly audit: AuditLog;
  /** The gateway's tool pins and proxy observations. */
  readonly proxy: ProxyTables;
  readonly pendingArguments: PendingArguments;
  /** The single-use links a URL-mode elicitation opens the approvals page with. */
  readonly approvalLinks: ApprovalLinks;
  /** The credentials the gateway holds for downstream servers (sealed before they reach it). */
  readonly downstreamCredentials: DownstreamCredentials;
  /** The approvers' passkeys and enrollment links (approvers/passkeys.ts). */
  readonly approverPasskeys: ApproverPasskeys;
  /** Wait for checkpoints being signed, sign the head, release the connection. */
  close(): Promise<void>;
}

/** Every port over one engine (one connection or pool, one audit signer). */
export function gateStore(engine: StoreEngine): GateStore {
  return {
    dialect: engine.dialect,
    location: engine.location,
    epochs: new SqlEpochs(engine),
    ledger: new SqlLedger(engine),
    escalations: new SqlEscalations(engine),
    journal: new SqlJournal(engine),
    audit: new SqlAuditLog(engine),
    proxy: new SqlProxyTables(engine),
    pendingArguments: new SqlPendingArguments(engine),
    approvalLinks: new SqlApprovalLinks(engine),
    downstreamCredentials: new SqlDownstreamCredentials(engine),
    approverPasskeys: new SqlApproverPasskeys(engine),
    close: () => engine.close(),
  };
}
