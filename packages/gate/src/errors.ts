import { VrpError } from '@vrpkit/core';

/**
 * The execution-finality failure codes the gate returns (Tool-Use Binding draft, error mapping:
 * "EF codes from [I-D.das-agentic] SHOULD be copied into the vendor error payload as
 * machine-readable strings"). The numbers collide across the draft family's profiles
 * (draft-das-ef-registries), so every denial also carries this profile id.
 */
export const GATE_PROFILE = 'tool-binding-02';

interface EfCodeEntry {
  /** Stable symbolic name (the reference implementations' spelling). */
  readonly name: string;
  /** The draft family's number, where one exists (the draft family's error registry); informative. */
  readonly number: string | null;
  /** Only a validation timeout may be retried, and only the validation (Tool-Use Binding draft, error mapping: "retryable=true only for EF-060"). */
  readonly retryable: boolean;
  /**
   * The model-visible message. Fixed text per code, so a deny can never carry another
   * user's data (Tool-Use Binding draft, security considerations: "Model-visible deny messages MUST NOT leak other users' data").
   */
  readonly message: string;
}

/**
 * The registry. Codes are spelled exactly as the Tool-Use Binding draft spells them (`EF_002`, `EF-060` with a
 * hyphen, `EF_SCOPE_MISMATCH` …); the codes the draft does not name use the `EF_<NAME>` form.
 */
export const EF_CODES = {
  EF_002: {
    name: 'NO_FINALITY_AUTHORITY',
    number: 'EF-002',
    retryable: false,
    message: 'No current authority exists for this tool call; it was not run.',
  },
  EF_005: {
    name: 'AUTHORITY_ALREADY_USED',
    number: 'EF-005',
    retryable: false,
    message: 'The authority for this tool call was already used; it was not run again.',
  },
  EF_040: {
    name: 'SINK_MISMATCH',
    number: 'EF-040',
    retryable: false,
    message: 'The authority for this tool call was issued for a different dispatch sink.',
  },
  'EF-060': {
    name: 'VALIDATION_TIMEOUT',
    number: 'EF-060',
    retryable: true,
    message: 'Validation of this tool call timed out; it was not run.',
  },
  EF_SCOPE_MISMATCH: {
    name: 'SCOPE_MISMATCH',
    number: 'EF-012',
    retryable: false,
    message: 'Live arguments are not the authorized digest.',
  },
  EF_DESTINATION_MISMATCH: {
    name: 'DESTINATION_MISMATCH',
    number: 'EF-020',
    retryable: false,
    message: 'The live destination is not the authorized destination.',
  },
  EF_INSTRUCTION_PROVENANCE_FAILURE: {
    name: 'INSTRUCTION_PROVENANCE_FAILURE',
    number: 'EF-024',
    retryable: false,
    message: 'This tool call follows an instruction whose provenance does not permit its consequence.',
  },
  EF_MALFORMED_ARGUMENTS: {
    name: 'MALFORMED_ARGUMENTS',
    number: 'EF-010',
    retryable: false,
    message: 'The tool call arguments are not valid I-JSON; it was not run.',
  },
  EF_MALFORMED_ACT: {
    name: 'MALFORMED_ACT',
    number: 'EF-010',
    retryable: false,
    message: 'The tool call could not be mapped to a valid candidate act; it was not run.',
  },
  EF_LIVE_STATE_UNREADABLE: {
    name: 'LIVE_STATE_UNREADABLE',
    number: null,
    retryable: false,
    message: 'The controller could not read the live page state this action depends on; it was not taken.',
  },
  EF_APPROVAL_REQUIRED: {
    name: 'ESCALATION_REQUIRED',
    number: 'EF-070',
    retryable: false,
    message: 'This tool call needs approval by a person before it can run; it was not run.',
  },
  EF_NOT_AUTHORIZED: {
    name: 'NOT_AUTHORIZED',
    number: null,
    retryable: false,
    message: 'Policy does not authorize this tool call; it was not run.',
  },
  EF_ENVELOPE_EXCEEDED: {
    name: 'ENVELOPE_EXCEEDED',
    number: 'EF-043',
    retryable: false,
    message: 'The tool call arguments are outside the limits policy sets for this tool; it was not run.',
  },
  EF_TOOL_NOT_PINNED: {
    name: 'TOOL_DEFINITION_NOT_PINNED',
    number: null,
    retryable: false,
    message: 'This tool is not pinned: a person has not reviewed its current definition; it was not run.',
  },
  EF_EPOCH_STALE: {
    name: 'GENERATION_STALE',
    number: 'EF-041',
    retryable: false,
    message: 'The authority for this tool call predates the current policy; it was not run.',
  },
  EF_REVOKED: {
    name: 'REVOCATION_ACTIVE',
    number: 'EF-062',
    retryable: false,
    message: 'The authority for this tool call was revoked; it was not run.',
  },
  EF_STORE_UNAVAILABLE: {
    name: 'CONSUME_STATE_UNAVAILABLE',
    number: 'EF-081',
    retryable: false,
    message: 'The authority store is unavailable; the tool call was not run.',
  },
  EF_FAIL_CLOSED: {
    name: 'FAIL_CLOSED',
    number: 'EF-080',
    retryable: false,
    message: 'The gate could not decide this tool call; it was not run.',
  },
  EF_EFFECT_RESULT_UNKNOWN: {
    name: 'EFFECT_RESULT_UNKNOWN',
    number: 'EF-090',
    retryable: false,
    message: 'The outcome of an earlier run of this tool call is unknown; it will not be run again.',
  },
} as const satisfies Record<string, EfCodeEntry>;

export type EfCode = keyof typeof EF_CODES;

export function isEfCode(code: unknown): code is EfCode {
  return typeof code === 'string' && Object.hasOwn(EF_CODES, code);
}

/** A gate error: `code` is always a registry code, `details` never hold raw arguments. */
export class GateError extends VrpError {
  declare readonly code: EfCode;
  constructor(code: EfCode, message?: string, details?: Record<string, unknown>) {
    super(code, message ?? EF_CODES[code].message, { profile: GATE_PROFILE, ...details });
  }
}

/** The result of `enforce(act, liveArgs)` (Tool-Use Binding draft, enforce() contract). */
export interface EnforceDecision {
  allow: boolean;
  authority_id?: string;
  code?: string;
  message?: string;
  retryable?: boolean;
}

/** The Tool-Use Binding draft's host error object, appended for the tool call instead of a result. */
export interface HostErrorObject {
  error: { code: string; message: string; retryable: boolean; invoked: false };
}

/**
 * The draft's host error object for a deny. The message comes from the registry, never from
 * the decision or the store, so no other user's data can reach the model; an unknown or
 * missing code is reported as EF_FAIL_CLOSED. `retryable` is true only for the registry's
 * retryable code (the validation timeout) and only when enforce said policy allows it.
 */
export function hostErrorObject(decision: EnforceDecision): HostErrorObject {
  const code: EfCode = isEfCode(decision.code) ? decision.code : 'EF_FAIL_CLOSED';
  const entry: EfCodeEntry = EF_CODES[code];
  return {
    error: { code, message: entry.message, retryable: entry.retryable && decision.retryable === true, invoked: false },
  };
}
