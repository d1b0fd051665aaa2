/**
 * Where a vrpkit node answers, by name: the ways an agent asks it for its signed offer (Node
 * Tool Binding v0.1 §2: the Core VRP v0.1 §4 endpoint and the three bound tool surfaces) and
 * every resource it serves. Node, agent, conformance checker, CLI and platform metrics read these
 * lists; a new surface is one more name here and one folder in the node (`node/src/surfaces/<name>/`).
 */
import {
  A2A_JSONRPC_PATH,
  AGENT_CARD_PATH,
  BOOK_PATH,
  DISCOVERY_PATH,
  JWKS_PATH,
  MCP_ENDPOINT_PATH,
  OFFER_ENDPOINT_PATH,
  PROPERTY_PAGE_PATH,
  WEBMCP_TOOL_CALL_PATH,
} from './constants.js';

/** Node Tool Binding v0.1 §2: the offer endpoint (`http`, Core VRP v0.1 §4) and the tool surfaces MCP, A2A and WebMCP. */
export const SURFACES = ['http', 'mcp', 'a2a', 'webmcp'] as const;
export type Surface = (typeof SURFACES)[number];

/** Node Tool Binding v0.1 §2: the surfaces on which a node lists the bound capability under its name (§3). */
export const TOOL_SURFACES = ['mcp', 'a2a', 'webmcp'] as const satisfies readonly Surface[];
export type ToolSurface = (typeof TOOL_SURFACES)[number];

/**
 * Every resource a vrpkit node serves, by a short name that is also its metrics label: the
 * well-known documents (Core VRP v0.1 §2, §3; A2A), the offer endpoint (§4), the booking page
 * (§5.1) and the tool surfaces' endpoints (Node Tool Binding v0.1 §9).
 */
export const NODE_PATHS = {
  offer: OFFER_ENDPOINT_PATH,
  jwks: JWKS_PATH,
  discovery: DISCOVERY_PATH,
  mcp: MCP_ENDPOINT_PATH,
  a2a: A2A_JSONRPC_PATH,
  agent_card: AGENT_CARD_PATH,
  webmcp: WEBMCP_TOOL_CALL_PATH,
  page: PROPERTY_PAGE_PATH,
  book: BOOK_PATH,
} as const;
export type NodePathName = keyof typeof NODE_PATHS;
