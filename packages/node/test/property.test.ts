/**
 * The hand-written property description: the documented example validates and imports, and
 * errors name the file, the dotted field path and the reason.
 */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidPropertyError, initNode, NodeStore, readPropertyFile, storeTargetFor, validatePropertyDescription } from '@vrpkit/node';
import { tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it } from 'vitest';

const EXAMPLE = fileURLToPath(new URL('../examples/property.example.yaml', import.meta.url));
const tmp = tempDir('property');
afterAll(() => tmp.cleanup());

describe('property description', () => {
  it('the documented example validates and imports as written', async () => {
    const p = readPropertyFile(EXAMPLE);
    expect(p).toMatchObject({ property_id: 'villa-solviken', currency: 'SEK', min_nights: 2, rates: { nightly: 145000 } });
    const dataDir = join(tmp.dir, 'node');
    await initNode({ domain: 'villa-solviken.example', dataDir, propertyFile: EXAMPLE });
    const store = await NodeStore.open(storeTargetFor(dataDir));
    expect((await store.property()).refund_schedule).toEqual(p.refund_schedule);
    await store.close();
  });

  it('refuses a property URL off the node domain before writing anything', async () => {
    await expect(initNode({ domain: 'other.example', dataDir: join(tmp.dir, 'off'), propertyFile: EXAMPLE })).rejects.toMatchObject({
      code: 'invalid_property',
      details: { field: 'url' },
    });
  });

  const base = { property_id: 'v', name: 'V', time_zone: 'UTC', currency: 'EUR', max_guests: 2, rates: { nightly: 100 } };
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'overlapping seasons',
      {
        ...base,
        rates: {
          nightly: 1,
          seasons: [
            { name: 'a', start: '2027-01-01', end: '2027-01-10', nightly: 1 },
            { name: 'b', start: '2027-01-10', end: '2027-01-12', nightly: 1 },
          ],
        },
      },
      'rates.seasons.1.start',
      /overlaps season 0/,
    ],
    [
      'an impossible date',
      { ...base, rates: { nightly: 1, seasons: [{ name: 'a', start: '2027-02-29', end: '2027-03-01', nightly: 1 }] } },
      'rates.seasons.0.start',
      /real calendar date/,
    ],
    ['a negative fee', { ...base, fees: [{ code: 'cleaning', label: 'Cleaning', amount: -5 }] }, 'fees.0.amount', /≥ 0/],
    ['min above max nights', { ...base, min_nights: 10, max_nights: 5 }, 'min_nights', /≤ max_nights/],
    [
      'a refund percent over 100',
      { ...base, refund_schedule: [{ hours_before_checkin: 1, refund_percent: 120 }] },
      'refund_schedule.0.refund_percent',
      /100/,
    ],
    ['an unknown currency', { ...base, currency: 'XYZ' }, 'currency', /ISO 4217/],
  ];
  it.each(cases)('%s → invalid_property at the field', (_n, doc, field, reason) => {
    let err: unknown;
    try {
      validatePropertyDescription(doc, 'inline.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidPropertyError);
    expect((err as InvalidPropertyError).toJSON()).toMatchObject({ code: 'invalid_property', details: { file: 'inline.yaml', field } });
    expect((err as InvalidPropertyError).reason).toMatch(reason);
  });
});
