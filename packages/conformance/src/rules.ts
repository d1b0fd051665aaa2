/**
 * The rule ids of the node conformance checker. An id is stable: reports, JUnit files and
 * `examples/conformance/` vectors name rules by it, so ids are never renamed or reused. Each id
 * is tied to the section that states the rule (docs/conformance.md explains every one).
 */
export const RULES = {
  'core-2.discovery': {
    section: 'Core VRP v0.1 §2',
    title: 'the discovery document is served over https, is JSON, schema-valid, names vrp 0.1 and claims the host as canonical_domain',
  },
  'core-2.jwks-url': { section: 'Core VRP v0.1 §2', title: 'jwks_url is https://{domain}/.well-known/jwks.json on the node’s own host' },
  'core-2.offer-endpoint': { section: 'Core VRP v0.1 §2', title: 'verified_stay_offer_endpoint is an https URL on the node’s own host' },
  'core-3.jwks': { section: 'Core VRP v0.1 §3', title: 'the JWKS is served, schema-valid, Ed25519 (OKP, EdDSA) keys with unique kids' },
  'core-3.kid-published': { section: 'Core VRP v0.1 §3', title: 'the kid the node signs its offer under is in its JWKS' },
  'core-3.1.jwks-cache': { section: 'Core VRP v0.1 §3.1', title: 'the JWKS is served with Cache-Control max-age of at most 300 s' },
  'core-4.offer-response': {
    section: 'Core VRP v0.1 §4',
    title: 'the offer endpoint answers a valid request with 200 JSON whose signed request echoes the query',
  },
  'core-4.bad-input': {
    section: 'Core VRP v0.1 §4',
    title: 'a malformed request is answered 4xx with {error:{code,message}}, never 5xx and never an offer',
  },
  'core-5.envelope': {
    section: 'Core VRP v0.1 §5',
    title: 'the envelope is schema-valid and its JWS verifies against the node’s JWKS with payload = offer',
  },
  'core-5.canonical-domain': { section: 'Core VRP v0.1 §5', title: 'the signed canonical_domain is the node’s host' },
  'core-5.1.booking-url': {
    section: 'Core VRP v0.1 §5.1',
    title: 'direct_booking_url is an https URL on the canonical domain or a subdomain',
  },
  'core-6.fresh': { section: 'Core VRP v0.1 §6', title: 'a new offer is fresh: generated_at ≤ now < valid_until' },
  'core-7.signed-negative': {
    section: 'Core VRP v0.1 §7',
    title: 'a stay the node cannot sell (more guests than it takes) is a signed, explicit available:false',
  },
  'ntb-3.name': {
    section: 'Node Tool Binding v0.1 §3',
    title: 'the surface lists the capability exactly once under the exact name get_verified_stay_offer',
  },
  'ntb-3.no-prefix': {
    section: 'Node Tool Binding v0.1 §3',
    title: 'no prefixed, suffixed or versioned variant of the name is listed',
  },
  'ntb-4.arguments': {
    section: 'Node Tool Binding v0.1 §4, §10.2',
    title: 'the capability takes check_in, check_out and guests and requires nothing else',
  },
  'ntb-5.envelope': {
    section: 'Node Tool Binding v0.1 §5, §10.3',
    title: 'the result is the signed envelope, unmodified, verifying against the node’s JWKS',
  },
  'ntb-5.error-result': {
    section: 'Node Tool Binding v0.1 §5',
    title: 'a surface error (MCP isError) carries no offer: an error is an unverified outcome',
  },
  'ntb-6.origin': {
    section: 'Node Tool Binding v0.1 §6',
    title: 'the surface is served from the offer’s canonical_domain or a subdomain',
  },
  'ntb-10.same-offer': {
    section: 'Node Tool Binding v0.1 §10.3',
    title: 'the surface returns the same signed offer as the endpoint for the same arguments',
  },
  'mcp-profile.receipt': {
    section: 'MCP composition profile (receipt binding)',
    title: 'a receipt on the MCP result verifies and is bound to the call sent and the envelope returned',
  },
} as const satisfies Record<string, { section: string; title: string }>;

export type RuleId = keyof typeof RULES;
export const RULE_IDS = Object.keys(RULES) as RuleId[];
