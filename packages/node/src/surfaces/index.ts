import type { Context, Hono } from 'hono';
import type { OfferService } from '../service.js';
import { mountA2a } from './a2a.js';
import { mountMcp } from './mcp.js';
import { mountPropertyPage } from './page.js';

export { A2A_JSONRPC_PATH, buildAgentCard } from './a2a.js';
export { MAX_JSON_DEPTH } from './body.js';
export { callOfferTool, MCP_MAX_BODY_BYTES, offerTool } from './mcp.js';
export { escapeHtml, PROPERTY_PAGE_PATH, renderPropertyPage } from './page.js';
export { OFFER_TOOL_INPUT_SCHEMA, OFFER_TOOL_NAME, offerToolDescription } from './tool.js';
export { WEBMCP_SCRIPT_PATH } from './webmcp-script.js';

/**
 * Mount the tool surfaces (MCP, A2A, WebMCP page) on the node's app. Node Tool Binding v0.1 §3–§6:
 * one offer service, thin adapters, all on the canonical domain.
 */
export function mountSurfaces(app: Hono, serviceOf: (c: Context) => OfferService): void {
  mountMcp(app, serviceOf);
  mountA2a(app, serviceOf);
  mountPropertyPage(app, serviceOf);
}
