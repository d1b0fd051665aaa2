import {
  type CallToolResult,
  Client,
  type OAuthClientProvider,
  type PriorDiscovery,
  SdkError,
  SdkErrorCode,
  type StandardSchemaV1,
  type StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { canonicalSha256Base64url } from '@vrpkit/core';
import { Agent } from 'undici';
import { DirectHttpClientTransport } from './downstream-http.js';

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
 * they are not spelled out), for HTTP the URL without credentials or fragment, its query (which
 * often carries an API key) replaced by a digest of it. The identity is logged, audited, shown on
 * the approvals page and sent with `--notify-url`, so it holds no secret; two upstreams that
 * differ only in their query stay two servers.
 */
export function serverIdentity(spec: DownstreamSpec, name: string): string {
  if (spec.kind === 'stdio') return `stdio:${name}#${canonicalSha256Base64url({ command: spec.command, args: spec.args })}`;
  const u = new URL(spec.url);
  const query = u.search;
  u.username = '';
  u.password = '';
  u.hash = '';
  u.search = '';
  return query ? `${u}#${canonicalSha256Base64url({ query })}` : u.toString();
}

/**
 * The era verdict last negotiated with each downstream, by what identifies it on the wire (the
 * command line for stdio, the URL for HTTP; never the credentials). A respawned or reconnected
 * downstream skips the probe and speaks the revision it spoke before (the SDK's `connect({ prior })`:
 * a modern verdict adopts the remembered `server/discover` result with no round trip).
 */
const negotiated = new Map<string, PriorDiscovery>();

function negotiationKey(spec: DownstreamSpec): string {
  return spec.kind === 'stdio' ? canonicalSha256Base64url({ command: spec.command, args: spec.args }) : spec.url;
}

/**
 * What the proxy's client declares to every downstream: elicitation in both modes, passed to the
 * agent of the call that caused it when that agent declared it, declined otherwise
 * (downstream-input.ts; issue 32 item 5). No sampling (deprecated) and no roots: roots would let
 * the agent side widen, e.g., the filesystem server's allowed directories.
 */
export const DOWNSTREAM_CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} } };

/**
 * Connect the proxy's client to the downstream server (official SDK v2 `Client`). The revision is
 * negotiated once per server identity (MCP 2026-07-28, lifecycle: a client probes with
 * `server/discover` and falls back to `initialize` when the server does not speak it) and
 * remembered for reconnects. The client declares elicitation only (`DOWNSTREAM_CLIENT_CAPABILITIES`).
 * A stdio child inherits the proxy's environment, which is where its credentials live; its own
 * stderr passes through unchanged.
 */
export async function connectDownstream(
  spec: DownstreamSpec,
  authProvider?: OAuthClientProvider,
  o: { probe?: boolean } = {},
): Promise<Client> {
  const key = negotiationKey(spec);
  // `probe`: negotiate on the wire even when the era is remembered (downstream OAuth: the first request's 401 starts the authorization).
  const prior = o.probe ? undefined : negotiated.get(key);
  try {
    return await connectWith(spec, key, prior, authProvider);
  } catch (e) {
    // A server built on an SDK that exits on any request before `initialize` closes the pipe on
    // the probe: it is a 2025 server, started again (it is gone) for the `initialize` handshake.
    if (prior || !(e instanceof SdkError) || e.code !== SdkErrorCode.EraNegotiationFailed || spec.kind !== 'stdio') throw e;
    negotiated.set(key, { kind: 'legacy' });
    return connectWith(spec, key, { kind: 'legacy' });
  }
}

async function connectWith(
  spec: DownstreamSpec,
  key: string,
  prior: PriorDiscovery | undefined,
  authProvider?: OAuthClientProvider,
): Promise<Client> {
  const client = new DownstreamClient(
    { name: 'vrp-gate-proxy', version: '0.1.0' },
    {
      capabilities: DOWNSTREAM_CLIENT_CAPABILITIES,
      versionNegotiation: { mode: 'auto' },
      // A 2026-07-28 server's InputRequiredResult comes back to the call pipeline (downstream-input.ts):
      // never fulfilled inside the SDK, where no call, act or agent is known.
      inputRequired: { autoFulfill: false },
    },
  );
  const transport =
    spec.kind === 'stdio'
      ? new InPlaceStdioTransport({
          command: spec.command,
          args: [...spec.args],
          env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
          stderr: 'inherit',
        })
      : httpTransport(spec.url, spec.headers, authProvider);
  await client.connect(transport, prior ? { prior } : {});
  const discover = client.getDiscoverResult();
  negotiated.set(key, client.getProtocolEra() === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' });
  return client;
}

/**
 * The proxy's client to the downstream: the SDK's `Client`, with the SDK's own check of a
 * `tools/call` result for the negotiated revision made once. `request()` without a result schema
 * builds that check again for every request, and first asks whether the method has one by
 * validating `undefined` against it — a failed parse and its error message on every call (about
 * 5 % of an allowed stdio call's CPU in the bench/gateway profile). The check is the SDK's
 * (its era codec's `validateResult`, worded as its own spec-method path words a failure).
 */
export class DownstreamClient extends Client {
  #toolsCallResult: { era: string; schema: StandardSchemaV1<unknown, CallToolResult> } | undefined;

  /** The SDK's `tools/call` result check on the negotiated revision, as a result schema for `request()`. */
  toolsCallResult(): StandardSchemaV1<unknown, CallToolResult> {
    const codec = this._wireCodec();
    if (this.#toolsCallResult?.era !== codec.era) {
      const validate = (value: unknown): StandardSchemaV1.Result<CallToolResult> => {
        const outcome = codec.validateResult('tools/call', value);
        if (outcome.ok) return { value: outcome.value as CallToolResult };
        return { issues: [{ message: outcome.reason === 'invalid' ? outcome.message : 'not-in-era: tools/call' }] };
      };
      this.#toolsCallResult = { era: codec.era, schema: { '~standard': { version: 1, vendor: 'mcp-wire-codec', validate } } };
    }
    return this.#toolsCallResult.schema;
  }
}

/**
 * The SDK's stdio transport, subclassed so the `server/discover` probe runs on the child itself:
 * the SDK probes the exact base class on a second, short-lived child spawned from the same command
 * line, and a downstream is never started twice to be probed (its start may have effects: a lock,
 * a migration, a licence seat). A 2025-only child answers the probe with an error (or not at all,
 * then the probe's timeout) and the `initialize` handshake follows on the same pipe.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

/**
 * The downstream's Streamable HTTP transport, on keep-alive connections of its own that close with
 * it; with `authProvider` (downstream OAuth, auth/downstream-oauth.ts) the SDK runs the MCP
 * authorization flow on a 401 and sends the provider's token on every request.
 */
function httpTransport(
  url: string,
  headers: Readonly<Record<string, string>>,
  authProvider?: OAuthClientProvider,
): StreamableHTTPClientTransport {
  const dispatcher = new Agent();
  // A plain tools/call is sent and read without the Fetch objects (downstream-http.ts), anything else as the SDK sends it.
  const transport = new DirectHttpClientTransport(new URL(url), { headers, dispatcher, ...(authProvider ? { authProvider } : {}) });
  // The SDK's Client keeps a handler set before connect and calls its own after it (also when connect fails).
  transport.onclose = () => void dispatcher.close().catch(() => {});
  return transport;
}
