/**
 * The Core VRP v0.1 rules of the node checker, one step per section read: §2 discovery, §3 and
 * §3.1 the JWKS, §4–§6 the endpoint's signed offer, §7 the signed negative, §4 bad input. The
 * steps run in this order (the replayed vectors hold the reads in it) and each reports its
 * verdicts as soon as it has them.
 */
import {
  bookingUrlFailure,
  cacheLifetimeSeconds,
  fetchDiscovery,
  getOfferVia,
  type OfferArgs,
  type SurfaceClientOptions,
  type SurfaceReport,
} from '@vrpkit/agent';
import { asRecord, type Clock, type FetchLike, toUtcSecond } from '@vrpkit/core';
import {
  DISCOVERY_PATH,
  DiscoveryDocumentSchema,
  JWKS_MAX_CACHE_SECONDS,
  JWKS_PATH,
  MAX_GUESTS,
  OfferEnvelopeSchema,
  VrpJwksSchema,
} from '@vrpkit/protocol';
import type { RuleId } from './rules.js';
import { comparableOffer, fail, pass, REQUIRED_ARGS, see, unknown, type Verdict } from './verdict.js';

/** The endpoint's offer and what the tool-surface rules need to know about it. */
export interface EndpointView {
  report: SurfaceReport;
  verified: boolean;
  comparable: string | null;
}

/** What every Core step reads with, and where it reports a verdict (with the URLs whose reads are its evidence). */
interface CoreRun {
  domain: string;
  origin: string;
  args: OfferArgs;
  fetch: FetchLike;
  shared: SurfaceClientOptions;
  clock: Clock;
  add: (rule: RuleId, v: Verdict, urls: string[]) => void;
}

/** What §2 found: the rule whose failure stops an agent before any offer is verified (none when discovery passed), and the document. */
interface DiscoveryFinding {
  blocker: RuleId | null;
  doc: Record<string, unknown> | undefined;
}

/** The endpoint's offer as the §4–§6 rules judge it. */
interface EndpointOffer {
  report: SurfaceReport;
  envelope: Record<string, unknown> | undefined;
  payload: Record<string, unknown> | null;
  signedKid: unknown;
  /** The offer's JWS verified (fresh or not). */
  signed: boolean;
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

/** Core VRP v0.1 rules: discovery, JWKS, the endpoint, the signed offer, the negative, bad input. */
export async function coreRules(
  domain: string,
  args: OfferArgs,
  fetch: FetchLike,
  shared: SurfaceClientOptions,
  clock: Clock,
  add: CoreRun['add'],
): Promise<EndpointView> {
  const run: CoreRun = { domain, origin: `https://${domain}`, args, fetch, shared, clock, add };
  const discovery = await discoveryRules(run);
  const kids = await jwksRules(run);
  const { view, urls } = await endpointRules(run, discovery, kids);
  await signedNegativeRule(run, discovery.blocker, kids, urls);
  await badInputRule(run, discovery, urls);
  return view;
}

/** §2: the document as served, and the agent's own verdict on it. */
async function discoveryRules(run: CoreRun): Promise<DiscoveryFinding> {
  const discoveryUrl = `${run.origin}${DISCOVERY_PATH}`;
  const outcome = await fetchDiscovery(run.domain, { fetch: run.fetch });
  const raw = await readText(run.fetch, discoveryUrl);
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
  run.add(
    'core-2.discovery',
    blocker === 'core-2.discovery' && !outcome.ok
      ? // Nothing answered: that cannot be judged (unknown), unlike a document that is wrong.
        (outcome.code === 'discovery_unreachable' ? unknown : fail)(`${outcome.code}: ${outcome.message}`)
      : parsed.success
        ? pass('schema-valid, vrp 0.1, canonical_domain is the host')
        : fail(`schema: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message ?? 'invalid'}`),
    [discoveryUrl],
  );
  const own = (rule: RuleId, passed: string): Verdict =>
    blocker === 'core-2.discovery' ? see('core-2.discovery') : blocker === rule && !outcome.ok ? fail(outcome.message) : pass(passed);
  run.add('core-2.jwks-url', own('core-2.jwks-url', `jwks_url ${String(d?.jwks_url)}`), [discoveryUrl]);
  run.add('core-2.offer-endpoint', own('core-2.offer-endpoint', `endpoint ${String(d?.verified_stay_offer_endpoint)}`), [discoveryUrl]);
  return { blocker, doc: d };
}

/** §3, §3.1: the node's key set at its conventional place (also where a conforming jwks_url points); its kids, or null. */
async function jwksRules(run: CoreRun): Promise<string[] | null> {
  const jwksUrl = `${run.origin}${JWKS_PATH}`;
  const jwksRead = await readText(run.fetch, jwksUrl);
  if ('error' in jwksRead) {
    run.add('core-3.jwks', unknown(`JWKS unreachable: ${jwksRead.error}`), [jwksUrl]);
    run.add('core-3.1.jwks-cache', see('core-3.jwks'), [jwksUrl]);
    return null;
  }
  let kids: string[] | null = null;
  const jwks = VrpJwksSchema.safeParse(parseJson(jwksRead.text));
  if (jwksRead.status !== 200) run.add('core-3.jwks', fail(`JWKS answered HTTP ${jwksRead.status}`), [jwksUrl]);
  else if (!jwks.success) run.add('core-3.jwks', fail(`JWKS schema: ${jwks.error.issues[0]?.message ?? 'invalid'}`), [jwksUrl]);
  else {
    const listed = jwks.data.keys.map((k) => k.kid);
    const dup = listed.find((k, i) => listed.indexOf(k) !== i);
    run.add('core-3.jwks', dup ? fail(`kid ${dup} appears twice`) : pass(`${listed.length} Ed25519 key(s): ${listed.join(', ')}`), [
      jwksUrl,
    ]);
    kids = listed;
  }
  run.add('core-3.1.jwks-cache', jwksCacheVerdict(jwksRead.headers.get('cache-control')), [jwksUrl]);
  return kids;
}

/** §3.1: a JWKS may be cached for at most JWKS_MAX_CACHE_SECONDS, said by a max-age (or a header that forbids caching). */
function jwksCacheVerdict(cc: string | null): Verdict {
  if (cc === null) return fail('the JWKS has no Cache-Control header');
  const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(cc)?.[1];
  if (maxAge === undefined && cacheLifetimeSeconds(cc, JWKS_MAX_CACHE_SECONDS) !== 0) return fail(`Cache-Control "${cc}" sets no max-age`);
  if (Number(maxAge ?? 0) > JWKS_MAX_CACHE_SECONDS) return fail(`Cache-Control "${cc}" allows more than ${JWKS_MAX_CACHE_SECONDS} s`);
  return pass(`Cache-Control "${cc}"`);
}

/** §4–§6 on the endpoint's offer for the arguments, verified as an agent verifies it. */
async function endpointRules(
  run: CoreRun,
  { blocker, doc }: DiscoveryFinding,
  kids: string[] | null,
): Promise<{ view: EndpointView; urls: string[] }> {
  const report = await getOfferVia('http', run.origin, run.args, run.shared);
  const declared = typeof doc?.verified_stay_offer_endpoint === 'string' ? doc.verified_stay_offer_endpoint : `${run.origin}/`;
  const urls = [(report.surface_url ?? declared).split('?')[0] as string];
  const v = report.verification;
  const offer: EndpointOffer = {
    report,
    envelope: asRecord(report.envelope),
    payload: v?.payload ?? null,
    signedKid: asRecord(asRecord(report.envelope)?.signature)?.kid,
    signed: v?.status === 'verified' || v?.status === 'expired',
  };
  if (blocker !== null) {
    const rules = [
      'core-4.offer-response',
      'core-3.kid-published',
      'core-5.envelope',
      'core-5.canonical-domain',
      'core-5.1.booking-url',
      'core-6.fresh',
    ] as const;
    for (const r of rules) run.add(r, see(blocker), urls);
  } else {
    offerResponseRules(run, offer, kids, urls);
    signedPayloadRules(run, offer, urls);
  }
  const verified = v?.status === 'verified' && report.origin_bound === true;
  return { urls, view: { report, verified, comparable: verified ? comparableOffer(offer.payload) : null } };
}

/** §4 the response echoes the request, §3 its kid is published, §5 the envelope verifies. */
function offerResponseRules(run: CoreRun, o: EndpointOffer, kids: string[] | null, urls: string[]): void {
  const { report, envelope, payload, signedKid } = o;
  const v = report.verification;
  run.add(
    'core-4.offer-response',
    !report.reached || envelope === null
      ? fail(`no offer: ${report.error?.code ?? 'nothing'}: ${report.error?.message ?? ''}`.trim())
      : payload !== null && !echoes(asRecord(payload)?.request, run.args)
        ? fail(`the signed request ${JSON.stringify(asRecord(payload)?.request)} does not echo ${JSON.stringify(run.args)}`)
        : pass('200 JSON offer for the request'),
    urls,
  );
  const kidPublished = kids === null || typeof signedKid !== 'string' ? null : kids.includes(signedKid);
  run.add(
    'core-3.kid-published',
    kidPublished === null
      ? unknown('no JWKS or no signed kid to compare')
      : kidPublished
        ? pass(`kid ${String(signedKid)} is published`)
        : fail(`kid ${String(signedKid)} is not in the JWKS (${kids?.join(', ')})`),
    [...urls, `${run.origin}${JWKS_PATH}`],
  );
  const schema = OfferEnvelopeSchema.safeParse(envelope);
  run.add(
    'core-5.envelope',
    envelope === null
      ? see('core-4.offer-response')
      : !schema.success
        ? fail(`envelope schema: ${schema.error.issues[0]?.path.join('.')}: ${schema.error.issues[0]?.message}`)
        : kidPublished === false || v?.code === 'kid_not_in_jwks'
          ? see('core-3.kid-published')
          : o.signed
            ? pass(`JWS verifies under kid ${String(signedKid)}; payload = offer`)
            : fail(`does not verify: ${v?.status ?? 'no verification'} ${v?.code ?? report.error?.code ?? ''}`.trim()),
    urls,
  );
}

/** §5 the signed canonical domain, §5.1 the booking URL, §6 freshness: judged only on a signed payload. */
function signedPayloadRules(run: CoreRun, { report, payload, signed }: EndpointOffer, urls: string[]): void {
  const { domain, clock } = run;
  const judged = (v: () => Verdict): Verdict => (signed ? v() : see('core-5.envelope'));
  run.add(
    'core-5.canonical-domain',
    judged(() =>
      payload?.canonical_domain === domain
        ? pass(`canonical_domain ${domain}`)
        : fail(`signed canonical_domain is ${String(payload?.canonical_domain)}`),
    ),
    urls,
  );
  run.add(
    'core-5.1.booking-url',
    judged(() => {
      const failure = bookingUrlFailure(payload);
      return failure
        ? fail(`${failure}: ${String(asRecord(asRecord(payload)?.booking)?.direct_booking_url)}`)
        : pass('https on the canonical domain');
    }),
    urls,
  );
  const generated = Date.parse(String(payload?.generated_at));
  run.add(
    'core-6.fresh',
    judged(() =>
      report.verification?.fresh === true && generated <= clock.now() + 60_000
        ? pass(`valid until ${String(payload?.valid_until)}`)
        : fail(
            `generated_at ${String(payload?.generated_at)}, valid_until ${String(payload?.valid_until)}, checked at ${toUtcSecond(clock.now())}`,
          ),
    ),
    urls,
  );
}

/** §7: more guests than any stay takes is answered with a signed, explicit negative. */
async function signedNegativeRule(run: CoreRun, blocker: RuleId | null, kids: string[] | null, urls: string[]): Promise<void> {
  if (blocker !== null) {
    run.add('core-7.signed-negative', see(blocker), urls);
    return;
  }
  const negative = await getOfferVia('http', run.origin, { ...run.args, guests: MAX_GUESTS }, run.shared);
  const nv = negative.verification;
  const availability = asRecord(asRecord(nv?.payload)?.availability);
  run.add(
    'core-7.signed-negative',
    negative.envelope === null || negative.envelope === undefined
      ? unknown(`answered ${MAX_GUESTS} guests without an offer (${negative.error?.code ?? 'no envelope'}); nothing to judge`)
      : kidsProblem(kids, negative.envelope)
        ? see('core-3.kid-published')
        : nv?.status !== 'verified' && nv?.status !== 'expired'
          ? fail(`the answer for ${MAX_GUESTS} guests is not signed: ${nv?.status ?? 'unverified'} ${nv?.code ?? ''}`.trim())
          : availability?.available === false
            ? pass(`signed available:false (${String(availability.reason ?? 'no reason')})`)
            : unknown(`the node offers a stay for ${MAX_GUESTS} guests; no negative to judge`),
    urls,
  );
}

/** §4: an impossible date is refused with the endpoint's error, never a 5xx or an offer. */
async function badInputRule(run: CoreRun, { blocker, doc }: DiscoveryFinding, urls: string[]): Promise<void> {
  const endpointBase = typeof doc?.verified_stay_offer_endpoint === 'string' ? doc.verified_stay_offer_endpoint : null;
  if (endpointBase === null || blocker === 'core-2.discovery' || blocker === 'core-2.offer-endpoint') {
    run.add('core-4.bad-input', see(blocker ?? 'core-2.offer-endpoint'), urls);
    return;
  }
  const bad = new URL(endpointBase);
  bad.searchParams.set('check_in', `${run.args.check_in.slice(0, 4)}-02-30`);
  bad.searchParams.set('check_out', run.args.check_out);
  bad.searchParams.set('guests', String(run.args.guests));
  const got = await readText(run.fetch, bad.href);
  const err = 'text' in got ? asRecord(asRecord(parseJson(got.text))?.error) : null;
  run.add(
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

/** The signed `request` carries the three arguments as asked (it may add derived members: nights, weekdays). */
function echoes(request: unknown, args: OfferArgs): boolean {
  const r = asRecord(request);
  return REQUIRED_ARGS.every((k) => r?.[k] === args[k]);
}

function kidsProblem(kids: string[] | null, envelope: unknown): boolean {
  const kid = asRecord(asRecord(envelope)?.signature)?.kid;
  return kids !== null && typeof kid === 'string' && !kids.includes(kid);
}
