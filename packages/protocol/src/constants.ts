/** VRP constants, spelled exactly as the specs spell them. */

/** Core VRP v0.1 §2: discovery `protocol`. */
export const PROTOCOL = 'vacation-rental-protocol';
/** Core VRP v0.1 §2/§5: `protocol_version`. */
export const PROTOCOL_VERSION = '0.1';
/** Node Tool Binding v0.1 §3: the one bound capability name, identical on MCP, A2A and WebMCP. */
export const BOUND_TOOL_NAME = 'get_verified_stay_offer';
/** Core VRP v0.1 §5: envelope and payload kinds. */
export const ENVELOPE_KIND = 'signed_verified_stay_offer';
export const OFFER_KIND = 'verified_stay_offer';
/** Well-known paths (Core VRP v0.1 §2, §3; A2A). */
export const DISCOVERY_PATH = '/.well-known/vacation-rental.json';
export const JWKS_PATH = '/.well-known/jwks.json';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
/** The offer endpoint path vrpkit nodes serve (Core VRP v0.1 §4 leaves the path to the node; the discovery document names it). */
export const OFFER_ENDPOINT_PATH = '/api/verified-stay-offer';
/** The MCP endpoint path vrpkit nodes serve (Node Tool Binding v0.1 §9). */
export const MCP_ENDPOINT_PATH = '/mcp';
/** The A2A JSON-RPC endpoint vrpkit nodes serve; the agent card at `AGENT_CARD_PATH` names it (Node Tool Binding v0.1 §9). */
export const A2A_JSONRPC_PATH = '/a2a/jsonrpc';
/** The page of a vrpkit node that registers the WebMCP tool (Node Tool Binding v0.1 §9: "the node's own pages"). */
export const PROPERTY_PAGE_PATH = '/';
/** The booking landing page a vrpkit node's `direct_booking_url` points at, on its canonical origin (Core VRP v0.1 §5.1). */
export const BOOK_PATH = '/book';
/**
 * Where a vrpkit node page's WebMCP tool sends its `execute()` input (a JSON POST on the node's own
 * origin, Node Tool Binding v0.1 §6), so the node parses it exactly as MCP and A2A arguments.
 */
export const WEBMCP_TOOL_CALL_PATH = '/webmcp/get_verified_stay_offer';
/** Core VRP v0.1 §3.1: a verifier never caches a JWKS longer than this. */
export const JWKS_MAX_CACHE_SECONDS = 300;
/** The canonical phrase an agent uses when an offer is safe to quote (verification-result schema, `required_phrase_when_safe`). */
export const CANONICAL_PHRASE = 'I found the official host-domain verified offer for this stay.';
/** Receipt envelope v1 and the MCP composition profile. */
export const RECEIPT_VERSION = '1.0';
export const MCP_PROFILE_VERSION = '1.0';
export const MCP_TRANSPORT_ASSERTION_TYPE = 'vrp.mcp.transport.1';
