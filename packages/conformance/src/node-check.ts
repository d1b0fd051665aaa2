/**
 * Node conformance for any node, on any stack: Core VRP v0.1 (§2 discovery, §3 JWKS, §3.1 its
 * cache header, §4 the endpoint, §5 the signed offer, §5.1 the booking URL, §6 freshness, §7 the
 * signed negative) and Node Tool Binding v0.1 (§3–§6, §10) on every tool surface the node exposes,
 * plus the MCP composition profile's receipt binding when the MCP surface returns a receipt.
 *
 * Every verdict names a stable rule id (rules.ts), a status (pass, fail, or unknown with the
 * reason: fail closed, unknown is never a pass) and the evidence (the URLs read and the SHA-256
 * of the bytes read). Every read goes through the agent's own clients (discovery, JWKS cache,
 * surface clients), so the checker sees exactly what an agent sees.
 *
 * A rule that only restates a failure already reported by a more basic rule is `unknown`
 * ("see core-3.kid-published"), so a broken node is flagged under the one rule it breaks.
 * The Core rules are in core-rules.ts, the tool-surface rules in surface-rules.ts.
 */
import { createHardenedFetch, getOfferVia, JwksCache, type OfferArgs, type SurfaceClientOptions, type SurfaceReport } from '@vrpkit/agent';
import { type FetchLike, systemClock, toUtcSecond } from '@vrpkit/core';
import { TOOL_SURFACES, type ToolSurface } from '@vrpkit/protocol';
import { coreRules } from './core-rules.js';
import { type Evidence, recordingFetch } from './evidence.js';
import { RULES, type RuleId } from './rules.js';
import { nameVariant, surfaceRules } from './surface-rules.js';
import { type CheckStatus, fail, unknown, type Verdict } from './verdict.js';

/** The tool surfaces a node is judged on (Node Tool Binding v0.1 §10): protocol's list. */
export { TOOL_SURFACES, type ToolSurface };

export interface RuleResult {
  rule: RuleId;
  section: string;
  /** The tool surface the verdict is about; null for a Core VRP rule. */
  surface: ToolSurface | null;
  status: CheckStatus;
  detail: string;
  evidence: Evidence[];
}

/**
 * What the checker found on one surface. `exposed` is false when the node does not expose it
 * (fine: nothing to judge), true when it does (its rules apply, and breakage fails them), null
 * when it could not be told (unreachable, no browser): the surface's rules are then unknown.
 */
export interface SurfaceFinding {
  surface: ToolSurface;
  selected: 'explicit' | 'auto';
  url: string | null;
  exposed: boolean | null;
  /** Every capability name the surface listed (the bound field of §3). */
  listed: string[];
  detail: string;
}

export interface NodeConformanceReport {
  kind: 'vrpkit_node_conformance';
  domain: string;
  checked_at: string;
  arguments: OfferArgs;
  surfaces: SurfaceFinding[];
  results: RuleResult[];
  /** True only when every result passes (and there is at least one). */
  conforms: boolean;
}

export type SurfaceSelection = readonly ToolSurface[] | 'auto';

export interface NodeCheckOptions extends SurfaceClientOptions {
  /** The arguments for every offer call (default: three nights 30 days ahead for two guests). */
  args?: OfferArgs;
  /** Which surfaces to judge: a list (each must be exposed) or `auto` (default: judge what the node exposes). */
  surfaces?: SurfaceSelection;
  /** Read a surface somewhere other than its conventional place on `https://{domain}` (e.g. an MCP endpoint at /api/mcp). */
  surfaceUrls?: Partial<Record<ToolSurface, string>>;
}

/** Statuses meaning "nothing is here" rather than "something here is broken". */
const NOT_THERE = new Set([404, 405, 410]);

function defaultArgs(now: number): OfferArgs {
  const day = (n: number) => new Date(now + n * 86_400_000).toISOString().slice(0, 10);
  return { check_in: day(30), check_out: day(33), guests: 2 };
}

/** Is the surface there? From its own report and the status its URL answered. */
function exposure(r: SurfaceReport, reads: Evidence[]): { exposed: boolean | null; detail: string } {
  const url = r.surface_url ?? '';
  const status = reads.find((e) => e.url === url)?.status ?? null;
  if (r.error?.code === 'browser_unavailable') return { exposed: null, detail: r.error.message };
  if (!r.reached) {
    if (status !== null && NOT_THERE.has(status)) return { exposed: false, detail: `${url} answered HTTP ${status}` };
    if (status !== null)
      return { exposed: true, detail: `${url} answered HTTP ${status} but is not a working surface: ${r.error?.code ?? ''}` };
    return { exposed: null, detail: `unreachable: ${r.error?.code ?? ''} ${r.error?.message ?? ''}`.trim() };
  }
  if (!r.tools.some((t) => nameVariant(t.name) !== null))
    return { exposed: false, detail: `reached; lists no offer capability (${r.tools.map((t) => t.name).join(', ') || 'nothing'})` };
  return { exposed: true, detail: `reached; lists ${r.tools.map((t) => t.name).join(', ')}` };
}

/** Check `https://{domain}` against every rule. Never throws for a non-conforming node: it reports. */
export async function checkNode(domain: string, options: NodeCheckOptions = {}): Promise<NodeConformanceReport> {
  const clock = options.clock ?? systemClock;
  const args = options.args ?? defaultArgs(clock.now());
  const owned = options.fetch ? null : createHardenedFetch(options.network);
  const recorder = recordingFetch((options.fetch ?? owned) as FetchLike);
  const fetch = recorder.fetch;
  // One fetch and one JWKS cache for the whole run: every surface is judged against the same keys.
  const shared: SurfaceClientOptions = { ...options, fetch, jwksCache: new JwksCache({ fetch, clock }), clock };
  const pending: { rule: RuleId; surface: ToolSurface | null; v: Verdict; urls: string[] }[] = [];
  try {
    const endpoint = await coreRules(domain, args, fetch, shared, clock, (rule, v, urls) => pending.push({ rule, surface: null, v, urls }));
    const selection = options.surfaces ?? 'auto';
    const surfaces: SurfaceFinding[] = [];
    for (const surface of selection === 'auto' ? TOOL_SURFACES : selection) {
      const target = options.surfaceUrls?.[surface] ?? `https://${domain}`;
      const r = await getOfferVia(surface, target, args, shared);
      const found = exposure(r, await recorder.reads());
      surfaces.push({
        surface,
        selected: selection === 'auto' ? 'auto' : 'explicit',
        url: r.surface_url,
        exposed: found.exposed,
        listed: r.tools.map((t) => t.name),
        detail: found.detail,
      });
      const urls = r.surface_url ? [r.surface_url] : [];
      const add = (rule: RuleId, v: Verdict) => pending.push({ rule, surface, v, urls });
      if (found.exposed === true) surfaceRules(r, endpoint, add);
      else if (found.exposed === null) add('ntb-3.name', unknown(found.detail));
      // Not exposed is fine when the checker was asked to find out; a surface named explicitly must be there.
      else if (selection !== 'auto') add('ntb-3.name', fail(`the surface was named but is not exposed: ${found.detail}`));
    }
    const reads = await recorder.reads();
    const results: RuleResult[] = pending.map(({ rule, surface, v, urls }) => ({
      rule,
      section: RULES[rule].section,
      surface,
      status: v.status,
      detail: v.detail,
      evidence: reads.filter((e) => urls.some((u) => e.url === u || e.url.startsWith(`${u}?`))),
    }));
    return {
      kind: 'vrpkit_node_conformance',
      domain,
      checked_at: toUtcSecond(clock.now()),
      arguments: args,
      surfaces,
      results,
      conforms: results.length > 0 && results.every((r) => r.status === 'pass'),
    };
  } finally {
    await owned?.close();
  }
}

/** The distinct rule ids that failed (what a broken node is flagged with). */
export function failedRules(report: NodeConformanceReport): RuleId[] {
  return [...new Set(report.results.filter((r) => r.status === 'fail').map((r) => r.rule))].sort();
}
