/**
 * JSON-RPC batches on an MCP endpoint (issue 36 defect 12). MCP revision 2025-03-26 allowed them;
 * 2025-06-18 removed batching ("Remove support for JSON-RPC batching", its changelog), so for
 * that revision and later a batch is not a valid message at all. Under 2025-03-26 one batch
 * could carry a hundred tool calls in 16 KB and draw a 110× larger answer, so the work per
 * request is capped. One rule for every MCP listener: the node's and the platform's surfaces and
 * the gate proxy's HTTP listener.
 */

/** Most messages a batch may hold where the revision still allows batches. */
export const MCP_MAX_BATCH_ITEMS = 16;

/** The first MCP revision without JSON-RPC batching. */
const BATCHLESS_REVISION = '2025-06-18';

/**
 * MCP Streamable HTTP, protocol version header: without `MCP-Protocol-Version` a server assumes
 * 2025-03-26 (the revision before the header existed).
 */
const REVISION_WITHOUT_HEADER = '2025-03-26';

/**
 * Why `body` (a parsed HTTP POST body) must be refused with JSON-RPC -32600 Invalid Request
 * under the `MCP-Protocol-Version` header `protocolVersion`, or undefined when it is not a batch
 * or an allowed one. Revisions are dates, so they compare as strings. An empty batch is refused
 * under every revision (JSON-RPC 2.0 §6: it is one Invalid Request).
 */
export function mcpBatchRefusal(body: unknown, protocolVersion: string | null | undefined): string | undefined {
  if (!Array.isArray(body)) return undefined;
  if (body.length === 0) return 'Invalid Request: an empty batch';
  const revision = protocolVersion || REVISION_WITHOUT_HEADER;
  if (revision >= BATCHLESS_REVISION)
    return `Invalid Request: JSON-RPC batches are not part of MCP ${revision}; send one message per request`;
  if (body.length > MCP_MAX_BATCH_ITEMS) return `Invalid Request: a batch holds at most ${MCP_MAX_BATCH_ITEMS} messages`;
  return undefined;
}
