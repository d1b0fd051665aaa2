/**
 * `@vrpkit/gate/ui`: the approvals page (`vrp gate ui`, or `vrp gate proxy --ui`). A separate
 * entry because it needs hono at run time, which `@vrpkit/gate` itself does not.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type Clock, systemClock } from '@vrpkit/core';
import type { ApproverRole, SelfApprovalRule } from '../approvers/identity.js';
import { ApproverOidc, type ApproverOidcConfig } from '../approvers/oidc.js';
import type { GateStore } from '../store/gate-store.js';
import { createApprovalsApp } from './app.js';
import { type AuditTrailSource, auditChainTrail } from './audit.js';
import { DEFAULT_ARGUMENTS_RETENTION_MS } from './pending-arguments.js';

export { type ApproverOidcConfig, checkIssuerUrl } from '../approvers/oidc.js';
export { type ApprovalsAppOptions, CONTENT_SECURITY_POLICY, createApprovalsApp, SESSION_COOKIE } from './app.js';
export { AUDIT_KINDS, type AuditTrailEntry, type AuditTrailFilter, type AuditTrailSource, auditChainTrail } from './audit.js';

export interface ApprovalsUiOptions {
  store: GateStore;
  /** A loopback address (the page is plain HTTP); port 0 picks a free port. */
  listen: { host: string; port: number };
  /** The token mode's approver (recorded as `token:<approver>`). */
  approver: string;
  /**
   * Approvers are known people (issue 33 item 3): they sign in with OpenID Connect and/or a passkey
   * enrolled through `vrp gate approvers enroll`, and `role` says who may decide. No token is printed then.
   */
  approvers?: ApproversConfig;
  /** Whether an approver may approve their own act (from the policy in force: `selfApprovalRule`); default never. */
  selfApproval?: SelfApprovalRule;
  retainArgumentsMs?: number;
  /** Default: the store's hash-chained audit log (`auditChainTrail`). */
  audit?: AuditTrailSource;
  clock?: Clock;
  onDecision?: (fields: Record<string, unknown>) => void;
}

/** How known approvers sign in, and who holds the role. */
export interface ApproversConfig {
  oidc?: ApproverOidcConfig;
  /** Passkeys enrolled in the gate store. */
  passkeys?: boolean;
  role: ApproverRole;
}

export interface ApprovalsUi {
  /** The page's address, without the token. */
  url: string;
  /**
   * The random token: `${url}?token=…` opens a session. Printed once at start, never logged again.
   * Undefined when approvers sign in as known people.
   */
  token: string | undefined;
  close(): Promise<void>;
}

/** How often the page purges arguments past their retention while it runs (also on every page view). */
const PURGE_INTERVAL_MS = 60_000;

export async function startApprovalsUi(o: ApprovalsUiOptions): Promise<ApprovalsUi> {
  const approvers = o.approvers;
  if (approvers && !approvers.oidc && !approvers.passkeys) throw new RangeError('approvers: configure OpenID Connect, passkeys, or both');
  const token = approvers ? undefined : randomBytes(32).toString('base64url');
  const clock = o.clock ?? systemClock;
  const retain = o.retainArgumentsMs ?? DEFAULT_ARGUMENTS_RETENTION_MS;
  const { pendingArguments } = o.store;
  const app = createApprovalsApp({
    escalations: o.store.escalations,
    pins: o.store.proxy,
    pendingArguments,
    links: o.store.approvalLinks,
    audit: o.audit ?? auditChainTrail(o.store.audit),
    ...(token !== undefined ? { token } : {}),
    approver: o.approver,
    ...(approvers
      ? {
          signIn: {
            role: approvers.role,
            ...(approvers.oidc ? { oidc: new ApproverOidc(approvers.oidc) } : {}),
            ...(approvers.passkeys ? { passkeys: o.store.approverPasskeys } : {}),
          },
        }
      : {}),
    ...(o.selfApproval ? { selfApproval: o.selfApproval } : {}),
    retainArgumentsMs: retain,
    clock,
    ...(o.onDecision ? { onDecision: o.onDecision } : {}),
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: o.listen.port, hostname: o.listen.host }, () => resolve(s));
    s.once('error', reject);
  });
  const purge = () => {
    void pendingArguments.purge(clock.now(), retain).catch(() => {});
    // Spent and expired links decide nothing: kept for the retention period only, like the arguments.
    void o.store.approvalLinks.purge(clock.now(), retain).catch(() => {});
  };
  purge();
  const timer = setInterval(purge, PURGE_INTERVAL_MS);
  timer.unref();
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/`,
    token,
    close: async () => {
      clearInterval(timer);
      if ('closeAllConnections' in server) server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
