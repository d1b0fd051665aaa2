/**
 * VRP Composition Profile — MCP (profile version 1.0).
 *
 * Pure functions only: the node uses them to build the transport assertion it signs, the
 * agent uses them to bind a signature-verified assertion to the call it actually sent.
 * Signing and signature verification live elsewhere (node `receipt.ts`, agent `verifyReceipt`).
 */
import { canonicalSha256Hex, isRecord } from '@vrpkit/core';
import { MCP_PROFILE_VERSION, MCP_TRANSPORT_ASSERTION_TYPE } from './constants.js';
import { ProtocolError } from './errors.js';
import { OFFER_ARGUMENT_ALIASES } from './offer-request.js';
import { type IsoDate, type McpTransportAssertion, McpTransportAssertionSchema } from './types.js';

/** Profile "As a receipt attestation": the `layer` of the transport attestation. */
export const MCP_TRANSPORT_LAYER = 'transport';
/** VRP receipt envelope v1 layer name of the attestation over the signed offer itself. */
export const OFFER_LAYER = 'offer';

/**
 * The `_meta` key under which a vrpkit node returns the receipt in an MCP `tools/call` result.
 * MCP (basic/index, "General fields: `_meta`") allows a `prefix/name` key whose prefix is
 * dot-separated labels followed by `/`, and reserves only prefixes whose labels include
 * `modelcontextprotocol` or `mcp`. `vrp/` is a legal, unreserved prefix.
 */
export const RECEIPT_META_KEY = 'vrp/receipt';

/** Tool-call arguments are not a JSON object, or carry an alias and its snake_case key with different values. */
export class ToolArgumentsError extends ProtocolError {}

/**
 * Profile, "Argument key casing — NORMATIVE": rename `checkIn`→`check_in` and
 * `checkOut`→`check_out` (top level only; every other key, optional ones included, is kept as
 * the call carried it). Returns a new object; the input is not modified.
 *
 * An alias next to its snake_case key is accepted only when both carry the same value (the
 * call then means one thing); different values are ambiguous and throw
 * `conflicting_argument_alias`, so node and agent never hash two readings of one call.
 */
export function normalizeToolArguments(args: unknown): Record<string, unknown> {
  if (!isRecord(args)) throw new ToolArgumentsError('invalid_tool_arguments');
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(args)) {
    const target = OFFER_ARGUMENT_ALIASES.get(key) ?? key;
    if (target !== key && Object.hasOwn(args, target)) {
      if (!sameJsonValue(args[target], value)) {
        throw new ToolArgumentsError('conflicting_argument_alias', { key, target });
      }
      continue; // the snake_case key already carries this value
    }
    entries.push([target, value]);
  }
  // fromEntries defines own properties, so a "__proto__" key stays data, never a prototype.
  return Object.fromEntries(entries);
}

function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return canonicalSha256Hex(a) === canonicalSha256Hex(b);
  } catch {
    return false;
  }
}

/**
 * `hashArguments(args)`: lowercase hex SHA-256 of the RFC 8785 canonical JSON of `args`
 * (MCP Composition Profile, assertion object). It does not normalise key casing —
 * that is the caller's job (profile: "normalization is the caller's responsibility"); call
 * `normalizeToolArguments` first. Throws `not_canonicalizable` for values JSON cannot carry.
 */
export function hashArguments(args: unknown): string {
  return canonicalSha256Hex(args);
}

/** What an observer claims it sent: the tool name and the `arguments` object of its `tools/call`. */
export interface ObservedToolCall {
  tool: string;
  arguments: unknown;
}

/**
 * `assertionMatchesToolCall(assertion, {tool, arguments})` (profile, "Binding the assertion
 * to an observed call"): same tool and same `arguments_sha256`. Signature validity is not
 * checked here (that is `verifyReceipt`'s job), and casing is not normalised (the profile puts
 * that on the caller). Arguments that cannot be hashed never bind.
 */
export function assertionMatchesToolCall(assertion: unknown, observed: ObservedToolCall): boolean {
  if (!isRecord(assertion)) return false;
  let digest: string;
  try {
    digest = hashArguments(observed.arguments);
  } catch {
    return false;
  }
  return assertion.tool === observed.tool && assertion.arguments_sha256 === digest;
}

export interface McpTransportAssertionInput {
  tool: string;
  /** The call's `arguments` object as the node received it (aliases are normalised here). */
  arguments: unknown;
  /** RFC 3339 UTC instant the node served the result. */
  servedAt: string;
  /** The node's canonical domain. */
  issuer: string;
  offerRef?: string;
  sessionId?: string;
}

/**
 * `buildMcpTransportAssertion` (profile, "Assertion object"). Members in the reference order;
 * optional ones are omitted when undefined. `arguments_sha256` is taken over the arguments
 * after alias normalisation (profile, "Argument key casing — NORMATIVE").
 */
export function buildMcpTransportAssertion(input: McpTransportAssertionInput): McpTransportAssertion {
  const assertion: McpTransportAssertion = {
    vrp_mcp_profile_version: MCP_PROFILE_VERSION,
    type: MCP_TRANSPORT_ASSERTION_TYPE,
    tool: input.tool,
    arguments_sha256: hashArguments(normalizeToolArguments(input.arguments)),
    served_at: input.servedAt,
    issuer: input.issuer,
  };
  if (input.offerRef !== undefined) assertion.offer_ref = input.offerRef;
  if (input.sessionId !== undefined) assertion.session_id = input.sessionId;
  return assertion;
}

/**
 * Read a decoded transport-assertion payload, or `null` when it is not one (wrong profile
 * version or type, a required member missing or mistyped, an optional member mistyped).
 * Extra members are ignored, as the profile does not close the object.
 */
export function readMcpTransportAssertion(value: unknown): McpTransportAssertion | null {
  return McpTransportAssertionSchema.safeParse(value).success ? (value as McpTransportAssertion) : null;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The `ref` correlator vrpkit puts on both the offer and the transport attestation (and the
 * assertion's `offer_ref`): `offer:{canonical_domain}:{check_in}/{end}`, the shape of the
 * receipt vectors (`offer:villaakerlyckan.se:2026-09-02/05`). `{end}` is `check_out` in ISO 8601
 * abbreviated interval form: the leading components equal to `check_in`'s are dropped — `DD`
 * in the same month, `MM-DD` in the same year, the full date otherwise. It names the stay, not
 * one signed offer: two offers for the same dates share it.
 */
export function offerRef(canonicalDomain: string, checkIn: IsoDate, checkOut: IsoDate): string {
  const a = ISO_DATE.exec(checkIn);
  const b = ISO_DATE.exec(checkOut);
  if (!a || !b) throw new ProtocolError('invalid_date');
  const end = a[1] !== b[1] ? checkOut : a[2] !== b[2] ? `${b[2]}-${b[3]}` : b[3];
  return `offer:${canonicalDomain}:${checkIn}/${end}`;
}
