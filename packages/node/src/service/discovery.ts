/**
 * The node's discovery document (Core VRP v0.1 §2, `/.well-known/vacation-rental.json`): the
 * protocol and version, the canonical domain, where the JWKS (§3) and the offer endpoint (§4) are,
 * who operates the node and holds its key, and where each surface is (Node Tool Binding v0.1 §9).
 */
import {
  AGENT_CARD_PATH,
  BOOK_PATH,
  DISCOVERY_PATH,
  type DiscoveryDocument,
  JWKS_PATH,
  MCP_ENDPOINT_PATH,
  OFFER_ENDPOINT_PATH,
  PROTOCOL,
  PROTOCOL_VERSION,
} from '@vrpkit/protocol';
import type { PropertyDescription } from '../property.js';

export function discoveryDocument(domain: string, nodeId: string, property: PropertyDescription): DiscoveryDocument {
  const origin = `https://${domain}`;
  const jwksUrl = `${origin}${JWKS_PATH}`;
  return {
    protocol: PROTOCOL,
    protocol_version: PROTOCOL_VERSION,
    canonical_domain: domain,
    node_id: nodeId,
    jwks_url: jwksUrl,
    verified_stay_offer_endpoint: `${origin}${OFFER_ENDPOINT_PATH}`,
    capabilities: { signed_verified_stay_offer: true, live_availability: true, exact_total_price: true, direct_booking_url: true },
    // Core VRP v0.1 §2: who holds the signing key; a verifier must not assume self-custody when absent.
    operator: {
      name: property.operator.name ?? property.name,
      role: property.operator.role,
      key_custody: property.operator.key_custody,
    },
    endpoints: {
      discovery: `${origin}${DISCOVERY_PATH}`,
      jwks: jwksUrl,
      verified_stay_offer: `${origin}${OFFER_ENDPOINT_PATH}`,
      booking: `${origin}${BOOK_PATH}`,
      mcp: `${origin}${MCP_ENDPOINT_PATH}`,
      agent_card: `${origin}${AGENT_CARD_PATH}`,
    },
  };
}
