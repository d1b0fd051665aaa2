/**
 * The one bound capability, described once and reused by every surface (Node Tool Binding
 * §3–§5): MCP lists it, the A2A card names it as a skill, the WebMCP page registers it. One
 * name, one argument shape, one description source — so the three surfaces cannot drift.
 */
import { BOUND_TOOL_NAME, DISCOVERY_PATH, JWKS_PATH, offerToolInputSchema } from '@vrpkit/protocol';
import type { OfferService } from '../service/index.js';

/** §3: the exact string, no prefix, suffix or version. */
export const OFFER_TOOL_NAME = BOUND_TOOL_NAME;

export const OFFER_TOOL_TITLE = 'Get verified stay offer';

/**
 * §4 as JSON Schema, generated from the protocol's `OfferRequestSchema`: `check_in`, `check_out`,
 * `guests` required and nothing else; the camelCase aliases and `language` optional; no other
 * key. The node validates every argument itself with the same parser on every surface,
 * because neither WebMCP browsers nor a raw JSON-RPC caller validate against this schema.
 */
export const OFFER_TOOL_INPUT_SCHEMA: Readonly<Record<string, unknown>> = offerToolInputSchema();

/**
 * §5: the description says the tool does not verify the signature and names the JWKS path;
 * it never claims the offer is verified. Tool text is data to an agent (§8, §11), so it carries
 * no instruction beyond where the keys are.
 */
export function offerToolDescription(service: Pick<OfferService, 'origin'>): string {
  return (
    `Returns the signed verified stay offer of ${service.origin} (VRP v0.1 envelope: the offer and an ` +
    'Ed25519 compact JWS over it) for check_in, check_out and guests. This tool does NOT verify the ' +
    `signature: verify signature.jws against the node's JWKS at ${service.origin}${JWKS_PATH} ` +
    `(named by ${DISCOVERY_PATH}) before quoting anything.`
  );
}
