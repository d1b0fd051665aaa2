/**
 * AgentFinalityAuthority: the scoped, single-use authority the gate issues for one
 * candidate act (Execution Handle draft, the handle object, reconciled with the Agent Candidate Act fields), and
 * its signed form — an Ed25519 compact JWS — so a cooperating sink can check it itself
 * (Tool-Use Binding draft, MCP servers: "Cooperating servers MAY later verify the authority object").
 *
 * The signature proves who issued it and what it is bound to; it does not make the
 * authority single-use. Single use is the store's consume (gate.ts); a cooperating sink
 * that accepts `verifyAuthority` alone must keep its own consumed-id record.
 */
import {
  createJwsSigner,
  decodeJwsPayload,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
  importEd25519PublicKey,
  type JwsSigner,
  parseCompactJws,
  verifyEd25519Signature,
} from '@vrpkit/core';
import type { AgentCandidateAct, ArgumentsDigest, ConsequenceClass, PolicyState } from './act.js';
import { digestArguments } from './act.js';
import { type EfCode, type GATE_PROFILE, GateError } from './errors.js';

/** The JWS `typ` of a signed authority. */
export const AUTHORITY_JWS_TYPE = 'agent-finality-authority+jws';

/** Where a gate that forwards its authority puts it: an MCP request's `_meta` key (reverse-DNS prefixed, as MCP asks of custom keys). */
export const AUTHORITY_META_KEY = 'dev.vrpkit/agent-finality-authority';
/** … and the HTTP request header (the fetch wrapper). */
export const AUTHORITY_HEADER = 'Agent-Finality-Authority';

export interface AgentFinalityAuthority {
  version: '1.0';
  object_type: 'agent_finality_authority';
  profile: typeof GATE_PROFILE;
  authority_id: string;
  candidate_act_id: string;
  /** The validation evidence committed before this authority existed (evidence before authority). */
  evidence_id: string;
  arguments_digest: ArgumentsDigest;
  tool: { tool_id: string; function_id: string; tool_endpoint?: string };
  destination_id?: string;
  /** The one dispatch sink that may consume it. */
  sink_id: string;
  consequence_class: ConsequenceClass;
  /** RFC 3339 UTC with milliseconds. */
  issued_at: string;
  expires_at: string;
  policy_state: PolicyState;
  reuse_policy: 'SINGLE_USE';
  /** The person who approved an escalated act, when there was one. */
  approver?: string;
}

/** Sign an authority as a compact JWS with the gate's Ed25519 key. */
export function signAuthority(authority: AgentFinalityAuthority, signer: JwsSigner): string {
  return signer.sign(JSON.stringify(authority), { typ: AUTHORITY_JWS_TYPE });
}

export function authoritySigner(key: { privateJwk: Ed25519PrivateJwk; kid: string }): JwsSigner {
  return createJwsSigner(key.privateJwk, key.kid);
}

export type VerifyAuthorityResult =
  | { ok: true; authority: AgentFinalityAuthority; kid: string }
  | { ok: false; code: EfCode; reason: string };

export interface VerifyAuthorityOptions {
  /** The issuer's public keys (a JWKS `keys` array). The JWS `kid` selects one. */
  keys: readonly Ed25519PublicJwk[];
  /** The verifying sink's OWN id; never taken from the request. */
  sinkId: string;
  /** Epoch milliseconds. */
  now: number;
  /** The live act the call claims to execute; when given, every binding is compared. */
  act?: AgentCandidateAct;
  /** The live arguments; when given, their digest is recomputed and compared (MUST 1–2). */
  liveArgs?: unknown;
}

/**
 * Check a signed authority at a cooperating sink: signature by a known key, then expiry,
 * sink, and (when given) the live act's and live arguments' bindings. Never throws for a
 * bad authority: returns `{ ok: false, code }` with a registry code.
 */
export function verifyAuthority(jws: string, opts: VerifyAuthorityOptions): VerifyAuthorityResult {
  const fail = (code: EfCode, reason: string): VerifyAuthorityResult => ({ ok: false, code, reason });
  const parsed = parseCompactJws(jws);
  if (!parsed.ok) return fail('EF_002', `authority is not a compact JWS: ${parsed.reason}`);
  const { header, signingInput, signature, payloadSegment } = parsed.jws;
  if (header.alg !== 'EdDSA' || header.typ !== AUTHORITY_JWS_TYPE || typeof header.kid !== 'string')
    return fail('EF_002', 'authority header is not an EdDSA authority JWS with a kid');
  const jwk = opts.keys.find((k) => k.kid === header.kid);
  const key = jwk ? importEd25519PublicKey(jwk) : null;
  if (!key) return fail('EF_002', 'authority signed by an unknown key');
  if (!verifyEd25519Signature(signingInput, signature, key)) return fail('EF_002', 'authority signature does not verify');
  let authority: AgentFinalityAuthority;
  try {
    authority = JSON.parse(decodeJwsPayload(payloadSegment) ?? '') as AgentFinalityAuthority;
  } catch {
    return fail('EF_002', 'authority payload is not JSON');
  }
  if (authority?.object_type !== 'agent_finality_authority' || authority.reuse_policy !== 'SINGLE_USE')
    return fail('EF_002', 'payload is not an agent finality authority');
  const expires = Date.parse(authority.expires_at);
  if (!Number.isFinite(expires) || expires <= opts.now) return fail('EF_002', 'authority expired');
  if (authority.sink_id !== opts.sinkId) return fail('EF_040', 'authority bound to another sink');
  if (opts.act) {
    const act = opts.act;
    if (act.candidate_act_id !== authority.candidate_act_id) return fail('EF_002', 'authority issued for another act');
    if (
      (act.destination?.destination_id ?? undefined) !== authority.destination_id ||
      act.tool.tool_endpoint !== authority.tool.tool_endpoint
    )
      return fail('EF_DESTINATION_MISMATCH', 'live destination differs');
    if (
      act.tool.tool_id !== authority.tool.tool_id ||
      act.tool.function_id !== authority.tool.function_id ||
      act.arguments_digest.value !== authority.arguments_digest.value ||
      act.consequence_class !== authority.consequence_class
    )
      return fail('EF_SCOPE_MISMATCH', 'live act differs from the authorized scope');
  }
  if (opts.liveArgs !== undefined) {
    let live: ArgumentsDigest;
    try {
      live = digestArguments(opts.liveArgs);
    } catch (e) {
      return fail(e instanceof GateError ? e.code : 'EF_MALFORMED_ARGUMENTS', 'live arguments are not I-JSON');
    }
    if (live.value !== authority.arguments_digest.value) return fail('EF_SCOPE_MISMATCH', 'live arguments are not the authorized digest');
  }
  return { ok: true, authority, kid: header.kid };
}
