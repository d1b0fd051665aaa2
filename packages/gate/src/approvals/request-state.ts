/**
 * The sealed `requestState` of an escalated call (MCP 2026-07-28, basic/patterns/mrtr, Server
 * Requirements 4 and 5): the state round-trips through the client, so it is attacker-controlled on
 * re-entry. It is a JWT encrypted with a key only the gate holds (compact JWE, `dir` + A256GCM, by
 * jose): integrity and confidentiality (the approval link's token rides inside it and is re-shown
 * on the next round), a short expiry, the principal, and the originating request — `tools/call`,
 * the tool and the digest of its arguments, the act's id and binding digest — each checked on
 * receipt. A state that fails any check grants nothing and is refused.
 *
 * It carries no decision: whether the act runs is read from the store alone (approvals/answer.ts).
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '@vrpkit/core';
import { EncryptJWT, jwtDecrypt } from 'jose';

/** What one round of an escalated call remembers. */
export interface ApprovalRequestState {
  /** The escalated act and the binding the approval covers. */
  candidate_act_id: string;
  binding_digest: string;
  /** The originating request: `tools/call` of this tool with arguments of this digest. */
  tool: string;
  arguments_digest: string;
  /** Who the call is for. */
  principal: string;
  /** 1 on the first input request, one more on each. */
  round: number;
  /** The approval link shown this round (its token), re-shown while it is usable. */
  link?: { token: string; expires_at: number };
}

/** The fields a retried call must match: its own act, tool, arguments and principal. */
const BOUND_FIELDS = ['candidate_act_id', 'binding_digest', 'tool', 'arguments_digest', 'principal'] as const;

/** What a retried call must match: its own act, tool, arguments and principal. */
export type ExpectedRequestState = Pick<ApprovalRequestState, (typeof BOUND_FIELDS)[number]>;

export type OpenedRequestState =
  | { ok: true; state: ApprovalRequestState }
  /** malformed: not a state of this gate, or tampered with; expired: past its TTL; foreign: another call's or principal's. */
  | { ok: false; reason: 'malformed' | 'expired' | 'foreign' };

export interface RequestStateSealer {
  seal(state: ApprovalRequestState): Promise<string>;
  open(sealed: string, expected: ExpectedRequestState): Promise<OpenedRequestState>;
  /** Seal one round of a downstream's input request forwarded to the agent (proxy/downstream-input.ts). */
  sealContinuation(state: ContinuationState): Promise<string>;
  /** Open a continuation for exactly this call; `not_continuation`: a state of this gate of the other kind (an approval's). */
  openContinuation(sealed: string, expected: ExpectedContinuation): Promise<OpenedContinuation>;
}

/**
 * One round of a downstream server's input request (elicitation) the proxy forwarded to its agent
 * (issue 32 item 5; mrtr, Server Requirements 4 and 5). Every round of one call is the same act: the
 * state binds the act that was authorized (and consumed) on the first round, the request (server,
 * tool, arguments digest) and the principal, and carries the downstream's own `requestState`
 * verbatim for the retry downstream; it is sealed like an approval's state but under another
 * audience, so neither kind is accepted as the other.
 */
export interface ContinuationState {
  candidate_act_id: string;
  /** The downstream's identity (proxy/downstream.ts `serverIdentity`). */
  server: string;
  tool: string;
  arguments_digest: string;
  principal: string;
  /** 1 on the first forwarded input request, one more on each. */
  round: number;
  /** The downstream's `requestState`, echoed byte for byte on the retry downstream. */
  downstream_state?: string;
  /** The input keys forwarded to the agent: only their responses go downstream. */
  forwarded: string[];
  /** The input keys the proxy declined itself (a URL whose origin policy does not allow). */
  declined: string[];
  /** A 2025-11-25 downstream's call held open in the proxy process that answered (proxy/held-call.ts): its id. */
  held?: string;
}

/** The fields a continuation must match: this server, tool, arguments and principal. */
const CONTINUATION_BOUND = ['server', 'tool', 'arguments_digest', 'principal'] as const;
export type ExpectedContinuation = Pick<ContinuationState, (typeof CONTINUATION_BOUND)[number]>;

export type OpenedContinuation =
  | { ok: true; state: ContinuationState }
  | { ok: false; reason: 'malformed' | 'expired' | 'foreign' | 'not_continuation' };

/** A downstream's own `requestState` longer than this is not carried (the sealed state must stay a header-sized value). */
export const MAX_DOWNSTREAM_STATE_LENGTH = 8192;

/** How long a sealed state is accepted unless configured: the approval link's default lifetime. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 10 * 60_000;

/** A state longer than this is refused unread (a real one is well under 1 KiB). */
const MAX_SEALED_LENGTH = 4096;

const AUDIENCE = 'vrp-gate:request-state';
const CONTINUATION_AUDIENCE = 'vrp-gate:downstream-continuation';
/** A continuation carries the downstream's state (at most `MAX_DOWNSTREAM_STATE_LENGTH`), sealed: about 4/3 of it plus the rest. */
const MAX_CONTINUATION_LENGTH = 16_384;
const ALGORITHMS = { keyManagementAlgorithms: ['dir' as const], contentEncryptionAlgorithms: ['A256GCM' as const] };

/**
 * The 256-bit key states are sealed with: derived (HKDF-SHA256) from `secret` when given — every
 * gate process holding the same secret accepts the others' states — else random for this process.
 */
export function requestStateKey(secret?: Uint8Array | string): Uint8Array {
  if (secret === undefined) return new Uint8Array(randomBytes(32));
  return new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), 'vrp gate request-state v1', 32));
}

export function requestStateSealer(key: Uint8Array, o: { ttlMs?: number; clock?: Clock } = {}): RequestStateSealer {
  if (key.byteLength !== 32) throw new RangeError('the request-state key must be 32 bytes (A256GCM)');
  const clock = o.clock ?? systemClock;
  const ttlSeconds = Math.max(1, Math.round((o.ttlMs ?? DEFAULT_REQUEST_STATE_TTL_MS) / 1000));
  /** The JWE of one state under `audience` (its own `sub`, `iat`, `exp`). */
  const sealAs = (audience: string, subject: string, claims: Record<string, unknown>) => {
    const now = Math.floor(clock.now() / 1000);
    return new EncryptJWT({ vrp: claims })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .encrypt(key);
  };
  /** Decrypt and check expiry; the audience is returned for the caller to check (one kind is not the other). */
  const openSealed = async (
    sealed: string,
    maxLength: number,
  ): Promise<{ ok: true; payload: Record<string, unknown> } | { ok: false; reason: 'malformed' | 'expired' }> => {
    if (sealed.length > maxLength) return { ok: false, reason: 'malformed' };
    try {
      const { payload } = await jwtDecrypt(sealed, key, {
        ...ALGORITHMS,
        currentDate: new Date(clock.now()),
        requiredClaims: ['exp', 'sub', 'aud'],
      });
      return { ok: true, payload };
    } catch (e) {
      return { ok: false, reason: (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'malformed' };
    }
  };
  return {
    async seal(state) {
      const sealed: ApprovalRequestState = {
        ...(Object.fromEntries(BOUND_FIELDS.map((k) => [k, state[k]])) as ExpectedRequestState),
        round: state.round,
        ...(state.link ? { link: { token: state.link.token, expires_at: state.link.expires_at } } : {}),
      };
      return await sealAs(AUDIENCE, state.principal, { ...sealed });
    },
    async open(sealed, expected) {
      const opened = await openSealed(sealed, MAX_SEALED_LENGTH);
      if (!opened.ok) return opened;
      const { payload } = opened;
      const state = payload.vrp as ApprovalRequestState | undefined;
      if (payload.aud !== AUDIENCE || !isState(state) || payload.sub !== state.principal) return { ok: false, reason: 'malformed' };
      // Server Requirements 5: the originating request and the principal must be this call's.
      const matches = BOUND_FIELDS.every((k) => state[k] === expected[k]);
      return matches ? { ok: true, state } : { ok: false, reason: 'foreign' };
    },
    async sealContinuation(state) {
      const sealed: ContinuationState = {
        candidate_act_id: state.candidate_act_id,
        server: state.server,
        tool: state.tool,
        arguments_digest: state.arguments_digest,
        principal: state.principal,
        round: state.round,
        ...(state.downstream_state !== undefined ? { downstream_state: state.downstream_state } : {}),
        forwarded: [...state.forwarded],
        declined: [...state.declined],
        ...(state.held !== undefined ? { held: state.held } : {}),
      };
      return await sealAs(CONTINUATION_AUDIENCE, state.principal, { ...sealed });
    },
    async openContinuation(sealed, expected) {
      const opened = await openSealed(sealed, MAX_CONTINUATION_LENGTH);
      if (!opened.ok) return opened;
      const { payload } = opened;
      if (payload.aud === AUDIENCE) return { ok: false, reason: 'not_continuation' };
      const state = payload.vrp as ContinuationState | undefined;
      if (payload.aud !== CONTINUATION_AUDIENCE || !isContinuation(state) || payload.sub !== state.principal)
        return { ok: false, reason: 'malformed' };
      // Server Requirements 5: the originating request (server, tool, arguments) and the principal must be this call's.
      const matches = CONTINUATION_BOUND.every((k) => state[k] === expected[k]);
      return matches ? { ok: true, state } : { ok: false, reason: 'foreign' };
    },
  };
}

function isContinuation(s: unknown): s is ContinuationState {
  if (typeof s !== 'object' || s === null) return false;
  const r = s as Record<string, unknown>;
  const keys = (v: unknown) => Array.isArray(v) && v.every((k) => typeof k === 'string');
  return (
    typeof r.candidate_act_id === 'string' &&
    CONTINUATION_BOUND.every((k) => typeof r[k] === 'string') &&
    Number.isSafeInteger(r.round) &&
    (r.round as number) >= 1 &&
    (r.downstream_state === undefined || typeof r.downstream_state === 'string') &&
    keys(r.forwarded) &&
    keys(r.declined) &&
    (r.held === undefined || typeof r.held === 'string')
  );
}

function isState(s: unknown): s is ApprovalRequestState {
  if (typeof s !== 'object' || s === null) return false;
  const r = s as Record<string, unknown>;
  const link = r.link as Record<string, unknown> | undefined;
  const linkOk = link === undefined || (typeof link === 'object' && link !== null && typeof link.token === 'string');
  return BOUND_FIELDS.every((k) => typeof r[k] === 'string') && Number.isSafeInteger(r.round) && (r.round as number) >= 1 && linkOk;
}
