import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
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
      : new StreamableHTTPClientTransport(new URL(spec.url), {
          requestInit: { headers: { ...spec.headers } },
          fetch: fetchWithOwnSignals(),
        });
  await client.connect(transport);
  return client;
}

/**
 * `fetch` for the downstream's Streamable HTTP transport. The SDK hands every request the
 * transport's one long-lived AbortSignal (aborted on close), and undici adds an abort listener
 * to it per request that goes only when that request is garbage-collected: with thousands in
 * between, each new request scans them all (`getEventListeners`), and past 1500 Node prints a
 * MaxListenersExceededWarning per request on stderr, the proxy's JSON-lines log. Here each
 * request gets a signal of its own and the long-lived one a single listener that aborts those
 * still in use: the same cancellation on close, at a constant cost per request.
 */
export function fetchWithOwnSignals(base: FetchLike = fetch): FetchLike {
  // A request's controller lives as long as its signal (held by the request while it runs).
  const owners = new WeakMap<AbortSignal, AbortController>();
  const inUse = new WeakMap<AbortSignal, Set<WeakRef<AbortSignal>>>();
  const collected = new FinalizationRegistry<{ set: Set<WeakRef<AbortSignal>>; ref: WeakRef<AbortSignal> }>(({ set, ref }) =>
    set.delete(ref),
  );
  return (url, init) => {
    const outer = init?.signal;
    if (!outer || outer.aborted) return base(url, init);
    let set = inUse.get(outer);
    if (!set) {
      const refs = new Set<WeakRef<AbortSignal>>();
      outer.addEventListener(
        'abort',
        () => {
          for (const ref of refs) {
            const signal = ref.deref();
            if (signal) owners.get(signal)?.abort(outer.reason);
          }
          refs.clear();
        },
        { once: true },
      );
      inUse.set(outer, refs);
      set = refs;
    }
    const own = new AbortController();
    const ref = new WeakRef(own.signal);
    owners.set(own.signal, own);
    set.add(ref);
    collected.register(own.signal, { set, ref });
    return base(url, { ...init, signal: own.signal });
  };
}
