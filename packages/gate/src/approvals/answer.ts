/**
 * What an escalated `tools/call` answers when the client can send a person to a page (issue 32
 * item 4; MCP 2026-07-28 client/elicitation, URL mode, and basic/patterns/mrtr):
 * - 2026-07-28, URL elicitation declared: an `InputRequiredResult` whose URL-mode elicitation
 *   opens the approvals page at exactly this act (a single-use link), with a sealed `requestState`;
 * - 2025-11-25 on a connection that carries server-to-client requests, URL elicitation declared:
 *   `elicitation/create` in URL mode with the same kind of link;
 * - otherwise today's answer: the bounded progress wait, then EF_APPROVAL_REQUIRED.
 *
 * Whether the act runs is read from the store alone, on every round: a client's `accept` says only
 * that the person agreed to open the page, so it grants nothing; still pending → another input
 * request (or today's answer once the rounds run out); approved → the call runs, once (the
 * ledger's consume); rejected → EF_NOT_AUTHORIZED.
 */
import { randomUUID } from 'node:crypto';
import { type ElicitRequestURLParams, type InputRequiredResult, inputRequired } from '@modelcontextprotocol/server';
import type { Clock } from '@vrpkit/core';
import type { EscalationRow, Escalations } from '../store/ports.js';
import { type ApprovalLinks, approvalLinkUrl, type IssuedApprovalLink, issueApprovalLink, readApprovalLink } from './links.js';
import type { ApprovalRequestState, ExpectedRequestState, RequestStateSealer } from './request-state.js';

/** The revision whose server-to-client requests ride `InputRequiredResult` (basic/patterns/mrtr). */
export const MRTR_REVISION = '2026-07-28';
/** The first revision with URL-mode elicitation. */
export const URL_ELICITATION_REVISION = '2025-11-25';

/** The key of the approval request in `inputRequests` (server-assigned, unique within the request). */
export const APPROVAL_INPUT_KEY = 'vrp_gate_approval';

/** Input requests one call gets at most; then today's answer (the client may retry later). */
export const DEFAULT_MAX_APPROVAL_ROUNDS = 10;

/** The client as this request shows it. */
export interface ApprovalClient {
  /** The request's protocol revision (2026-07-28: from its `_meta`; earlier: negotiated at initialize). */
  revision: string;
  /** It declared URL-mode elicitation (`urlElicitationDeclared`). */
  urlElicitation: boolean;
  /** Earlier revisions: the connection carries server-to-client requests (stdio, or HTTP with a session). */
  sessionful: boolean;
}

export type ApprovalRoute = 'input_required' | 'elicitation' | 'wait';

/**
 * True when client capabilities declare URL-mode elicitation: `elicitation.url` is an object
 * (client/elicitation, Capabilities: an empty `elicitation` object means form mode only).
 */
export function urlElicitationDeclared(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | null | undefined)?.elicitation;
  const url = (elicitation as { url?: unknown } | null | undefined)?.url;
  return typeof url === 'object' && url !== null && !Array.isArray(url);
}

/** How this client can be sent to the page; revisions are dates, so they compare as strings. */
export function approvalRoute(client: ApprovalClient, pageUrl: string | undefined): ApprovalRoute {
  if (!pageUrl || !client.urlElicitation) return 'wait';
  if (client.revision >= MRTR_REVISION) return 'input_required';
  if (client.revision >= URL_ELICITATION_REVISION && client.sessionful) return 'elicitation';
  return 'wait';
}

export interface ApprovalDeps {
  escalations: Pick<Escalations, 'get'>;
  links: ApprovalLinks;
  sealer: RequestStateSealer;
  /** The approvals page's URL; without one, every client gets today's answer. */
  pageUrl: string | undefined;
  clock: Clock;
  linkTtlMs?: number;
  maxRounds?: number;
}

/** The escalated call: its act and the request it came in (what a sealed state is bound to). */
export type EscalatedCall = ExpectedRequestState;

export type ApprovalAnswer =
  /** Approved in the store: resume the pending act (it runs once: the ledger consumes its authority once). */
  | { answer: 'run' }
  /** Rejected, expired while pending, or not this binding's escalation. */
  | { answer: 'refuse'; code: 'EF_NOT_AUTHORIZED' | 'EF_APPROVAL_REQUIRED' | 'EF_SCOPE_MISMATCH' }
  | { answer: 'input_required'; result: InputRequiredResult; link: IssuedApprovalLink }
  | { answer: 'elicit'; params: ElicitRequestURLParams; link: IssuedApprovalLink }
  /** Today's answer: the bounded progress wait, then EF_APPROVAL_REQUIRED. */
  | { answer: 'wait' };

/**
 * The answer to an escalated call, on its first round (`retried` undefined) or on a retry whose
 * sealed state was opened (`openRetriedState`). Only the store's escalation row decides.
 */
export async function answerEscalatedCall(
  deps: ApprovalDeps,
  call: EscalatedCall,
  client: ApprovalClient,
  retried?: ApprovalRequestState,
): Promise<ApprovalAnswer> {
  const now = deps.clock.now();
  const row = await deps.escalations.get(call.candidate_act_id);
  const decided = storeAnswer(row, call, now);
  if (decided) return decided;
  const route = approvalRoute(client, deps.pageUrl);
  const round = (retried?.round ?? 0) + 1;
  if (route === 'wait' || round > (deps.maxRounds ?? DEFAULT_MAX_APPROVAL_ROUNDS)) return { answer: 'wait' };
  const link = await currentLink(deps, row as EscalationRow, retried?.link, now);
  const url = approvalLinkUrl(deps.pageUrl as string, link.token);
  const message = approvalMessage(call);
  if (route === 'elicitation') return { answer: 'elicit', link, params: { mode: 'url', message, url, elicitationId: randomUUID() } };
  const requestState = await deps.sealer.seal({ ...call, round, link });
  const result = inputRequired({ inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({ message, url }) }, requestState });
  return { answer: 'input_required', result, link };
}

/**
 * After a 2025 client answered the URL elicitation: the store decides; still pending, an `accept`
 * (the person agreed to open the page) goes on to today's bounded wait, a decline or cancel to
 * EF_APPROVAL_REQUIRED at once (the escalation stays pending: an identical call runs once approved).
 */
export async function answerAfterElicitation(
  deps: Pick<ApprovalDeps, 'escalations' | 'clock'>,
  call: EscalatedCall,
  action: 'accept' | 'decline' | 'cancel',
): Promise<ApprovalAnswer> {
  const row = await deps.escalations.get(call.candidate_act_id);
  const decided = storeAnswer(row, call, deps.clock.now());
  if (decided) return decided;
  return action === 'accept' ? { answer: 'wait' } : { answer: 'refuse', code: 'EF_APPROVAL_REQUIRED' };
}

/** The store's decision, or undefined while the escalation is pending. */
function storeAnswer(row: EscalationRow | undefined, call: EscalatedCall, now: number): ApprovalAnswer | undefined {
  // An escalation binds one digest (escalation.ts): any other is not this call's.
  if (!row || row.binding_digest !== call.binding_digest) return { answer: 'refuse', code: 'EF_SCOPE_MISMATCH' };
  if (row.status === 'APPROVED') return { answer: 'run' };
  if (row.status === 'REJECTED') return { answer: 'refuse', code: 'EF_NOT_AUTHORIZED' };
  if (row.expires_at <= now) return { answer: 'refuse', code: 'EF_APPROVAL_REQUIRED' };
  return undefined;
}

/** The link shown last round while it can still decide this act, else a new one. */
async function currentLink(
  deps: ApprovalDeps,
  row: EscalationRow,
  prior: ApprovalRequestState['link'],
  now: number,
): Promise<IssuedApprovalLink> {
  if (prior) {
    const s = await readApprovalLink(deps.links, prior.token, now);
    if (s.state === 'open' && s.link.candidate_act_id === row.candidate_act_id && s.link.binding_digest === row.binding_digest)
      return { token: prior.token, expires_at: s.link.expires_at };
  }
  return issueApprovalLink(deps.links, row, { now, ...(deps.linkTtlMs === undefined ? {} : { ttlMs: deps.linkTtlMs }) });
}

/** What the person reads in the client: ids and digests, never the arguments (they are on the page). */
function approvalMessage(call: EscalatedCall): string {
  return `A person must approve ${call.tool} (candidate act ${call.candidate_act_id}, arguments digest ${call.arguments_digest}) on the gate's approvals page. Opening the page decides nothing; the call runs once it is approved there.`;
}

/**
 * Open the `requestState` a retried call echoes: refused (and nothing runs) unless this gate sealed
 * it, it has not expired, and it was minted for this very call and principal (mrtr, Server
 * Requirements 4 and 5). No state: a first round.
 */
export async function openRetriedState(
  sealer: RequestStateSealer,
  call: EscalatedCall,
  sealed: string | undefined,
): Promise<{ ok: true; state?: ApprovalRequestState } | { ok: false; reason: 'malformed' | 'expired' | 'foreign' }> {
  if (sealed === undefined) return { ok: true };
  return sealer.open(sealed, call);
}
