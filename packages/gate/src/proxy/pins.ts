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

/**
 * The MCP tool-name pattern (MCP specification, Tools: names of 1–128 characters from
 * A–Z a–z 0–9 `_` `.` `-`). A downstream tool named otherwise is refused outright: it is not
 * recorded, listed or pinnable, and every call to it is denied, so no control or bidi
 * character in a name can make one tool look like another to the person who pins it.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export function isMcpToolName(name: string): boolean {
  return MCP_TOOL_NAME.test(name);
}
