import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalSha256Base64url } from '@vrpkit/core';

/** The MCP server the proxy fronts: a child process over stdio, or a Streamable HTTP endpoint. */
export type DownstreamSpec =
  | { kind: 'stdio'; command: string; args: readonly string[] }
  /** `headers` hold the downstream's credentials: they live in the proxy only, never reach the agent or a log. */
  | { kind: 'http'; url: string; headers: Readonly<Record<string, string>> };

/**
 * The server identity that enters every act's `tool_endpoint` and `destination` (Tool-Use
 * Binding draft, MCP mapping: "Server identity MUST enter destination or tool.tool_endpoint so a
 * swapped server with the same tool name fails sink or destination match") and keys the
 * tool pins. `serverInfo` is self-asserted, so the identity is the transport endpoint: for
 * stdio the proxy name plus a digest of the command line (arguments may hold secrets, so
 * they are not spelled out), for HTTP the URL without credentials or fragment.
 */
export function serverIdentity(spec: DownstreamSpec, name: string): string {
  if (spec.kind === 'stdio') return `stdio:${name}#${canonicalSha256Base64url({ command: spec.command, args: spec.args })}`;
  const u = new URL(spec.url);
  u.username = '';
  u.password = '';
  u.hash = '';
  return u.toString();
}

/**
 * Connect the proxy's client to the downstream server (official SDK `Client`). The client
 * declares no capabilities: the downstream cannot ask the agent for roots, sampling or
 * elicitation through the proxy (roots would let the agent side widen, e.g., the filesystem
 * server's allowed directories). A stdio child inherits the proxy's environment, which is
 * where its credentials live; its own stderr passes through unchanged.
 */
export async function connectDownstream(spec: DownstreamSpec): Promise<Client> {
  const client = new Client({ name: 'vrp-gate-proxy', version: '0.1.0' }, { capabilities: {} });
  const transport =
    spec.kind === 'stdio'
      ? new StdioClientTransport({
          command: spec.command,
          args: [...spec.args],
          env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
          stderr: 'inherit',
        })
      : new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: { ...spec.headers } } });
  await client.connect(transport);
  return client;
}
