/**
 * The node's UCP business profile (`/.well-known/ucp`; UCP `profile.json#/$defs/business_schema`):
 * the lodging service's REST binding on the node's origin (Booking REST binding, Discovery) and its
 * MCP binding on the node's `/mcp` (Booking MCP binding, Discovery: `transport: "mcp"`), the
 * Booking capability with the cancellation-policy extension, vrpkit's lodging capability (its
 * `config` the property, its one accommodation type and one rate plan from the property file: the
 * ids a platform sends, Platform guidelines), no payment handler (the host is paid at the property),
 * and the node's signing keys (`keys`, the JWKS that verifies its offers and booking receipts).
 */
import {
  MCP_ENDPOINT_PATH,
  UCP_BOOKING_CAPABILITY,
  UCP_CANCELLATION_POLICY_TYPE,
  UCP_LODGING_KEY,
  UCP_LODGING_SERVICE,
  UCP_RATE_PLAN_ID,
  UCP_REST_BASE_PATH,
  UCP_VERSION,
  ucpStayId,
  type VrpJwks,
} from '@vrpkit/protocol';
import type { PropertyView } from '../service/types.js';

/** Where the node serves the JSON Schema of its `dev.vrpkit.lodging` member. */
export const UCP_LODGING_SCHEMA_PATH = '/ucp/schemas/dev.vrpkit.lodging.json';

const spec = (path: string) => `https://ucp.dev/${UCP_VERSION}/${path}`;

/** The lodging capability's config: the one property, accommodation type and rate plan a vrpkit node sells. */
function lodgingConfig(p: PropertyView, origin: string, offerEndpoint: string) {
  return {
    property: { id: p.property_id, name: p.name, url: p.url, city: p.city, country: p.country, time_zone: p.time_zone },
    accommodation_types: [{ id: p.property_id, name: p.name, max_occupancy: p.max_guests }],
    stays: [{ id: ucpStayId(p.property_id), accommodation_type_id: p.property_id, rate_plan_id: UCP_RATE_PLAN_ID }],
    rate_plans: [
      {
        id: UCP_RATE_PLAN_ID,
        accommodation_type_id: p.property_id,
        currency: p.currency,
        nightly_from: Math.min(p.rates.nightly, ...p.rates.seasons.map((s) => s.nightly)),
        min_nights: p.min_nights,
        max_nights: p.max_nights,
        check_in_time: p.check_in_time,
        check_out_time: p.check_out_time,
        fees: p.fees.map((f) => ({ code: f.code, label: f.label, amount: f.amount })),
        refund_schedule: p.refund_schedule,
        payment: 'at_property',
      },
    ],
    // Core VRP: where an agent gets the signed offer a session is bound to.
    verified_stay_offer_endpoint: offerEndpoint,
    discovery: `${origin}/.well-known/vacation-rental.json`,
  };
}

export function ucpBusinessProfile(o: { origin: string; offerEndpoint: string; property: PropertyView; jwks: VrpJwks }) {
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        [UCP_LODGING_SERVICE]: [
          {
            version: UCP_VERSION,
            spec: spec('specification/overview'),
            transport: 'rest',
            schema: spec('services/lodging/rest.openapi.json'),
            endpoint: `${o.origin}${UCP_REST_BASE_PATH}`,
          },
          {
            version: UCP_VERSION,
            spec: spec('specification/overview'),
            transport: 'mcp',
            schema: spec('services/lodging/mcp.openrpc.json'),
            endpoint: `${o.origin}${MCP_ENDPOINT_PATH}`,
          },
        ],
      },
      capabilities: {
        [UCP_BOOKING_CAPABILITY]: [
          { version: UCP_VERSION, spec: spec('specification/lodging/booking'), schema: spec('schemas/lodging/booking.json') },
        ],
        [UCP_CANCELLATION_POLICY_TYPE]: [
          {
            version: UCP_VERSION,
            spec: spec('specification/lodging/extensions/cancellation-policy'),
            schema: spec('schemas/lodging/policy_cancellation.json'),
            extends: UCP_BOOKING_CAPABILITY,
          },
        ],
        [UCP_LODGING_KEY]: [
          {
            version: UCP_VERSION,
            schema: `${o.origin}${UCP_LODGING_SCHEMA_PATH}`,
            extends: UCP_BOOKING_CAPABILITY,
            config: lodgingConfig(o.property, o.origin, o.offerEndpoint),
          },
        ],
      },
      payment_handlers: {},
    },
    keys: o.jwks.keys,
  };
}
