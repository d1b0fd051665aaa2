/**
 * The node's surfaces (Node Tool Binding v0.1 §2: the Core VRP v0.1 §4 endpoint and the tool
 * surfaces MCP, A2A and WebMCP), one folder each, mounted on the node's one app over the one offer
 * service. A new surface is a name in protocol's `SURFACES`, a folder shaped like its neighbours
 * (`surfaces/<name>/index.ts` exporting its mount), and one line below.
 */
import { SURFACES, type Surface } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { mountA2a } from './a2a/index.js';
import { mountOfferEndpoint } from './http/index.js';
import { mountMcp, type UcpBindingFor } from './mcp/index.js';
import type { ServiceOf, SurfaceMount } from './types.js';
import { mountWebMcp } from './webmcp/index.js';

/** The registry: every surface protocol names, by name (a name without a mount does not compile). */
export const NODE_SURFACES: { readonly [S in Surface]: SurfaceMount } = {
  http: mountOfferEndpoint,
  mcp: mountMcp,
  a2a: mountA2a,
  webmcp: mountWebMcp,
};

/**
 * Mount every surface on the node's app. Node Tool Binding v0.1 §3–§6: one offer service, thin
 * adapters, all on the canonical domain. With `ucpOf`, MCP also serves the UCP Booking tools (mcp/ucp.ts).
 */
export function mountSurfaces(app: Hono, serviceOf: ServiceOf, ucpOf?: UcpBindingFor): void {
  for (const name of SURFACES) {
    if (name === 'mcp') mountMcp(app, serviceOf, ucpOf);
    else NODE_SURFACES[name](app, serviceOf);
  }
}
