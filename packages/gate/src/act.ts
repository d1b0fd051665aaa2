import { canonicalJson, sha256Base64url } from '@vrpkit/core';
import { z } from 'zod';
import { canonicalIJson, snapshotIJson } from './ijson.js';

/**
 * The Agent Candidate Act (Agent Candidate Act profile, candidate act schema, as the Tool-Use Binding draft reproduces it): the non-effective
 * wrapper around a model's tool block. The model may emit the block; only an act whose
 * authority was verified and consumed at the sink may reach invoke().
 */

export const ACT_TYPES = [
  'TOOL_CALL',
  'FUNCTION_CALL',
  'API_REQUEST',
  'BROWSER_ACTION',
  'SHELL_ACTION',
  'MESSAGE_SEND',
  'FILE_WRITE',
  'MEMORY_WRITE',
  'AGENT_DELEGATION',
  'PAYMENT_REQUEST',
  'COMPUTER_USE',
  'OTHER',
] as const;
export type ActType = (typeof ACT_TYPES)[number];

export const TOOL_PROTOCOLS = [
  'MCP',
  'HTTP_API',
  'LOCAL_FUNCTION',
  'BROWSER',
  'SHELL',
  'A2A',
  'ANTHROPIC_TOOL_USE',
  'OPENAI_TOOL_CALL',
  'OTHER',
] as const;
export type ToolProtocol = (typeof TOOL_PROTOCOLS)[number];

export const CONSEQUENCE_CLASSES = [
  'INFORMATIONAL',
  'DATA_DISCLOSURE',
  'PERSISTENT_STATE_CHANGE',
  'FINANCIAL',
  'NETWORK_CONTROL',
  'PHYSICAL',
  'COMMUNICATION',
  'OTHER',
] as const;
export type ConsequenceClass = (typeof CONSEQUENCE_CLASSES)[number];

/**
 * The sink types the Tool-Use Binding draft names: the host's tool dispatcher and the computer-use
 * controller. The candidate act schema does not enumerate `sink_type`, so an act from another
 * implementation may name another (any non-empty string validates); this gate treats every
 * type but BROWSER_CONTROLLER as a tool dispatch, and the sink id must be its own either way.
 */
export const SINK_TYPES = ['TOOL_DISPATCH', 'BROWSER_CONTROLLER'] as const;
export type SinkType = (typeof SINK_TYPES)[number];

/** Where the instruction behind the block came from (Tool-Use Binding draft, T-A: provenance=retrieval + COMMUNICATION is refused). */
export const PROVENANCE_SOURCES = ['user', 'system', 'developer', 'retrieval', 'tool_output', 'agent', 'unknown'] as const;
export type ProvenanceSource = (typeof PROVENANCE_SOURCES)[number];

export interface ArgumentsDigest {
  algorithm: 'SHA-256';
  /** base64url (unpadded) SHA-256 of the RFC 8785 canonical JSON of the arguments. */
  value: string;
  canonicalization: 'JCS';
}

export interface PolicyState {
  policy_epoch: number;
  authority_epoch: number;
  revocation_epoch: number;
}

export interface ActTool {
  tool_id: string;
  function_id: string;
  tool_endpoint?: string;
  tool_protocol?: ToolProtocol;
}

export interface ActAgent {
  agent_id: string;
  runtime_id?: string;
  model_id?: string;
  delegation_depth?: number;
}

export interface InitiatingPrincipal {
  /** The workspace org or user the host acts for (Tool-Use Binding draft, Anthropic mapping: "Workspace org → initiating_principal"). */
  principal_id: string;
  principal_type?: 'user' | 'workspace' | 'service';
}

export interface ActPurpose {
  purpose_id: string;
  declared_purpose?: string;
}

export interface ActDestination {
  /** Server identity, origin, recipient domain …: what a swapped sink must fail to match. */
  destination_id: string;
  destination_url?: string;
}

export interface ActFreshness {
  nonce: string;
  session_id?: string;
}

export interface InstructionProvenance {
  source_type: ProvenanceSource;
  source_ref?: string;
}

export interface FinalitySink {
  sink_id: string;
  /** The mappers write a `SinkType`; acts from elsewhere may carry another name. */
  sink_type: SinkType | (string & {});
}

export interface AgentCandidateAct {
  version: '1.0';
  object_type: 'agent_candidate_act';
  candidate_act_id: string;
  act_type: ActType;
  /** RFC 3339 UTC. */
  created_at: string;
  /** RFC 3339 UTC; an act past this instant is not enforced. */
  expires_at: string;
  initiating_principal: InitiatingPrincipal;
  agent: ActAgent;
  tool: ActTool;
  purpose: ActPurpose;
  arguments_digest: ArgumentsDigest;
  consequence_class: ConsequenceClass;
  policy_state: PolicyState;
  freshness: ActFreshness;
  finality_sink: FinalitySink;
  destination?: ActDestination;
  instruction_provenance?: InstructionProvenance;
}

const str = z.string().min(1);
const epoch = z.number().int().nonnegative();
const rfc3339 = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/, 'not an RFC 3339 date-time');

/** The candidate act JSON Schema (Agent Candidate Act profile) as zod; `additionalProperties: false` at the top level, as in the schema. */
export const agentCandidateActSchema = z.strictObject({
  version: z.literal('1.0'),
  object_type: z.literal('agent_candidate_act'),
  candidate_act_id: str,
  act_type: z.enum(ACT_TYPES),
  created_at: rfc3339,
  expires_at: rfc3339,
  initiating_principal: z.object({ principal_id: str, principal_type: z.enum(['user', 'workspace', 'service']).optional() }),
  agent: z.object({ agent_id: str, runtime_id: str.optional(), model_id: str.optional(), delegation_depth: epoch.optional() }),
  tool: z.object({ tool_id: str, function_id: str, tool_endpoint: str.optional(), tool_protocol: z.enum(TOOL_PROTOCOLS).optional() }),
  purpose: z.object({ purpose_id: str, declared_purpose: z.string().optional() }),
  // The schema fixes algorithm and canonicalization; the value is base64url (the draft's own example
  // is the placeholder "base64url-args"). A value of another length is accepted here and simply
  // never equals a live SHA-256 digest, so enforce denies it (EF_SCOPE_MISMATCH), never runs it.
  arguments_digest: z.strictObject({
    algorithm: z.literal('SHA-256'),
    value: z.string().regex(/^[A-Za-z0-9_-]+$/, 'not a base64url value'),
    canonicalization: z.literal('JCS'),
  }),
  consequence_class: z.enum(CONSEQUENCE_CLASSES),
  policy_state: z.strictObject({ policy_epoch: epoch, authority_epoch: epoch, revocation_epoch: epoch }),
  freshness: z.object({ nonce: str, session_id: str.optional() }),
  finality_sink: z.strictObject({ sink_id: str, sink_type: str }),
  destination: z.object({ destination_id: str, destination_url: str.optional() }).optional(),
  instruction_provenance: z.object({ source_type: z.enum(PROVENANCE_SOURCES), source_ref: str.optional() }).optional(),
}) satisfies z.ZodType<AgentCandidateAct>;

/**
 * Validate a candidate act against the profile's schema. Never throws: a bad act is data
 * (`EF_MALFORMED_ACT`), and the message names the failing field, not its value.
 */
export function validateAct(act: unknown): { ok: true; act: AgentCandidateAct } | { ok: false; code: 'EF_MALFORMED_ACT'; message: string } {
  const r = agentCandidateActSchema.safeParse(act);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(act)';
    return { ok: false, code: 'EF_MALFORMED_ACT', message: `${where}: ${issue?.message ?? 'invalid'}` };
  }
  if (Date.parse(r.data.expires_at) <= Date.parse(r.data.created_at)) {
    return { ok: false, code: 'EF_MALFORMED_ACT', message: 'expires_at: must be after created_at' };
  }
  // The act as given (zod would drop the extra members the schema allows inside nested objects).
  return { ok: true, act: act as AgentCandidateAct };
}

/**
 * The act's `arguments_digest` (Tool-Use Binding draft, OpenAI mapping: "parse arguments as JSON, then
 * canonicalize the object, then hash"): SHA-256 over RFC 8785 canonical JSON, base64url. A
 * `LiveArguments` snapshot carries its digest already and is not digested again.
 * Non-I-JSON values throw GateError('EF_MALFORMED_ARGUMENTS').
 */
export function digestArguments(args: unknown): ArgumentsDigest {
  if (LiveArguments.is(args)) return args.digest;
  // The I-JSON check and the JCS text in one walk (ijson.ts `canonicalIJson`).
  return digestOfCanonical(canonicalIJson(args));
}

/**
 * The live arguments as enforced: the deep, frozen plain copy whose canonical JSON was digested
 * (what invoke receives) and that digest (Tool-Use Binding draft, enforce() contract, MUSTs 1 and 2:
 * the tool runs with the arguments whose digest was checked, so a caller mutating its own object
 * after the consume changes nothing). The digest travels with the arguments as data: the adapter
 * snapshots once, the mapper puts the snapshot's digest in the act, dispatch checks against it —
 * one JCS + SHA-256 pass per call. Only `snapshotLiveArguments` makes one (a private brand, so an
 * object that merely looks like one is digested as arguments, never trusted).
 */
export class LiveArguments<A> {
  readonly #snapshot = true;
  private constructor(
    /** Deeply frozen: exactly what `digest` covers. */
    readonly args: A,
    readonly digest: ArgumentsDigest,
  ) {
    Object.freeze(this);
  }

  /** Whether `value` is a snapshot this module made (never a look-alike). */
  static is(value: unknown): value is LiveArguments<unknown> {
    return typeof value === 'object' && value !== null && #snapshot in value;
  }

  /** @internal use `snapshotLiveArguments`. */
  static take<A>(args: A): LiveArguments<A> {
    // One read of the caller's value (a getter answers once), checked as I-JSON; the digest and
    // the frozen arguments are both of that copy, made in the same walk.
    const { copy, canonical } = snapshotIJson(args);
    return new LiveArguments(copy as A, digestOfCanonical(canonical));
  }
}

/**
 * Digest the live arguments once and keep exactly what was digested; a snapshot is returned as it
 * is. Non-I-JSON values throw GateError('EF_MALFORMED_ARGUMENTS').
 */
export function snapshotLiveArguments<A>(args: A | LiveArguments<A>): LiveArguments<A> {
  return LiveArguments.is(args) ? (args as LiveArguments<A>) : LiveArguments.take(args as A);
}

/**
 * The JCS SHA-256 (base64url) of the whole act, as validated (the evidence's `act_digest`). A
 * validated act is I-JSON but for members the schema lets through inside its nested objects; one
 * that holds anything else (a Date, an integer past 2^53) is digested by `canonicalJson`, the
 * reference, which is what `canonicalIJson` equals on I-JSON values.
 */
export function actDigest(act: AgentCandidateAct): string {
  let canonical: string;
  try {
    canonical = canonicalIJson(act);
  } catch {
    canonical = canonicalJson(act);
  }
  return sha256Base64url(canonical);
}

function digestOfCanonical(canonical: string): ArgumentsDigest {
  return { algorithm: 'SHA-256', value: sha256Base64url(canonical), canonicalization: 'JCS' };
}
