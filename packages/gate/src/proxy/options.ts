/** What a `GateProxy` is built from, and what its parts (call pipeline, observe mode, approval wait) share. */
import type { Client } from '@modelcontextprotocol/client';
import type { Clock } from '@vrpkit/core';
import type { ApprovalLinks } from '../approvals/links.js';
import type { RequestStateSealer } from '../approvals/request-state.js';
import type { ProxyPrincipals } from '../auth/principals.js';
import type { Gate } from '../gate.js';
import type { Policy } from '../policy.js';
import type { Escalations } from '../store/ports.js';
import type { PendingArguments } from '../ui/pending-arguments.js';
import type { DownstreamOAuth } from './downstream-oauth.js';
import type { ProxyFaultPoint } from './fault.js';
import type { ProxyLog } from './log.js';
import type { ProxyMode } from './schema.js';
import type { ProxyTables } from './tables.js';

export interface GateProxyOptions {
  gate: Gate;
  policy: Policy;
  tables: ProxyTables;
  /** The connected downstream, or (downstream OAuth) the credentials one connection per principal is made with. */
  downstream: Client | DownstreamOAuth;
  /** The downstream's identity (see `serverIdentity`). */
  serverId: string;
  /** The proxy's name: the session id of its acts and part of its sink id. */
  name: string;
  mode: ProxyMode;
  /** Development only: pin every tool the first time it is seen. */
  pinOnFirstUse: boolean;
  log: ProxyLog;
  /** The escalations of the store the gate decides in (read while a call waits). */
  escalations: Escalations;
  /** Where escalated acts' arguments are kept for the approvals page. */
  pendingArguments: PendingArguments;
  /** The single-use links a URL-mode elicitation sends the person with (approvals/links.ts). */
  approvalLinks: ApprovalLinks;
  /** Seals and opens the `requestState` of a 2026-07-28 escalated call (approvals/request-state.ts). */
  requestStates: RequestStateSealer;
  /** How long an approval link stays usable (default `DEFAULT_APPROVAL_LINK_TTL_MS`). */
  approvalLinkTtlMs?: number;
  /** How long an escalated call waits for a person (0: refuse at once with the pending code). */
  approvalTimeoutMs: number;
  /** POST a notice (no arguments) here when an act waits (`--notify-url`). */
  notifyUrl?: string;
  clock?: Clock;
  /**
   * Start the downstream again after it exited (a stdio child that crashed): called on the next
   * request, at most `MAX_RESPAWNS` times per `RESPAWN_WINDOW_MS`. Without it, every call after
   * the downstream closed is answered `downstream_unavailable`.
   */
  reconnect?: () => Promise<Client>;
  /** Per-request bound on a downstream call (tools/call and pass-through); default the SDK's 60 s. */
  callTimeoutMs?: number;
  /** Fault injection for the crash tests: SIGKILL this process right after the downstream call returns. */
  fault?: ProxyFaultPoint;
  /**
   * Team mode (issue 33): the listener authenticates each request's principal; their acts are
   * theirs, decided by their policy member's gate, and they are shown only the tools it allows.
   */
  principals?: ProxyPrincipals<Gate>;
  /** A call re-lists the downstream's tools once the view is older than this (default `DEFAULT_TOOLS_RELIST_MS`; 0: every call). */
  toolsRelistMs?: number;
}

/** The options with the clock resolved, and what the running proxy adds: its stop signal and the approvals page's address. */
export interface ProxyContext extends GateProxyOptions {
  clock: Clock;
  /** Aborted when the proxy stops: calls waiting for a person stop waiting. */
  stopped: AbortSignal;
  /** The approvals page, linked from the `--notify-url` notice (never with its token). */
  approvalsUrl(): string | undefined;
}
