/**
 * Who decides on the approvals page (issue 33 item 3): a signed-in person — their subject, how
 * they signed in, and whether they hold the approver role — and the rules a decision is checked
 * against before anything is decided: the role, and no approval of one's own act unless the
 * act's policy allows it (`approval.self_approval`).
 */
import type { AgentCandidateAct } from '../act.js';
import type { PolicySet } from '../auth/policy-set.js';
import type { Policy } from '../policy.js';

/** How a person signed in: the printed token (single user), OpenID Connect, or a passkey. */
export type SignInMethod = 'token' | 'oidc' | 'passkey';

export interface ApproverIdentity {
  /** The token mode's `--approver` name, the ID token's `sub`, or the subject a passkey was enrolled for. */
  subject: string;
  method: SignInMethod;
  /** Holds the approver role: may decide and pin. Without it the page is read-only. */
  approver: boolean;
}

/** Who holds the approver role: subjects by name, and/or an ID-token claim with a value (`groups=approvers`). */
export interface ApproverRole {
  subjects: readonly string[];
  claim?: { name: string; value: string };
}

/** Stable codes of the refusals a signed-in person meets when deciding. */
export const APPROVER_CODES = {
  /** Signed in, but not an approver: the page is read-only for them. */
  role: 'approver_role_required',
  /** The act's principal is the approver's own subject and its policy does not allow self-approval. */
  self: 'approver_self_approval',
} as const;

/** Parse `--approver-claim NAME=VALUE`. Throws RangeError on anything else. */
export function parseApproverClaim(v: string): { name: string; value: string } {
  const eq = v.indexOf('=');
  const name = v.slice(0, eq).trim();
  const value = v.slice(eq + 1).trim();
  if (eq <= 0 || !name || !value) throw new RangeError(`--approver-claim must be NAME=VALUE (e.g. groups=approvers), got ${v}`);
  return { name, value };
}

/**
 * Whether `subject` with these ID-token claims holds the role: listed by name, or the claim holds
 * the value (a string equal to it, or an array containing it). A claim of any other type never does.
 */
export function holdsApproverRole(role: ApproverRole, subject: string, claims: Readonly<Record<string, unknown>> = {}): boolean {
  if (role.subjects.includes(subject)) return true;
  if (!role.claim) return false;
  const held = claims[role.claim.name];
  if (typeof held === 'string') return held === role.claim.value;
  return Array.isArray(held) && held.some((v) => v === role.claim?.value);
}

/**
 * What the audit log and the escalation row record as the decider: `<method>:<subject>`
 * (`oidc:alice`, `passkey:alice`, `token:ops`), so every decision names both.
 */
export function approverActor(who: Pick<ApproverIdentity, 'subject' | 'method'>): string {
  return `${who.method}:${who.subject}`;
}

/** Whether an approver may approve `act` when its principal is their own subject. */
export type SelfApprovalRule = (act: AgentCandidateAct) => boolean;

/**
 * The rule from the policy in force: one policy's `approval.self_approval`, or with a policy set
 * the act's principal's member. The page knows an act's subject and client, not the token's
 * groups: self-approval is allowed only when every member that could be the principal's allows it
 * (fail closed).
 */
export function selfApprovalRule(policy: Policy | undefined, set?: PolicySet): SelfApprovalRule {
  if (!set) return () => policy?.selfApproval === true;
  return (act) =>
    set
      .possibleMembers({ subject: act.initiating_principal.principal_id, clientId: act.agent.agent_id })
      .every((m) => m.policy.selfApproval);
}

/** True when the act is the approver's own: its principal is their subject. */
export function isOwnAct(act: AgentCandidateAct, who: Pick<ApproverIdentity, 'subject'>): boolean {
  return act.initiating_principal.principal_id === who.subject;
}
