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
 */
import {
  bookingUrlFailure,
  cacheLifetimeSeconds,
  createHardenedFetch,
  fetchDiscovery,
  getOfferVia,
  JwksCache,
  type OfferArgs,
  type SurfaceClientOptions,
  type SurfaceReport,
} from '@vrpkit/agent';
import { asRecord, type Clock, canonicalJson, type FetchLike, isRecord, systemClock, toUtcSecond } from '@vrpkit/core';
import {
  BOUND_TOOL_NAME,
  DISCOVERY_PATH,
  DiscoveryDocumentSchema,
  JWKS_MAX_CACHE_SECONDS,
  MAX_GUESTS,
  OfferEnvelopeSchema,
  VrpJwksSchema,
} from '@vrpkit/protocol';
import { type Evidence, recordingFetch } from './evidence.js';
import { RULES, type RuleId } from './rules.js';

export type ToolSurface = 'mcp' | 'a2a' | 'webmcp';
export const TOOL_SURFACES: readonly ToolSurface[] = ['mcp', 'a2a', 'webmcp'];
export type CheckStatus = 'pass' | 'fail' | 'unknown';

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

const REQUIRED_ARGS = ['check_in', 'check_out', 'guests'] as const;
/** Statuses meaning "nothing is here" rather than "something here is broken". */
const NOT_THERE = new Set([404, 405, 410]);

interface Verdict {
  status: CheckStatus;
  detail: string;
}
const pass = (detail: string): Verdict => ({ status: 'pass', detail });
const fail = (detail: string): Verdict => ({ status: 'fail', detail });
const unknown = (detail: string): Verdict => ({ status: 'unknown', detail });
const see = (rule: RuleId): Verdict => unknown(`not judged apart from ${rule}, which this depends on`);

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

/** §3: a listed name that is the capability's under another spelling, or with a prefix, suffix or version. */
function nameVariant(name: string): 'exact' | 'prefixed' | 'look-alike' | null {
  if (name === BOUND_TOOL_NAME) return 'exact';
  const folded = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (folded === 'getverifiedstayoffer') return 'look-alike';
  if (folded.includes('getverifiedstayoffer')) return 'prefixed';
  return folded.includes('stayoffer') ? 'look-alike' : null;
}

/** §4 on a published input schema: the three are accepted and nothing else is required. */
function schemaVerdict(schema: unknown): Verdict | null {
  if (schema === null || schema === undefined) return null; // an A2A skill has no schema: the call decides
  const s = asRecord(schema);
  const properties = asRecord(s?.properties) ?? {};
  const required = Array.isArray(s?.required) ? s.required.map(String) : [];
  const missing = REQUIRED_ARGS.filter((k) => !(k in properties));
  if (missing.length > 0) return fail(`the input schema does not take ${missing.join(', ')}`);
  const extra = required.filter((k) => !(REQUIRED_ARGS as readonly string[]).includes(k));
  if (extra.length > 0) return fail(`the input schema requires ${extra.join(', ')} beyond check_in, check_out, guests`);
  const guestsType = asRecord(properties.guests)?.type;
  if (guestsType !== 'integer' && guestsType !== 'number') return fail(`guests is typed ${JSON.stringify(guestsType)}, not integer`);
  return pass('the input schema takes check_in, check_out, guests and requires nothing else');
}

/** §5: an MCP result flagged isError that still carries something shaped like the signed envelope. */
function errorResultCarriesOffer(raw: unknown): boolean {
  const r = asRecord(raw);
  if (r?.isError !== true) return false;
  const docs: unknown[] = [r.structuredContent];
  for (const c of Array.isArray(r.content) ? r.content : []) {
    const text = asRecord(c)?.text;
    if (typeof text !== 'string') continue;
    try {
      docs.push(JSON.parse(text));
    } catch {
      // not JSON: not an envelope
    }
  }
  return docs.some((d) => isRecord(d) && (isRecord(d.offer) || isRecord(d.signature)));
}

function defaultArgs(now: number): OfferArgs {
  const day = (n: number) => new Date(now + n * 86_400_000).toISOString().slice(0, 10);
  return { check_in: day(30), check_out: day(33), guests: 2 };
}

async function readText(fetch: FetchLike, url: string): Promise<{ status: number; text: string; headers: Headers } | { error: string }> {
  try {
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    return { status: res.status, text: await res.text(), headers: res.headers };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The endpoint's offer and what the Core rules need to know about it. */
interface EndpointView {
  report: SurfaceReport;
  verified: boolean;
  comparable: string | null;
}

/** Core VRP v0.1 rules: discovery, JWKS, the endpoint, the signed offer, the negative, bad input. */
async function coreRules(
  domain: string,
  args: OfferArgs,
  fetch: FetchLike,
  shared: SurfaceClientOptions,
  clock: Clock,
  add: (rule: RuleId, v: Verdict, urls: string[]) => void,
): Promise<EndpointView> {
  const origin = `https://${domain}`;
  const discoveryUrl = `${origin}${DISCOVERY_PATH}`;
  const conventionalJwks = `${origin}/.well-known/jwks.json`;

  // §2: the document as served, and the agent's own verdict on it.
  const outcome = await fetchDiscovery(domain, { fetch });
  const raw = await readText(fetch, discoveryUrl);
  const doc = 'text' in raw ? parseJson(raw.text) : undefined;
  const parsed = DiscoveryDocumentSchema.safeParse(doc);
  // A failed §2 check stops the agent before any offer is verified: the rules after it are judged apart only where they can be.
  const blocker: RuleId | null = outcome.ok
    ? null
    : outcome.code === 'jwks_url_off_domain'
      ? 'core-2.jwks-url'
      : outcome.code === 'offer_endpoint_off_domain'
        ? 'core-2.offer-endpoint'
        : 'core-2.discovery';
  const d = asRecord(doc);
  add(
    'core-2.discovery',
    blocker === 'core-2.discovery' && !outcome.ok
      ? // Nothing answered: that cannot be judged (unknown), unlike a document that is wrong.
        (outcome.code === 'discovery_unreachable' ? unknown : fail)(`${outcome.code}: ${outcome.message}`)
      : parsed.success
        ? pass('schema-valid, vrp 0.1, canonical_domain is the host')
        : fail(`schema: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message ?? 'invalid'}`),
    [discoveryUrl],
  );
  const discoveryBroken = blocker === 'core-2.discovery';
  add(
    'core-2.jwks-url',
    discoveryBroken
      ? see('core-2.discovery')
      : blocker === 'core-2.jwks-url' && !outcome.ok
        ? fail(outcome.message)
        : pass(`jwks_url ${String(d?.jwks_url)}`),
    [discoveryUrl],
  );
  add(
    'core-2.offer-endpoint',
    discoveryBroken
      ? see('core-2.discovery')
      : blocker === 'core-2.offer-endpoint' && !outcome.ok
        ? fail(outcome.message)
        : pass(`endpoint ${String(d?.verified_stay_offer_endpoint)}`),
    [discoveryUrl],
  );

  // §3, §3.1: the node's key set at its conventional place (also where a conforming jwks_url points).
  const jwksRead = await readText(fetch, conventionalJwks);
  let kids: string[] | null = null;
  if ('error' in jwksRead) {
    add('core-3.jwks', unknown(`JWKS unreachable: ${jwksRead.error}`), [conventionalJwks]);
    add('core-3.1.jwks-cache', see('core-3.jwks'), [conventionalJwks]);
  } else {
    const jwks = VrpJwksSchema.safeParse(parseJson(jwksRead.text));
    if (jwksRead.status !== 200) add('core-3.jwks', fail(`JWKS answered HTTP ${jwksRead.status}`), [conventionalJwks]);
    else if (!jwks.success) add('core-3.jwks', fail(`JWKS schema: ${jwks.error.issues[0]?.message ?? 'invalid'}`), [conventionalJwks]);
    else {
      kids = jwks.data.keys.map((k) => k.kid);
      const dup = kids.find((k, i) => kids?.indexOf(k) !== i);
      add('core-3.jwks', dup ? fail(`kid ${dup} appears twice`) : pass(`${kids.length} Ed25519 key(s): ${kids.join(', ')}`), [
        conventionalJwks,
      ]);
    }
    const cc = jwksRead.headers.get('cache-control');
    const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(cc ?? '')?.[1];
    add(
      'core-3.1.jwks-cache',
      cc === null
        ? fail('the JWKS has no Cache-Control header')
        : maxAge === undefined && cacheLifetimeSeconds(cc, JWKS_MAX_CACHE_SECONDS) !== 0
          ? fail(`Cache-Control "${cc}" sets no max-age`)
          : Number(maxAge ?? 0) > JWKS_MAX_CACHE_SECONDS
            ? fail(`Cache-Control "${cc}" allows more than ${JWKS_MAX_CACHE_SECONDS} s`)
            : pass(`Cache-Control "${cc}"`),
      [conventionalJwks],
    );
  }

  // §4–§6 on the endpoint's offer for the arguments, verified as an agent verifies it.
  const endpoint = await getOfferVia('http', origin, args, shared);
  const endpointUrl =
    endpoint.surface_url ?? (typeof d?.verified_stay_offer_endpoint === 'string' ? d.verified_stay_offer_endpoint : `${origin}/`);
  const urls = [endpointUrl.split('?')[0] as string];
  const envelope = asRecord(endpoint.envelope);
  const v = endpoint.verification;
  const payload = v?.payload ?? null;
  const signedKid = asRecord(envelope?.signature)?.kid;
  if (blocker !== null) {
    for (const r of [
      'core-4.offer-response',
      'core-3.kid-published',
      'core-5.envelope',
      'core-5.canonical-domain',
      'core-5.1.booking-url',
      'core-6.fresh',
    ] as const)
      add(r, see(blocker), urls);
  } else {
    add(
      'core-4.offer-response',
      !endpoint.reached || envelope === null
        ? fail(`no offer: ${endpoint.error?.code ?? 'nothing'}: ${endpoint.error?.message ?? ''}`.trim())
        : payload !== null && !echoes(asRecord(payload)?.request, args)
          ? fail(`the signed request ${JSON.stringify(asRecord(payload)?.request)} does not echo ${JSON.stringify(args)}`)
          : pass('200 JSON offer for the request'),
      urls,
    );
    const kidPublished = kids === null || typeof signedKid !== 'string' ? null : kids.includes(signedKid);
    add(
      'core-3.kid-published',
      kidPublished === null
        ? unknown('no JWKS or no signed kid to compare')
        : kidPublished
          ? pass(`kid ${String(signedKid)} is published`)
          : fail(`kid ${String(signedKid)} is not in the JWKS (${kids?.join(', ')})`),
      [...urls, conventionalJwks],
    );
    const schema = OfferEnvelopeSchema.safeParse(envelope);
    add(
      'core-5.envelope',
      envelope === null
        ? see('core-4.offer-response')
        : !schema.success
          ? fail(`envelope schema: ${schema.error.issues[0]?.path.join('.')}: ${schema.error.issues[0]?.message}`)
          : kidPublished === false || v?.code === 'kid_not_in_jwks'
            ? see('core-3.kid-published')
            : v?.status === 'verified' || v?.status === 'expired'
              ? pass(`JWS verifies under kid ${String(signedKid)}; payload = offer`)
              : fail(`does not verify: ${v?.status ?? 'no verification'} ${v?.code ?? endpoint.error?.code ?? ''}`.trim()),
      urls,
    );
    const signed = v?.status === 'verified' || v?.status === 'expired';
    add(
      'core-5.canonical-domain',
      !signed
        ? see('core-5.envelope')
        : payload?.canonical_domain === domain
          ? pass(`canonical_domain ${domain}`)
          : fail(`signed canonical_domain is ${String(payload?.canonical_domain)}`),
      urls,
    );
    const bookingFailure = signed ? bookingUrlFailure(payload) : null;
    add(
      'core-5.1.booking-url',
      !signed
        ? see('core-5.envelope')
        : bookingFailure
          ? fail(`${bookingFailure}: ${String(asRecord(asRecord(payload)?.booking)?.direct_booking_url)}`)
          : pass('https on the canonical domain'),
      urls,
    );
    const generated = Date.parse(String(payload?.generated_at));
    add(
      'core-6.fresh',
      !signed
        ? see('core-5.envelope')
        : v?.fresh === true && generated <= clock.now() + 60_000
          ? pass(`valid until ${String(payload?.valid_until)}`)
          : fail(
              `generated_at ${String(payload?.generated_at)}, valid_until ${String(payload?.valid_until)}, checked at ${toUtcSecond(clock.now())}`,
            ),
      urls,
    );
  }

  // §7: more guests than any stay takes is answered with a signed, explicit negative.
  const crowd = { ...args, guests: MAX_GUESTS };
  if (blocker !== null) add('core-7.signed-negative', see(blocker), urls);
  else {
    const negative = await getOfferVia('http', origin, crowd, shared);
    const nv = negative.verification;
    const available = asRecord(asRecord(nv?.payload)?.availability)?.available;
    add(
      'core-7.signed-negative',
      negative.envelope === null || negative.envelope === undefined
        ? unknown(`answered ${MAX_GUESTS} guests without an offer (${negative.error?.code ?? 'no envelope'}); nothing to judge`)
        : kidsProblem(kids, negative.envelope)
          ? see('core-3.kid-published')
          : nv?.status !== 'verified' && nv?.status !== 'expired'
            ? fail(`the answer for ${MAX_GUESTS} guests is not signed: ${nv?.status ?? 'unverified'} ${nv?.code ?? ''}`.trim())
            : available === false
              ? pass(`signed available:false (${String(asRecord(asRecord(nv?.payload)?.availability)?.reason ?? 'no reason')})`)
              : unknown(`the node offers a stay for ${MAX_GUESTS} guests; no negative to judge`),
      urls,
    );
  }

  // §4: an impossible date is refused with the endpoint's error, never a 5xx or an offer.
  const endpointBase = typeof d?.verified_stay_offer_endpoint === 'string' ? d.verified_stay_offer_endpoint : null;
  if (endpointBase === null || blocker === 'core-2.discovery' || blocker === 'core-2.offer-endpoint')
    add('core-4.bad-input', see(blocker ?? 'core-2.offer-endpoint'), urls);
  else {
    const bad = new URL(endpointBase);
    bad.searchParams.set('check_in', `${args.check_in.slice(0, 4)}-02-30`);
    bad.searchParams.set('check_out', args.check_out);
    bad.searchParams.set('guests', String(args.guests));
    const got = await readText(fetch, bad.href);
    const err = 'text' in got ? asRecord(asRecord(parseJson(got.text))?.error) : null;
    add(
      'core-4.bad-input',
      'error' in got
        ? unknown(`no answer: ${got.error}`)
        : got.status >= 500
          ? fail(`HTTP ${got.status} for check_in=${bad.searchParams.get('check_in')}`)
          : got.status >= 400 && typeof err?.code === 'string'
            ? pass(`HTTP ${got.status} error ${err.code}`)
            : fail(`HTTP ${got.status} for check_in=${bad.searchParams.get('check_in')}, not a 4xx {error:{code,message}}`),
      urls,
    );
  }

  const verified = v?.status === 'verified' && endpoint.origin_bound === true;
  return { report: endpoint, verified, comparable: verified ? comparableOffer(payload) : null };
}

/** The signed `request` carries the three arguments as asked (it may add derived members: nights, weekdays). */
function echoes(request: unknown, args: OfferArgs): boolean {
  const r = asRecord(request);
  return REQUIRED_ARGS.every((k) => r?.[k] === args[k]);
}

function kidsProblem(kids: string[] | null, envelope: unknown): boolean {
  const kid = asRecord(asRecord(envelope)?.signature)?.kid;
  return kids !== null && typeof kid === 'string' && !kids.includes(kid);
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

/** Node Tool Binding rules on one exposed surface. */
function surfaceRules(s: ToolSurface, r: SurfaceReport, endpoint: EndpointView, add: (rule: RuleId, v: Verdict) => void): void {
  if (!r.reached) {
    const why = fail(`the surface is exposed but does not work: ${r.error?.code ?? 'unreachable'}`);
    add('ntb-3.name', why);
    return;
  }
  const exact = r.tools.filter((t) => t.name === BOUND_TOOL_NAME);
  const variants = r.tools.filter((t) => nameVariant(t.name) === 'prefixed' || nameVariant(t.name) === 'look-alike');
  const prefixed = variants.filter((t) => nameVariant(t.name) === 'prefixed');
  add(
    'ntb-3.no-prefix',
    prefixed.length > 0 ? fail(`lists ${prefixed.map((t) => t.name).join(', ')}`) : pass('no prefixed or suffixed variant'),
  );
  if (exact.length !== 1) {
    add(
      'ntb-3.name',
      exact.length > 1
        ? fail(`${exact.length} entries named ${BOUND_TOOL_NAME}`)
        : prefixed.length === variants.length
          ? see('ntb-3.no-prefix')
          : fail(`lists ${variants.map((t) => t.name).join(', ')} instead of ${BOUND_TOOL_NAME}`),
    );
    for (const rule of ['ntb-4.arguments', 'ntb-5.envelope', 'ntb-6.origin', 'ntb-10.same-offer'] as const) add(rule, see('ntb-3.name'));
    return;
  }
  add('ntb-3.name', pass(`lists ${BOUND_TOOL_NAME} once`));
  const hasEnvelope = r.envelope !== null && r.envelope !== undefined;
  const errorWithOffer = s === 'mcp' && errorResultCarriesOffer(r.raw_result);
  add(
    'ntb-4.arguments',
    schemaVerdict(exact[0]?.input_schema) ??
      (hasEnvelope || errorWithOffer
        ? pass('the three-argument call returned an envelope')
        : fail(`the three-argument call failed: ${r.error?.code ?? 'no envelope'}`)),
  );
  if (s === 'mcp')
    add(
      'ntb-5.error-result',
      errorWithOffer ? fail('the result is flagged isError and still carries an offer') : pass('no offer on an error result'),
    );
  const v = r.verification;
  if (errorWithOffer) {
    for (const rule of ['ntb-5.envelope', 'ntb-6.origin', 'ntb-10.same-offer'] as const) add(rule, see('ntb-5.error-result'));
    return;
  }
  add(
    'ntb-5.envelope',
    !hasEnvelope
      ? fail(`no envelope: ${r.error?.code ?? 'none'}: ${r.error?.message ?? ''}`.trim())
      : !endpoint.verified && v?.status !== 'verified'
        ? unknown('neither this envelope nor the endpoint’s own offer verifies: see the core-* rules')
        : v?.status !== 'verified'
          ? fail(`does not verify against the node's JWKS: ${v?.status ?? 'unverified'} ${v?.code ?? r.error?.code ?? ''}`.trim())
          : pass('verifies against the node’s JWKS'),
  );
  const verified = v?.status === 'verified';
  add(
    'ntb-6.origin',
    !verified
      ? see('ntb-5.envelope')
      : r.origin_bound === true
        ? pass(`served from ${r.canonical_domain} (or a subdomain)`)
        : fail(`an offer for ${r.canonical_domain} served from ${r.surface_url}`),
  );
  add(
    'ntb-10.same-offer',
    !verified || r.origin_bound !== true
      ? see(verified ? 'ntb-6.origin' : 'ntb-5.envelope')
      : endpoint.comparable === null
        ? unknown('the endpoint gave no verified offer to compare with')
        : comparableOffer(v.payload) !== endpoint.comparable
          ? fail('the signed offer differs from the endpoint’s for the same arguments')
          : pass('the endpoint’s signed offer'),
  );
  if (s === 'mcp' && r.receipt?.receipt_present) {
    const c = r.receipt;
    add(
      'mcp-profile.receipt',
      !verified
        ? see('ntb-5.envelope')
        : c.verified
          ? pass('receipt verified and bound to the call and the envelope')
          : fail(
              `receipt not verified: ${[...c.errors, c.transport.bound ? '' : 'transport_not_bound', c.offer.signature_matches_envelope ? '' : 'offer_signature_mismatch', c.offer_ref_matches ? '' : 'offer_ref_mismatch', c.issuer_matches ? '' : 'issuer_mismatch'].filter(Boolean).join(', ') || 'layer not verified'}`,
            ),
    );
  }
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
      if (found.exposed === true) surfaceRules(surface, r, endpoint, add);
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
