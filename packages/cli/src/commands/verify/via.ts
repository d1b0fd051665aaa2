/**
 * `vrp verify https://DOMAIN … --via http|mcp|a2a|webmcp|all` (Node Tool Binding v0.1 §8: every surface is one more way to fetch the signed document): fetch the offer
 * through the named surface(s) with the agent's surface clients and judge each result as an
 * offer fetched over HTTPS (Node Tool Binding §6, §8). With `all`, one row per surface side by
 * side; the exit status is the verifier's (0 safe / 1 verified but not quoteable / 2 anything
 * else) for the weakest surface. WebMCP is read through Chromium; without one that row reports
 * `browser_unavailable` (unknown, so exit 2) and the other rows stand.
 */
import {
  CHROMIUM_ENV,
  checkOfferRequest,
  createHardenedFetch,
  DEFAULT_CHROMIUM,
  domainOf,
  getOfferVia,
  JwksCache,
  SURFACES,
  type Surface,
  type SurfaceReport,
} from '@vrpkit/agent';
import { type Clock, fixedClock, systemClock, visibleEscapes } from '@vrpkit/core';
import type { ToolSurface } from '@vrpkit/protocol';
import { InvalidArgumentError } from 'commander';
import { CliError } from '../../errors.js';
import { printJson } from '../../io.js';

export type ViaChoice = Surface | 'all';

export const VIA_OPTION_HELP = `fetch through http|mcp|a2a|webmcp, or all side by side (exit status of the weakest surface); webmcp and all run Chromium from $${CHROMIUM_ENV}, else ${DEFAULT_CHROMIUM}`;

/** An absolute https URL (a surface somewhere other than its conventional place on the node's origin). */
export function parseHttpsUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an absolute https URL');
  }
  if (url.protocol !== 'https:') throw new InvalidArgumentError('expected an https URL');
  return url.href;
}

/** Where a surface is read when not at its conventional place (`--mcp-url`, `--agent-card-url`, `--page-url`). */
export const SURFACE_URL_OPTIONS = [
  ['--mcp-url <url>', 'the MCP endpoint, when not at https://DOMAIN/mcp'],
  ['--agent-card-url <url>', 'the agent card, when not at https://DOMAIN/.well-known/agent-card.json'],
  ['--page-url <url>', 'the page that registers the WebMCP tool, when not https://DOMAIN/'],
] as const;

export interface SurfaceUrlOptions {
  mcpUrl?: string;
  agentCardUrl?: string;
  pageUrl?: string;
}

/** The explicit surface URLs given on the command line, by surface. */
export function surfaceUrlsOf(o: SurfaceUrlOptions): Partial<Record<ToolSurface, string>> {
  return {
    ...(o.mcpUrl ? { mcp: o.mcpUrl } : {}),
    ...(o.agentCardUrl ? { a2a: o.agentCardUrl } : {}),
    ...(o.pageUrl ? { webmcp: o.pageUrl } : {}),
  };
}

export function parseVia(value: string): ViaChoice {
  if (value === 'all' || (SURFACES as readonly string[]).includes(value)) return value as ViaChoice;
  throw new InvalidArgumentError(`expected one of ${[...SURFACES, 'all'].join(', ')}`);
}

/** The verifier's exit status (as `vrp verify`) for one surface: only the node's own, safe offer is 0 (Node Tool Binding v0.1 §6–§7). */
export function surfaceExitCode(r: SurfaceReport): number {
  if (r.safe_to_quote) return 0;
  return r.verification?.status === 'verified' ? 1 : 2;
}

function formatTotal(r: SurfaceReport): string {
  if (!r.total) return '-';
  const { amount, currency, minor_unit } = r.total;
  if (!minor_unit) return `${amount} ${currency}`;
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return `${(amount / 10 ** digits).toFixed(digits)} ${currency}`;
}

/** The side-by-side table: one row per surface (surface, origin bound, status, safe to quote, total). */
export function renderSurfaceTable(reports: SurfaceReport[]): string {
  const header = ['surface', 'reached', 'tool name', 'origin bound', 'verified', 'safe to quote', 'total', 'classification'];
  const yesNo = (v: boolean | null) => (v === null ? 'unknown' : v ? 'yes' : 'no');
  const rows = reports.map((r) => [
    r.surface,
    yesNo(r.reached),
    // Tool names are the surface's own text: escaped for the terminal.
    visibleEscapes(
      r.tool_name ?? (r.surface === 'http' ? '(endpoint)' : r.tools.length > 0 ? `none of: ${r.tools.map((t) => t.name).join(', ')}` : '-'),
    ),
    yesNo(r.origin_bound),
    r.verification
      ? `${r.verification.status}${r.verification.code ? ` (${r.verification.code})` : ''}`
      : r.error
        ? `no (${r.error.code})`
        : 'no',
    r.safe_to_quote ? 'YES' : 'no',
    formatTotal(r),
    r.classification,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')}\n`;
}

export interface ViaOptions extends SurfaceUrlOptions {
  checkIn: string;
  checkOut: string;
  guests: number;
  via: ViaChoice;
  json?: boolean;
  connectTo?: string[];
  /** PEM text of an extra trusted CA (already read from `--cacert`). */
  ca?: string;
  now?: string;
}

/** Run the surface checks; returns the exit status (the weakest surface's). A target that is no host domain is a usage error. */
export async function verifyVia(target: string, o: ViaOptions): Promise<number> {
  const args = checkOfferRequest({ check_in: o.checkIn, check_out: o.checkOut, guests: o.guests });
  const domain = domainOf(target);
  if (!domain) throw new CliError('invalid_domain', { target });
  const network = { ...(o.connectTo ? { connectTo: o.connectTo } : {}), ...(o.ca ? { ca: o.ca } : {}) };
  const fetch = createHardenedFetch(network);
  const clock: Clock = o.now ? fixedClock(o.now) : systemClock;
  try {
    // One fetch and one JWKS cache: every surface is judged against the same node keys.
    const shared = { network, fetch, clock, jwksCache: new JwksCache({ fetch, clock }) };
    const reports: SurfaceReport[] = [];
    const explicit: Partial<Record<Surface, string>> = surfaceUrlsOf(o);
    for (const surface of o.via === 'all' ? SURFACES : [o.via]) {
      reports.push(await getOfferVia(surface, explicit[surface] ?? `https://${domain}`, args, shared));
    }
    const exitCode = Math.max(...reports.map(surfaceExitCode));
    if (o.json) {
      printJson({ domain, arguments: args, surfaces: reports.map(({ envelope: _e, raw_result: _r, ...row }) => row), exit_code: exitCode });
    } else {
      process.stdout.write(`${domain}: ${args.check_in} → ${args.check_out}, ${args.guests} guest${args.guests === 1 ? '' : 's'}\n`);
      process.stdout.write(renderSurfaceTable(reports));
      // The table has room for the code only; say which browser was tried and how to name another.
      for (const r of reports) if (r.error?.code === 'browser_unavailable') process.stderr.write(`${r.surface}: ${r.error.message}\n`);
    }
    return exitCode;
  } finally {
    await fetch.close();
  }
}
