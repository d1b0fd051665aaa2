import { canonicalSha256Base64url } from '@vrpkit/core';

/** The fields of an MCP tool definition the agent sees through the proxy (and nothing else). */
export const PINNED_TOOL_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export type PinnedToolDefinition = Partial<Record<(typeof PINNED_TOOL_FIELDS)[number], unknown>> & { name: string };

/**
 * A tool's definition as the proxy pins it, and its digest (JCS + SHA-256, base64url).
 *
 * The pin covers exactly what the agent is shown: name, title, description, inputSchema,
 * outputSchema and annotations. Other members (`_meta`, `icons`, `execution`) are not forwarded,
 * so no text reaches the model that a person did not pin. `execution` is dropped on purpose:
 * task-based calls would bypass the gated `tools/call` path.
 */
export function pinnedDefinition(tool: { name: string } & Record<string, unknown>): { definition: PinnedToolDefinition; digest: string } {
  const definition: Record<string, unknown> = {};
  for (const k of PINNED_TOOL_FIELDS) if (tool[k] !== undefined) definition[k] = tool[k];
  return { definition: definition as PinnedToolDefinition, digest: canonicalSha256Base64url(definition) };
}
