/**
 * The vendored UCP Lodging schemas compile as one set (every `$ref` resolves, stand-ins included) and
 * keep their rules: a session of the shape the Booking REST examples show passes; a ready session
 * without an identified lead, a cancellation policy without `refundability`, a create without a stay
 * binding and a complete without `payment` do not.
 */
import { UCP_BOOKING_SCHEMA, ucpRequestErrors, ucpSchemaErrors } from '@vrpkit/testkit/ucp';
import { describe, expect, it } from 'vitest';

const V = '2026-09-24';
const dates = { start_date: '2026-07-15', end_date: '2026-07-21' };
const totals = [
  { type: 'subtotal', amount: 1 },
  { type: 'total', amount: 1 },
];
const session = {
  ucp: { version: V, capabilities: { 'dev.ucp.lodging.booking': [{ version: V }] }, payment_handlers: {} },
  id: 'b1',
  status: 'incomplete',
  property: { id: 'h1', name: 'H' },
  stays: [
    {
      id: 's1',
      accommodation_type: { id: 'a', title: 'A', capacity: { adults: 2, total: 2 } },
      rate_plan: { id: 'r', title: 'R' },
      occupancy: { adults: 2, total: 2 },
      stay_dates: dates,
      totals,
    },
  ],
  currency: 'USD',
  totals,
  links: [],
  policies: [{ type: 'dev.ucp.lodging.policy.cancellation', description: { plain: 'x' }, refundability: 'refundable' }],
  payment: {
    terms: [{ id: 't', title: 'T', schedules: [{ id: 's', type: 'at_property', description: { plain: 'x' }, amount: 1 }] }],
    selected_term_id: 't',
  },
};

describe('vendored UCP Lodging schemas', () => {
  it('accept a booking session of the published shape and refuse what the rules forbid', () => {
    expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, session)).toEqual([]);
    expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, { ...session, status: 'ready_for_complete' })).not.toEqual([]);
    expect(
      ucpSchemaErrors(UCP_BOOKING_SCHEMA, {
        ...session,
        status: 'completed',
        booker: { first_name: 'A', last_name: 'B', email: 'a@b.example' },
      }),
    ).not.toEqual([]);
    const noRefundability = [{ type: 'dev.ucp.lodging.policy.cancellation', description: { plain: 'x' } }];
    expect(ucpSchemaErrors(UCP_BOOKING_SCHEMA, { ...session, policies: noRefundability })).not.toEqual([]);
  });

  it('apply the requests’ ucp_request annotations', () => {
    expect(ucpRequestErrors('create', UCP_BOOKING_SCHEMA, { property: { id: 'h' }, stays: [{ id: 's', stay_dates: dates }] })).toEqual([]);
    expect(ucpRequestErrors('create', UCP_BOOKING_SCHEMA, { property: { id: 'h' }, stays: [{ stay_dates: dates }] })).not.toEqual([]);
    expect(ucpRequestErrors('complete', UCP_BOOKING_SCHEMA, { payment: {} })).toEqual([]);
    expect(ucpRequestErrors('complete', UCP_BOOKING_SCHEMA, {})).not.toEqual([]);
  });
});
