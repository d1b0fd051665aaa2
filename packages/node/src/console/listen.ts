/**
 * Where the host console listens (issue 35): an admin listener of its own, never the public
 * origin's. On a loopback or private address by default (the host reaches it on this machine,
 * through an SSH tunnel or a private network); on a public address only when asked with
 * `--console-public` and then only over TLS, with the node's own certificate.
 *
 * The Host check: the console answers only the names it was started for (the listening address,
 * `localhost` on a loopback address, the canonical domain on TLS, and `--console-name` names),
 * each with the listener's port; any other Host is answered 421 before a handler runs, so a page
 * whose name was re-pointed at this address (DNS rebinding) reaches nothing.
 *
 * Or, with `--console-path` behind the node's reverse proxy, no listener of its own: mounted at
 * that path on the node's listener (serve.ts), for the trusted proxy only, answering the canonical
 * domain as the proxy forwards it (`consolePath`, `consoleNameOf`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { isPrivateListenAddress } from '../behind-proxy.js';
import { NodeError } from '../errors.js';
import { consoleDir } from './passkeys.js';

/** What `vrp node serve --console …` asks for. */
export interface ConsoleListenOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 = ephemeral (default). */
  port?: number;
  /** `--console-public`: allow a public address (TLS is required there). */
  public?: boolean;
  /** `--console-name`: further names the console may be reached by (a tunnel's or a private DNS name). */
  names?: string[];
  /**
   * `--console-path`: no listener of its own; the console is mounted at this path on the node's
   * main listener, for its reverse proxy only (`--behind-proxy`; see `consolePath`).
   */
  path?: string;
}

/** A path of one or more segments of unreserved characters (RFC 3986 §2.3), no dot segments, no trailing slash. */
const CONSOLE_PATH = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/;

/**
 * The path a console mounted behind the proxy answers under, or undefined for a listener of its
 * own. Refused: a path that is not `/segment…` (`console_path_invalid`); a path without
 * `--behind-proxy` (`console_path_needs_proxy`: on the public TLS listener a direct client would
 * reach it); a path with listener options (`console_path_conflict`: the console has one place); a
 * path the node answers itself, given its `nodeRoutes` (`console_path_taken`).
 */
export function consolePath(o: ConsoleListenOptions, behindProxy: boolean, nodeRoutes: readonly string[] = []): string | undefined {
  if (o.path === undefined) return undefined;
  if (!CONSOLE_PATH.test(o.path)) throw new NodeError('console_path_invalid', { path: o.path.slice(0, 80) });
  // The console takes every request under its path: one of the node's own routes there would be hidden.
  const taken = nodeRoutes.find((r) => r === o.path || r.startsWith(`${o.path}/`) || o.path?.startsWith(`${r}/`));
  if (taken !== undefined && taken !== '/' && taken !== '*' && taken !== '/*')
    throw new NodeError('console_path_taken', { path: o.path, route: taken });
  if (!behindProxy) throw new NodeError('console_path_needs_proxy');
  if (o.host !== undefined || (o.port ?? 0) !== 0 || o.public || o.names?.length) throw new NodeError('console_path_conflict');
  return o.path;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/**
 * The console's scheme on `host`: plain http on loopback (`localhost` is a secure context, where
 * passkeys work); on a private address https with the node's certificate when it has one (a
 * passkey needs a secure context), else http (reach it through a tunnel to localhost); refused on
 * a public address unless asked for, and there only with TLS.
 */
export function consoleScheme(host: string, o: { public?: boolean; tls: boolean }): 'http' | 'https' {
  if (isLoopback(host)) return 'http';
  if (isPrivateListenAddress(host)) return o.tls ? 'https' : 'http';
  if (!o.public) throw new NodeError('console_listen_public', { host });
  if (!o.tls) throw new NodeError('console_public_needs_tls', { host });
  return 'https';
}

/** The names the console answers besides its address: `--console-name`s, and the canonical domain when it serves TLS. */
export interface ConsoleNames {
  names?: string[];
  tlsDomain?: string;
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * The Host header values the console answers: each allowed name with the listener's port, and
 * without it on the scheme's default port (where a browser leaves the port out).
 */
export function consoleHosts(scheme: 'http' | 'https', host: string, port: number, o: ConsoleNames): Set<string> {
  const names = [host, ...(isLoopback(host) ? ['localhost'] : []), ...(o.tlsDomain ? [o.tlsDomain] : []), ...(o.names ?? [])].map((n) =>
    isIP(n) === 6 ? `[${n}]` : n.toLowerCase(),
  );
  return new Set([...names.map((n) => `${n}:${port}`), ...(port === DEFAULT_PORT[scheme] ? names : [])]);
}

/**
 * The name a request asked for: its Host on a listener of the console's own; behind the proxy
 * (`--console-path`) the proxy's first `X-Forwarded-Host` (behind-proxy.ts believes it only from a
 * trusted proxy and removes it from any other request), absent meaning none, so refused.
 */
export function consoleNameOf(proxied: { base: string } | undefined): (req: Request) => string {
  if (!proxied) return (req) => req.headers.get('host') ?? '';
  return (req) => req.headers.get('x-forwarded-host')?.split(',')[0]?.trim() ?? '';
}

/** 421 unless the name the request asked for (`nameOf`) is one of `hosts` (RFC 9110 §15.5.20). */
export function hostCheck(hosts: Set<string>, nameOf: (req: Request) => string): (req: Request) => Response | undefined {
  return (req) =>
    hosts.has(nameOf(req).toLowerCase())
      ? undefined
      : new Response('This console does not answer for that host name.\n', {
          status: 421,
          headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
        });
}

/**
 * The origin a person opens: `localhost` on a loopback address (a passkey's relying party must be
 * a DNS name, and http is a secure context only for localhost), else the canonical domain on TLS,
 * else the first `--console-name`, else the address.
 */
export function consoleOrigin(scheme: 'http' | 'https', host: string, port: number, o: ConsoleNames): string {
  const name = isLoopback(host) ? 'localhost' : (o.tlsDomain ?? o.names?.[0] ?? (isIP(host) === 6 ? `[${host}]` : host));
  return `${scheme}://${name}${port === DEFAULT_PORT[scheme] ? '' : `:${port}`}`;
}

/**
 * Written when the console listens, so `vrp node console enroll` (another process) can print a
 * whole link: its origin, or behind the proxy its origin and path (`https://{domain}/console`).
 */
export function recordConsoleOrigin(dataDir: string, origin: string): void {
  mkdirSync(consoleDir(dataDir), { recursive: true, mode: 0o700 });
  writeFileSync(join(consoleDir(dataDir), 'listening.json'), `${JSON.stringify({ origin })}\n`, { mode: 0o600 });
}

/** The origin the node's console last listened on, or null when it never did. */
export function lastConsoleOrigin(dataDir: string): string | null {
  try {
    const { origin } = JSON.parse(readFileSync(join(consoleDir(dataDir), 'listening.json'), 'utf8')) as { origin?: unknown };
    return typeof origin === 'string' ? origin : null;
  } catch {
    return null;
  }
}
