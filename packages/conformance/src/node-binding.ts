/**
 * Node Tool Binding v0.1 §10 conformance checker. For every tool surface a node exposes:
 *   §10.1 the surface lists exactly one capability named `get_verified_stay_offer`;
 *   §10.2 it takes `check_in`, `check_out`, `guests` and requires nothing else;
 *   §10.3 its result is the same signed envelope the offer endpoint returns for the same
 *         arguments, verifying against the node's JWKS with `canonical_domain` = the surface's
 *         domain.
 * The name check is three reads of the node (MCP tool list, agent card skill ids, the page's
 * registered tools) and one comparison. Every read goes through the agent's surface clients,
 * so the checker sees exactly what an agent sees.
 *
 * Fail closed: a check that could not be evaluated (surface unreachable, endpoint down) is
 * `unknown`, and a node conforms only when every check passes.
 */
import { createHardenedFetch, getOfferVia, JwksCache, type OfferArgs, type SurfaceClientOptions, type SurfaceReport } from '@vrpkit/agent';
import { asRecord, canonicalJson, type FetchLike, systemClock, toUtcSecond } from '@vrpkit/core';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';

export type ToolSurface = 'mcp' | 'a2a' | 'webmcp';
export const TOOL_SURFACES: readonly ToolSurface[] = ['mcp', 'a2a', 'webmcp'];

export type CheckStatus = 'pass' | 'fail' | 'unknown';

export interface CheckResult {
  status: CheckStatus;
  detail: string;
}

export interface SurfaceConformance {
  surface: ToolSurface;
  url: string | null;
  reached: boolean;
  /** Every capability name the surface listed (the bound field of §3). */
  listed: string[];
  checks: { '10.1': CheckResult; '10.2': CheckResult; '10.3': CheckResult };
  /** The agent's view of the call (classification, verification, safe to quote). */
  report: Omit<SurfaceReport, 'envelope' | 'raw_result'>;
}

export interface NodeBindingReport {
  kind: 'vrp_node_tool_binding_conformance';
  spec: 'VRP Node Tool Binding v0.1 §10';
  domain: string;
  checked_at: string;
  arguments: OfferArgs;
  endpoint: { reached: boolean; verification_status: string | null; error: { code: string; message: string } | null };
  /** The three reads and the one comparison. */
  names: { mcp: string[]; a2a: string[]; webmcp: string[]; one_string: CheckStatus };
  surfaces: SurfaceConformance[];
  conforms: boolean;
}

export interface NodeBindingCheckOptions extends SurfaceClientOptions {
  /** The arguments used for every call (default: a three-night stay 30 days ahead for two guests). */
  args?: OfferArgs;
  /** Read a surface somewhere other than its conventional place on `https://{domain}`. */
  surfaceUrls?: Partial<Record<ToolSurface, string>>;
}

const REQUIRED = ['check_in', 'check_out', 'guests'] as const;
const pass = (detail: string): CheckResult => ({ status: 'pass', detail });
const fail = (detail: string): CheckResult => ({ status: 'fail', detail });
const unknown = (detail: string): CheckResult => ({ status: 'unknown', detail });

/**
 * Two offers for the same arguments are "the same signed envelope" (§10.3) when their signed
 * payloads agree on everything but what identifies one issuance: the time stamps
 * (`generated_at`, `valid_until`, every `checked_at`) and the offer id (a node signs a fresh
 * offer per call; Core VRP v0.1 §6). The id is also removed wherever it is embedded, e.g. the booking URL.
 */
export function comparableOffer(payload: unknown): string {
  const offerId = asRecord(asRecord(payload)?.booking)?.offer_id;
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (typeof v === 'string') return typeof offerId === 'string' && offerId ? v.split(offerId).join('<offer_id>') : v;
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['generated_at', 'valid_until', 'checked_at', 'offer_id'].includes(k))
        .map(([k, x]) => [k, strip(x)]),
    );
  };
  return canonicalJson(strip(payload));
}

/** §10.2 on a published input schema: the three are accepted and nothing else is required. */
function schemaCheck(schema: unknown): CheckResult | null {
  if (schema === null || schema === undefined) return null; // an A2A skill has no schema: the call decides
  const s = asRecord(schema);
  const properties = asRecord(s?.properties) ?? {};
  const required = Array.isArray(s?.required) ? s.required.map(String) : [];
  const missing = REQUIRED.filter((k) => !(k in properties));
  if (missing.length > 0) return fail(`the input schema does not take ${missing.join(', ')}`);
  const extra = required.filter((k) => !(REQUIRED as readonly string[]).includes(k));
  if (extra.length > 0) return fail(`the input schema requires ${extra.join(', ')} beyond check_in, check_out, guests`);
  const guestsType = asRecord(properties.guests)?.type;
  if (guestsType !== 'integer' && guestsType !== 'number') return fail(`guests is typed ${JSON.stringify(guestsType)}, not integer`);
  return null;
}

function surfaceChecks(r: SurfaceReport, endpointOffer: string | null): SurfaceConformance['checks'] {
  if (!r.reached) {
    const why = unknown(`surface unreachable${r.error ? `: ${r.error.code}` : ''}`);
    return { '10.1': why, '10.2': why, '10.3': why };
  }
  const named = r.tools.filter((t) => t.name === BOUND_TOOL_NAME);
  const c101 =
    named.length === 1
      ? pass(`lists ${BOUND_TOOL_NAME} once`)
      : fail(
          named.length === 0
            ? `no capability named ${BOUND_TOOL_NAME} (listed: ${r.tools.map((t) => t.name).join(', ') || 'nothing'})`
            : `${named.length} entries named ${BOUND_TOOL_NAME}`,
        );
  if (c101.status !== 'pass') {
    const why = unknown('no single bound capability to call');
    return { '10.1': c101, '10.2': why, '10.3': why };
  }
  const c102 =
    schemaCheck(named[0]?.input_schema) ??
    (r.envelope !== null && r.envelope !== undefined
      ? pass('the three-argument call returned an envelope')
      : fail(`the three-argument call failed: ${r.error?.code ?? 'no envelope'}: ${r.error?.message ?? ''}`.trim()));
  let c103: CheckResult;
  if (r.envelope === null || r.envelope === undefined) c103 = fail(`no envelope (${r.error?.code ?? 'none'})`);
  else if (r.verification?.status !== 'verified')
    c103 = fail(`the envelope does not verify against the node's JWKS: ${r.verification?.status} ${r.verification?.code ?? ''}`.trim());
  else if (r.origin_bound !== true) c103 = fail(`canonical_domain ${r.canonical_domain} is not the domain that served the surface`);
  else if (endpointOffer === null) c103 = unknown('the offer endpoint gave no verified offer to compare with');
  else if (comparableOffer(r.verification.payload) !== endpointOffer)
    c103 = fail('the signed offer differs from the endpoint’s offer for the same arguments');
  else c103 = pass('same signed offer as the endpoint, verified, served from its canonical domain');
  return { '10.1': c101, '10.2': c102, '10.3': c103 };
}

function defaultArgs(now: number): OfferArgs {
  const day = (n: number) => new Date(now + n * 86_400_000).toISOString().slice(0, 10);
  return { check_in: day(30), check_out: day(33), guests: 2 };
}

/** Run the §10 checks against `https://{domain}`. Never throws for a non-conforming node: it reports. */
export async function checkNodeToolBinding(domain: string, options: NodeBindingCheckOptions = {}): Promise<NodeBindingReport> {
  const clock = options.clock ?? systemClock;
  const args = options.args ?? defaultArgs(clock.now());
  const origin = `https://${domain}`;
  const owned = options.fetch ? null : createHardenedFetch(options.network);
  const fetch = (options.fetch ?? owned) as FetchLike;
  // One fetch and one JWKS cache for the whole run: every surface is judged against the same keys.
  const shared: SurfaceClientOptions = { ...options, fetch, jwksCache: options.jwksCache ?? new JwksCache({ fetch, clock }), clock };
  try {
    const endpoint = await getOfferVia('http', origin, args, shared);
    const endpointVerified = endpoint.verification?.status === 'verified' && endpoint.origin_bound === true;
    const endpointOffer = endpointVerified ? comparableOffer(endpoint.verification?.payload) : null;
    const surfaces: SurfaceConformance[] = [];
    for (const surface of TOOL_SURFACES) {
      const r = await getOfferVia(surface, options.surfaceUrls?.[surface] ?? origin, args, shared);
      const { envelope: _e, raw_result: _r, ...report } = r;
      surfaces.push({
        surface,
        url: r.surface_url,
        reached: r.reached,
        listed: r.tools.map((t) => t.name),
        checks: surfaceChecks(r, endpointOffer),
        report,
      });
    }
    const names = Object.fromEntries(surfaces.map((s) => [s.surface, s.listed])) as Record<ToolSurface, string[]>;
    const oneString: CheckStatus = surfaces.some((s) => !s.reached)
      ? 'unknown'
      : surfaces.every((s) => s.listed.filter((n) => n === BOUND_TOOL_NAME).length === 1)
        ? 'pass'
        : 'fail';
    return {
      kind: 'vrp_node_tool_binding_conformance',
      spec: 'VRP Node Tool Binding v0.1 §10',
      domain,
      checked_at: toUtcSecond(clock.now()),
      arguments: args,
      endpoint: { reached: endpoint.reached, verification_status: endpoint.verification?.status ?? null, error: endpoint.error },
      names: { ...names, one_string: oneString },
      surfaces,
      conforms: oneString === 'pass' && surfaces.every((s) => Object.values(s.checks).every((c) => c.status === 'pass')),
    };
  } finally {
    await owned?.close();
  }
}
