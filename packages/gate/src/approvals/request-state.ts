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
}

/** How long a sealed state is accepted unless configured: the approval link's default lifetime. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 10 * 60_000;

/** A state longer than this is refused unread (a real one is well under 1 KiB). */
const MAX_SEALED_LENGTH = 4096;

const AUDIENCE = 'vrp-gate:request-state';
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
  return {
    async seal(state) {
      const now = Math.floor(clock.now() / 1000);
      const sealed: ApprovalRequestState = {
        ...(Object.fromEntries(BOUND_FIELDS.map((k) => [k, state[k]])) as ExpectedRequestState),
        round: state.round,
        ...(state.link ? { link: { token: state.link.token, expires_at: state.link.expires_at } } : {}),
      };
      return await new EncryptJWT({ vrp: sealed })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setAudience(AUDIENCE)
        .setSubject(state.principal)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .encrypt(key);
    },
    async open(sealed, expected) {
      if (sealed.length > MAX_SEALED_LENGTH) return { ok: false, reason: 'malformed' };
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtDecrypt(sealed, key, {
          ...ALGORITHMS,
          audience: AUDIENCE,
          currentDate: new Date(clock.now()),
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (e) {
        return { ok: false, reason: (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'malformed' };
      }
      const state = payload.vrp as ApprovalRequestState | undefined;
      if (!isState(state) || payload.sub !== state.principal) return { ok: false, reason: 'malformed' };
      // Server Requirements 5: the originating request and the principal must be this call's.
      const matches = BOUND_FIELDS.every((k) => state[k] === expected[k]);
      return matches ? { ok: true, state } : { ok: false, reason: 'foreign' };
    },
  };
}

function isState(s: unknown): s is ApprovalRequestState {
  if (typeof s !== 'object' || s === null) return false;
  const r = s as Record<string, unknown>;
  const link = r.link as Record<string, unknown> | undefined;
  const linkOk = link === undefined || (typeof link === 'object' && link !== null && typeof link.token === 'string');
  return BOUND_FIELDS.every((k) => typeof r[k] === 'string') && Number.isSafeInteger(r.round) && (r.round as number) >= 1 && linkOk;
}
