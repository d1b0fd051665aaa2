/**
 * The Node Tool Binding v0.1 rules on one exposed tool surface: §3 the exact name, §4 the
 * arguments, §5 the unmodified envelope (and no offer on an MCP error result), §6 the origin,
 * §10.3 the endpoint's offer, and the MCP composition profile's receipt binding.
 */
import type { SurfaceReport } from '@vrpkit/agent';
import { asRecord, isRecord } from '@vrpkit/core';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import type { EndpointView } from './core-rules.js';
import type { RuleId } from './rules.js';
import { comparableOffer, fail, pass, REQUIRED_ARGS, see, unknown, type Verdict } from './verdict.js';

type Add = (rule: RuleId, v: Verdict) => void;
type ListedTool = SurfaceReport['tools'][number];

/** §3: a listed name that is the capability's under another spelling, or with a prefix, suffix or version. */
export function nameVariant(name: string): 'exact' | 'prefixed' | 'look-alike' | null {
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

/** Node Tool Binding rules on one exposed surface. */
export function surfaceRules(r: SurfaceReport, endpoint: EndpointView, add: Add): void {
  if (!r.reached) {
    add('ntb-3.name', fail(`the surface is exposed but does not work: ${r.error?.code ?? 'unreachable'}`));
    return;
  }
  const exact = nameRules(r, add);
  if (!exact) return;
  const mcp = r.surface === 'mcp';
  const hasEnvelope = r.envelope !== null && r.envelope !== undefined;
  const errorWithOffer = mcp && errorResultCarriesOffer(r.raw_result);
  add(
    'ntb-4.arguments',
    schemaVerdict(exact.input_schema) ??
      (hasEnvelope || errorWithOffer
        ? pass('the three-argument call returned an envelope')
        : fail(`the three-argument call failed: ${r.error?.code ?? 'no envelope'}`)),
  );
  if (mcp)
    add(
      'ntb-5.error-result',
      errorWithOffer ? fail('the result is flagged isError and still carries an offer') : pass('no offer on an error result'),
    );
  if (errorWithOffer) {
    for (const rule of ['ntb-5.envelope', 'ntb-6.origin', 'ntb-10.same-offer'] as const) add(rule, see('ntb-5.error-result'));
    return;
  }
  envelopeRules(r, endpoint, hasEnvelope, add);
  if (mcp && r.receipt?.receipt_present) receiptRule(r, add);
}

/** §3: the capability listed once under the exact name, and no variant of it; the exact entry, or null when there is none to call. */
function nameRules(r: SurfaceReport, add: Add): ListedTool | null {
  const exact = r.tools.filter((t) => t.name === BOUND_TOOL_NAME);
  const variants = r.tools.filter((t) => nameVariant(t.name) === 'prefixed' || nameVariant(t.name) === 'look-alike');
  const prefixed = variants.filter((t) => nameVariant(t.name) === 'prefixed');
  add(
    'ntb-3.no-prefix',
    prefixed.length > 0 ? fail(`lists ${prefixed.map((t) => t.name).join(', ')}`) : pass('no prefixed or suffixed variant'),
  );
  if (exact.length === 1) {
    add('ntb-3.name', pass(`lists ${BOUND_TOOL_NAME} once`));
    return exact[0] as ListedTool;
  }
  add(
    'ntb-3.name',
    exact.length > 1
      ? fail(`${exact.length} entries named ${BOUND_TOOL_NAME}`)
      : prefixed.length === variants.length
        ? see('ntb-3.no-prefix')
        : fail(`lists ${variants.map((t) => t.name).join(', ')} instead of ${BOUND_TOOL_NAME}`),
  );
  for (const rule of ['ntb-4.arguments', 'ntb-5.envelope', 'ntb-6.origin', 'ntb-10.same-offer'] as const) add(rule, see('ntb-3.name'));
  return null;
}

/** §5 the envelope verifies, §6 it is served from its canonical domain, §10.3 it is the endpoint's offer. */
function envelopeRules(r: SurfaceReport, endpoint: EndpointView, hasEnvelope: boolean, add: Add): void {
  const v = r.verification;
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
}

/** MCP composition profile: a receipt on the result verifies and is bound to the call and the envelope. */
function receiptRule(r: SurfaceReport, add: Add): void {
  const c = r.receipt;
  if (!c) return;
  const why = [
    ...c.errors,
    c.transport.bound ? '' : 'transport_not_bound',
    c.offer.signature_matches_envelope ? '' : 'offer_signature_mismatch',
    c.offer_ref_matches ? '' : 'offer_ref_mismatch',
    c.issuer_matches ? '' : 'issuer_mismatch',
  ].filter(Boolean);
  add(
    'mcp-profile.receipt',
    r.verification?.status !== 'verified'
      ? see('ntb-5.envelope')
      : c.verified
        ? pass('receipt verified and bound to the call and the envelope')
        : fail(`receipt not verified: ${why.join(', ') || 'layer not verified'}`),
  );
}
