/** The MCP server `vrp gate proxy` fronts: a stdio child (`-- COMMAND ARGS…`) or a Streamable HTTP `--upstream`. */
import { basename } from 'node:path';
import type { DownstreamSpec } from '@vrpkit/gate/proxy';
import { usage } from '../../errors.js';

export interface DownstreamOptions {
  upstream?: string;
  upstreamHeader: string[];
  insecureHttpUpstream?: boolean;
}

export function downstreamSpec(command: string[], o: DownstreamOptions): DownstreamSpec {
  if (!o.upstream === !command.length) throw usage('give the downstream server as `-- COMMAND ARGS…` or as --upstream URL (exactly one)');
  if (!o.upstream) {
    if (o.upstreamHeader.length) throw usage('--upstream-header needs --upstream');
    return { kind: 'stdio', command: command[0]!, args: command.slice(1) };
  }
  let url: URL;
  try {
    url = new URL(o.upstream);
  } catch {
    throw usage(`--upstream is not a URL: ${o.upstream}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && o.insecureHttpUpstream))
    throw usage(`--upstream must be https:// (plain http only with --insecure-http-upstream), got ${url.protocol}`);
  const headers: Record<string, string> = {};
  for (const h of o.upstreamHeader) {
    const i = h.indexOf(':');
    if (i <= 0) throw usage(`--upstream-header must be 'Name: value', got a value without a name`);
    headers[h.slice(0, i).trim()] = expandEnv(h.slice(i + 1).trim());
  }
  return { kind: 'http', url: url.toString(), headers };
}

/**
 * `$VAR` and `${VAR}` from the proxy's environment: the credential stays in the proxy's
 * environment and never appears in the agent's configuration. A missing variable is an error
 * (an empty credential would be sent otherwise). The value is never printed.
 */
function expandEnv(value: string): string {
  return value.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_, braced?: string, bare?: string) => {
    const name = (braced ?? bare)!;
    const v = process.env[name];
    if (v === undefined || v === '') throw usage(`--upstream-header refers to $${name}, which is not set in the proxy's environment`);
    return v;
  });
}

/** The proxy's name when `--name` is not given: the command's or the upstream host's, in the name's alphabet. */
export function defaultName(d: DownstreamSpec): string {
  const raw = d.kind === 'stdio' ? basename(d.command) : new URL(d.url).hostname;
  return (
    raw
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 64) || 'mcp'
  );
}
