/**
 * The agent's network edge (Core VRP v0.1 §2–§3: discovery and keys are read over https from the
 * host domain; dev differs from production only by its CA): https only,
 * redirects followed by hand and only within the requested host's domain, a response size cap
 * enforced while streaming, connect and total timeouts, and — for dev and tests — a curl-style
 * `--connect-to` map and extra trusted CAs, so hostname and certificate checks still run for
 * the real domain name.
 */
import { createSecureContext, rootCertificates } from 'node:tls';
import { type FetchLike, readStreamCapped } from '@vrpkit/core';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { isOnCanonicalDomain } from './canonical-domain.js';
import { AgentUsageError, NetworkError } from './errors.js';

export interface HardenedFetchOptions {
  /**
   * Dial another address for a host and port, keeping the name for SNI and certificate checks
   * (curl `--connect-to`): `{ 'villa.example:443': '127.0.0.1:8443' }` or
   * `['villa.example:443:127.0.0.1:8443']`.
   */
  connectTo?: Record<string, string> | string[];
  /** Extra trusted CA certificates (PEM), in addition to the system roots (curl `--cacert`). */
  ca?: string | string[];
  /** Allow plain `http:` URLs. For local experiments only: nothing read over http is authentic. */
  insecureAllowHttp?: boolean;
  /** TCP + TLS handshake budget (default 5 000 ms). */
  connectTimeoutMs?: number;
  /** Whole-request budget, redirects and body included (default 10 000 ms). */
  totalTimeoutMs?: number;
  /** Response body cap in bytes (default 1 MiB). */
  maxBytes?: number;
  /** Redirects followed within the host domain (default 3). */
  maxRedirects?: number;
}

/**
 * The body bytes of each Response a hardened fetch built, already read (and capped) from the
 * network: the agent's own readers take them from here instead of streaming them a second time
 * through the Response. Weak, so an entry lives exactly as long as its Response.
 */
const receivedBodies = new WeakMap<Response, Uint8Array>();

/** The bytes a hardened fetch read for `res`, or undefined for any other Response. Internal to the package. */
export function receivedBody(res: Response): Uint8Array | undefined {
  return receivedBodies.get(res);
}

/** A `fetch` with the policy applied. `close()` releases its connection pool. */
export type HardenedFetch = FetchLike & { close(): Promise<void> };

export const HARDENED_FETCH_DEFAULTS = {
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 10_000,
  maxBytes: 1024 * 1024,
  maxRedirects: 3,
} as const;

interface Target {
  host: string;
  port: string;
}

const CURL_CONNECT_TO = /^([^:\s]+):(\d{1,5}):(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/;

/** Parse the connect-to map (both forms) into `host:port` → dial target. */
export function parseConnectTo(connectTo: HardenedFetchOptions['connectTo']): Map<string, Target> {
  const map = new Map<string, Target>();
  const add = (host: string, port: string, target: string, targetPort: string) =>
    map.set(`${host.toLowerCase()}:${port}`, { host: target.replace(/^\[|\]$/g, ''), port: targetPort });
  if (Array.isArray(connectTo)) {
    for (const entry of connectTo) {
      const m = CURL_CONNECT_TO.exec(entry);
      if (!m) throw new AgentUsageError('invalid_connect_to', { form: 'HOST:PORT:ADDR:PORT', entry });
      add(m[1] as string, m[2] as string, m[3] as string, m[4] as string);
    }
  } else if (connectTo) {
    for (const [from, to] of Object.entries(connectTo)) {
      const f = HOST_PORT.exec(from);
      const t = HOST_PORT.exec(to);
      if (!f || !t) throw new AgentUsageError('invalid_connect_to', { form: "'host:port' → 'addr:port'", entry: from });
      add(f[1] as string, f[2] as string, t[1] as string, t[2] as string);
    }
  }
  return map;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Map whatever undici threw to a stable NetworkError code. */
function networkError(e: unknown, totalTimedOut: boolean, url: URL): NetworkError {
  if (e instanceof NetworkError) return e;
  const host = url.hostname;
  if (totalTimedOut) return new NetworkError('timeout', { host }, { cause: e });
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause ?? (e as { code?: string; message?: string });
  const code = cause?.code ?? '';
  const message = cause?.message ?? String(e);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new NetworkError('connect_timeout', { host }, { cause: e });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new NetworkError('dns_failure', { host }, { cause: e });
  if (/CERT|SSL|TLS|HOSTNAME|SELF_SIGNED|ALTNAME|VERIFY|ISSUER|SIGNATURE/.test(code)) {
    return new NetworkError('tls_failure', { host, reason: message }, { cause: e });
  }
  return new NetworkError('network_error', { host, reason: message }, { cause: e });
}

/** Read a body to the end, failing as soon as it exceeds `maxBytes` (an endless body is an error, not a hang). */
async function readCapped(res: { headers: Headers; body: ReadableStream<Uint8Array> | null }, maxBytes: number, host: string) {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new NetworkError('response_too_large', { host, problem: `declares ${declared} bytes (cap ${maxBytes})` });
  }
  if (!res.body) return new Uint8Array(0);
  const bytes = await readStreamCapped(res.body, maxBytes);
  if (!bytes) throw new NetworkError('response_too_large', { host, problem: `exceeds ${maxBytes} bytes` });
  return bytes;
}

/** The connection pool: the connect timeout, the extra CA beside the system roots, and the connect-to map (SNI and certificate checks keep the requested name). */
function dispatcherFor(options: HardenedFetchOptions, connectTimeoutMs: number): Agent {
  const connectTo = parseConnectTo(options.connectTo);
  const extraCa = options.ca === undefined ? [] : Array.isArray(options.ca) ? options.ca : [options.ca];
  const base = buildConnector({
    timeout: connectTimeoutMs,
    // One trust store for every connection: handed as `ca`, TLS would parse all the roots again
    // for each new connection (a fresh secure context per handshake).
    ...(extraCa.length > 0 ? { secureContext: createSecureContext({ ca: [...rootCertificates, ...extraCa] }) } : {}),
  });
  return new Agent({
    connect(opts, callback) {
      const port = opts.port || (opts.protocol === 'https:' ? '443' : '80');
      const target = connectTo.get(`${opts.hostname.toLowerCase()}:${port}`);
      if (!target) return base(opts, callback);
      // Dial the mapped address but keep the requested name for SNI and certificate verification.
      return base({ ...opts, hostname: target.host, port: target.port, servername: opts.hostname }, callback);
    },
  });
}

/**
 * Build a `fetch` that enforces the agent's network policy. Every failure rejects with a
 * `NetworkError` whose `code` says why; callers map any rejection to unknown (Core VRP v0.1 §9).
 */
export function createHardenedFetch(options: HardenedFetchOptions = {}): HardenedFetch {
  const connectTimeoutMs = options.connectTimeoutMs ?? HARDENED_FETCH_DEFAULTS.connectTimeoutMs;
  const totalTimeoutMs = options.totalTimeoutMs ?? HARDENED_FETCH_DEFAULTS.totalTimeoutMs;
  const maxBytes = options.maxBytes ?? HARDENED_FETCH_DEFAULTS.maxBytes;
  const maxRedirects = options.maxRedirects ?? HARDENED_FETCH_DEFAULTS.maxRedirects;
  const dispatcher = dispatcherFor(options, connectTimeoutMs);

  const checkScheme = (url: URL) => {
    if (url.protocol === 'https:' || (url.protocol === 'http:' && options.insecureAllowHttp === true)) return;
    throw new NetworkError('insecure_scheme', { scheme: url.protocol }, { details: { host: url.hostname } });
  };

  const hardenedFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = typeof input === 'string' || input instanceof URL ? null : input;
    let url = new URL(request ? request.url : input.toString());
    const method = (init.method ?? request?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers ?? request?.headers);
    checkScheme(url);
    const origin = url;
    const timeout = AbortSignal.timeout(totalTimeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      for (let hop = 0; ; hop++) {
        const res = await undiciFetch(url, {
          method,
          headers: [...headers],
          body: method === 'GET' || method === 'HEAD' ? null : ((init.body ?? null) as never),
          redirect: 'manual',
          signal,
          dispatcher,
        });
        const location = res.headers.get('location');
        if (REDIRECT_STATUSES.has(res.status) && location) {
          await res.body?.cancel().catch(() => {});
          if (hop >= maxRedirects) throw new NetworkError('too_many_redirects', { max: maxRedirects, host: origin.hostname });
          const next = new URL(location, url);
          checkScheme(next);
          // No redirect may leave the requested host's domain, nor change the port: another domain would
          // answer for this one (Node Tool Binding v0.1 §6: keys from the node's own domain).
          if (!isOnCanonicalDomain(next.hostname, origin.hostname) || next.port !== origin.port) {
            throw new NetworkError('redirect_off_domain', { from: origin.hostname, to: next.host }, { details: { host: origin.hostname } });
          }
          url = next;
          continue;
        }
        const body = await readCapped(res as never, maxBytes, url.hostname);
        const nullBody = NULL_BODY_STATUSES.has(res.status);
        const response = new Response(nullBody ? null : body, {
          status: res.status,
          statusText: res.statusText,
          headers: [...res.headers],
        });
        if (!nullBody) receivedBodies.set(response, body);
        return response;
      }
    } catch (e) {
      throw networkError(e, timeout.aborted, url);
    }
  };
  return Object.assign(hardenedFetch, { close: () => dispatcher.close() });
}
