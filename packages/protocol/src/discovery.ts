/**
 * Core VRP v0.1 §2: a discovery document as served by a host domain, read through
 * `DiscoveryDocumentSchema` and bound to that domain (Safe-to-Quote conditions 1–3): it names the
 * protocol and version, claims exactly that domain as its `canonical_domain`, and points its JWKS
 * and offer endpoint at https URLs on that same host. Only the spec's member names are read
 * (hemmabo's aliases `jwks_uri`, `version`, `domain` are not), so a document is read one way only.
 */
import { isRecord } from '@vrpkit/core';
import { JWKS_PATH } from './constants.js';
import { type DiscoveryDocument, DiscoveryDocumentSchema } from './types.js';

/** Why a served discovery document is refused, in the order the checks run. */
export type DiscoveryDocumentCode =
  | 'discovery_schema_mismatch'
  | 'protocol_mismatch'
  | 'canonical_domain_mismatch'
  | 'jwks_url_off_domain'
  | 'offer_endpoint_off_domain';

export type DiscoveryDocumentCheck =
  | { ok: true; document: DiscoveryDocument }
  | { ok: false; code: DiscoveryDocumentCode; message: string };

/** True for an https URL whose host is exactly `domain` on the default port, without userinfo. */
function isHttpsUrlOn(value: unknown, domain: string): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname === domain && url.port === '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * `checkDiscoveryDocument(value, domain)`: the parsed JSON of `https://{domain}/.well-known/vacation-rental.json`
 * checked against Core VRP v0.1 §2 for that (normalised) domain. The schema decides every member; a
 * refusal names the first rule broken, in this order: not an object (`discovery_schema_mismatch`),
 * protocol or version (`protocol_mismatch`), `canonical_domain` not a lowercase host name
 * (`discovery_schema_mismatch`) or not `domain` (`canonical_domain_mismatch`), `jwks_url`
 * (`jwks_url_off_domain`), `verified_stay_offer_endpoint` (`offer_endpoint_off_domain`), then any
 * other member the schema refuses (`discovery_schema_mismatch`). Never throws.
 */
export function checkDiscoveryDocument(value: unknown, domain: string): DiscoveryDocumentCheck {
  const fail = (code: DiscoveryDocumentCode, message: string): DiscoveryDocumentCheck => ({ ok: false, code, message });
  if (!isRecord(value)) return fail('discovery_schema_mismatch', 'discovery document is not an object');
  const parsed = DiscoveryDocumentSchema.safeParse(value);
  const issues = parsed.success ? [] : parsed.error.issues;
  const refused = (member: string) => issues.some((i) => i.path[0] === member);
  // Core VRP v0.1 §7 conditions 2–3.
  if (refused('protocol') || refused('protocol_version'))
    return fail('protocol_mismatch', `discovery names protocol ${String(value.protocol)} ${String(value.protocol_version)}`);
  // Core VRP v0.1 §2: canonical_domain MUST match the host domain being verified (schema: lowercase, no scheme or port).
  if (refused('canonical_domain')) return fail('discovery_schema_mismatch', 'canonical_domain is missing or not a lowercase host name');
  if (value.canonical_domain !== domain)
    return fail('canonical_domain_mismatch', `canonical_domain ${String(value.canonical_domain)} is not ${domain}`);
  // Core VRP v0.1 §2 / Node Tool Binding v0.1 §6: the JWKS and the offer come from the node's own host.
  if (refused('jwks_url') || !isHttpsUrlOn(value.jwks_url, domain))
    return fail('jwks_url_off_domain', `jwks_url is not https://${domain}${JWKS_PATH}`);
  if (refused('verified_stay_offer_endpoint') || !isHttpsUrlOn(value.verified_stay_offer_endpoint, domain))
    return fail('offer_endpoint_off_domain', `verified_stay_offer_endpoint is not an https URL on ${domain}`);
  if (!parsed.success) {
    const first = issues[0];
    return fail('discovery_schema_mismatch', `${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`);
  }
  return { ok: true, document: parsed.data };
}
