/**
 * The hand-written property description: the documented example validates and imports, and
 * errors name the file, the dotted field path and the reason.
 */

import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  currencyMinorDigits,
  InvalidPropertyError,
  initNode,
  MAX_PROPERTY_FILE_BYTES,
  NodeStore,
  parsePropertyDocument,
  propertyDocument,
  readPropertyFile,
  sampleProperty,
  storeTargetFor,
} from '@vrpkit/node';
import { tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it } from 'vitest';

const EXAMPLE = fileURLToPath(new URL('../examples/property.example.yaml', import.meta.url));
const tmp = tempDir('property');
afterAll(() => tmp.cleanup());

describe('property description', () => {
  it('the documented example validates and imports as written', async () => {
    const p = readPropertyFile(EXAMPLE);
    expect(p).toMatchObject({ property_id: 'villa-solviken', currency: 'SEK', min_nights: 2, rates: { nightly: 145000, weekend: 165000 } });
    // Major-unit strings and *_minor integers land as the same integer minor units.
    expect(p.rates.seasons[0]).toMatchObject({ nightly: 235000, weekend: 265000 });
    expect(p.fees).toEqual([{ code: 'cleaning', label: 'Final cleaning', amount: 95000 }]);
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

  const base = { property_id: 'v', name: 'V', time_zone: 'UTC', currency: 'EUR', max_guests: 2, rates: { nightly: '1.00' } };
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'overlapping seasons',
      {
        ...base,
        rates: {
          nightly: '0.01',
          seasons: [
            { name: 'a', start: '2027-01-01', end: '2027-01-10', nightly: '0.01' },
            { name: 'b', start: '2027-01-10', end: '2027-01-12', nightly_minor: 1 },
          ],
        },
      },
      'rates.seasons.1.start',
      /overlaps season 0/,
    ],
    [
      'an impossible date',
      { ...base, rates: { nightly: '0.01', seasons: [{ name: 'a', start: '2027-02-29', end: '2027-03-01', nightly: '0.01' }] } },
      'rates.seasons.0.start',
      /real calendar date/,
    ],
    ['a negative fee', { ...base, fees: [{ code: 'cleaning', label: 'Cleaning', amount_minor: -5 }] }, 'fees.0.amount', /≥ 0/],
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
      parsePropertyDocument(doc, 'inline.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidPropertyError);
    expect((err as InvalidPropertyError).toJSON()).toMatchObject({ code: 'invalid_property', details: { file: 'inline.yaml', field } });
    expect((err as InvalidPropertyError).reason).toMatch(reason);
  });

  /** The error a document raises (or fails the test). */
  function invalid(doc: unknown): InvalidPropertyError {
    try {
      parsePropertyDocument(doc, 'inline.yaml');
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidPropertyError);
      return e as InvalidPropertyError;
    }
    throw new Error('the document validated');
  }

  it('terms_url and privacy_url are optional absolute https URLs (UCP links[]), kept as written; anything else is refused', () => {
    const base = { property_id: 'v', name: 'V', time_zone: 'UTC', currency: 'EUR', max_guests: 2, rates: { nightly_minor: 8500 } };
    expect(parsePropertyDocument(base, 'inline.yaml')).not.toHaveProperty('terms_url');
    const own = { terms_url: 'https://host.example/terms', privacy_url: 'https://host.example/privacy' };
    expect(parsePropertyDocument({ ...base, ...own }, 'inline.yaml')).toMatchObject(own);
    for (const [field, value] of [
      ['terms_url', 'http://host.example/terms'],
      ['privacy_url', 'javascript:alert(1)'],
      ['privacy_url', 'https://host.example/a b'],
    ] as const) {
      const err = invalid({ ...base, [field]: value });
      expect(err.issues).toEqual([{ field, reason: 'must be an absolute https URL' }]);
    }
  });

  it('a bare amount 85.00 is never read as 85 minor units (€0.85): refused, naming both written forms', () => {
    const file = join(tmp.dir, 'bare-amount.yaml');
    writeFileSync(
      file,
      'property_id: v\nname: V\ntime_zone: UTC\ncurrency: EUR\nmax_guests: 2\nrates: {nightly: "85.00"}\nfees:\n  - {code: cleaning, label: Cleaning, amount: 85.00}\n',
    );
    expect(() => readPropertyFile(file)).toThrow(InvalidPropertyError);
    try {
      readPropertyFile(file);
    } catch (e) {
      const err = e as InvalidPropertyError;
      expect(err.issues).toEqual([{ field: 'fees.0.amount', reason: expect.stringMatching(/bare number/) }]);
      expect(err.message).toBe(`${file}: fees.0.amount: ${err.reason}`);
      expect(err.reason).toContain('amount: "85.00"');
      expect(err.reason).toContain('amount_minor: 8500');
    }
  });

  it('a bare number is refused for every price key, with the key-specific forms', () => {
    const err = invalid({
      ...base,
      rates: { nightly: 100, weekend: 1.5, seasons: [{ name: 's', start: '2027-01-01', end: '2027-01-02', nightly: 3 }] },
    });
    expect(err.issues.map((i) => i.field)).toEqual(['rates.nightly', 'rates.weekend', 'rates.seasons.0.nightly']);
    expect(err.issues[1]!.reason).toContain('weekend: "85.00"');
    expect(err.issues[1]!.reason).toContain('weekend_minor: 8500');
  });

  it('decimal strings are major units converted with the ISO 4217 exponent: JPY 0, EUR 2, KWD 3', () => {
    expect([currencyMinorDigits('JPY'), currencyMinorDigits('EUR'), currencyMinorDigits('KWD')]).toEqual([0, 2, 3]);
    const priced = (currency: string, nightly: string, fee: string) =>
      parsePropertyDocument({ ...base, currency, rates: { nightly }, fees: [{ code: 'cleaning', label: 'Cleaning', amount: fee }] }, 'x');
    expect(priced('JPY', '8500', '3000')).toMatchObject({ rates: { nightly: 8500 }, fees: [{ amount: 3000 }] });
    expect(priced('EUR', '85.50', '85')).toMatchObject({ rates: { nightly: 8550 }, fees: [{ amount: 8500 }] });
    expect(priced('KWD', '12.345', '0.5')).toMatchObject({ rates: { nightly: 12345 }, fees: [{ amount: 500 }] });
    // More decimals than the currency has is not a whole number of minor units.
    expect(invalid({ ...base, currency: 'JPY', rates: { nightly: '85.5' } }).issues).toEqual([
      { field: 'rates.nightly', reason: expect.stringMatching(/JPY has 0 decimal places/) },
    ]);
    expect(invalid({ ...base, currency: 'EUR', rates: { nightly: '85.505' } }).reason).toMatch(/EUR has 2 decimal places/);
    expect(invalid({ ...base, currency: 'KWD', rates: { nightly: '1.2345' } }).reason).toMatch(/KWD has 3 decimal places/);
    expect(invalid({ ...base, rates: { nightly: '85,00' } }).reason).toMatch(/decimal string/);
    expect(invalid({ ...base, rates: { nightly: '-1.00' } }).reason).toMatch(/decimal string/);
  });

  it('amount_minor names integer minor units; both forms at once or a fractional minor amount are refused', () => {
    expect(parsePropertyDocument({ ...base, rates: { nightly_minor: 8500, weekend: '90.00' } }, 'x').rates).toMatchObject({
      nightly: 8500,
      weekend: 9000,
    });
    expect(invalid({ ...base, rates: { nightly: '85.00', nightly_minor: 8500 } }).issues).toEqual([
      { field: 'rates.nightly', reason: 'give nightly or nightly_minor, not both' },
    ]);
    expect(invalid({ ...base, fees: [{ code: 'c', label: 'C', amount_minor: 85.5 }] }).issues).toEqual([
      { field: 'fees.0.amount_minor', reason: expect.stringMatching(/integer amount in minor units/) },
    ]);
    expect(invalid({ ...base, rates: { nightly_minor: 100_000_001 } }).field).toBe('rates.nightly');
  });

  it('a typo in a required key is named as an unknown key with the key it may mean', () => {
    const { max_guests: _, ...rest } = base;
    const err = invalid({ ...rest, max_guest: 2, rates: { nightly: '1.00', wekend: '2.00' }, swimming_pool: true });
    expect(err.issues).toEqual(
      expect.arrayContaining([
        { field: '', reason: 'unknown key `max_guest` — did you mean `max_guests`?' },
        { field: '', reason: 'unknown key `swimming_pool`' },
        { field: 'rates', reason: 'unknown key `wekend` — did you mean `weekend`?' },
        { field: 'max_guests', reason: expect.any(String) },
      ]),
    );
    expect(err.message).toContain('inline.yaml: (root): unknown key `max_guest` — did you mean `max_guests`?');
  });

  it('every problem of a file is reported at once, one file: field: reason line each', () => {
    const err = invalid({
      ...base,
      currency: 'EURO',
      max_guests: 0,
      country: 'se',
      rates: { nightly: 85 },
      fees: [{ code: 'Cleaning', label: 'Big discount', amount_minorr: 1 }],
    });
    const fields = err.issues.map((i) => i.field);
    expect(fields).toEqual(
      expect.arrayContaining(['rates.nightly', 'currency', 'max_guests', 'country', 'fees.0.code', 'fees.0.label', 'fees.0']),
    );
    expect(err.issues.find((i) => i.field === 'fees.0')?.reason).toBe('unknown key `amount_minorr` — did you mean `amount_minor`?');
    expect(err.message.split('\n')).toEqual(err.issues.map((i) => `inline.yaml: ${i.field || '(root)'}: ${i.reason}`));
  });

  it('propertyDocument writes a property back as a file that reads as the same property', () => {
    const p = sampleProperty(Date.parse('2027-01-01'));
    const file = join(tmp.dir, 'sample.json');
    writeFileSync(file, JSON.stringify(propertyDocument(p)));
    expect(readPropertyFile(file)).toEqual(p);
  });

  it('text an agent quotes holds no control or bidi-override characters; the description keeps its line breaks', () => {
    const doc = propertyDocument(sampleProperty(Date.parse('2027-01-01')));
    const bad = (patch: Record<string, unknown>) => () => parsePropertyDocument({ ...doc, ...patch }, 'p.json');
    expect(bad({ name: 'Villa \u202eevil' })).toThrow(/p\.json: name: control and bidirectional-override characters/);
    expect(bad({ city: 'Visby\u001b[2J' })).toThrow(/city: control/);
    expect(bad({ fees: [{ code: 'cleaning', label: 'Clean\u0007', amount: '950.00' }] })).toThrow(/fees\.0\.label: control/);
    expect(parsePropertyDocument({ ...doc, description: 'Three bedrooms.\n\tSea view.' }, 'p.json').description).toBe(
      'Three bedrooms.\n\tSea view.',
    );
    expect(bad({ description: 'Sea view.\u2066' })).toThrow(/description: control/);
  });

  it('only a regular file of bounded size is read: a FIFO does not block, a huge file is not read, a link can be refused', () => {
    const fifo = join(tmp.dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(() => readPropertyFile(fifo)).toThrow(/fifo\.yaml: \(root\): not a regular file/);
    const huge = join(tmp.dir, 'huge.yaml');
    writeFileSync(huge, `name: "${'x'.repeat(MAX_PROPERTY_FILE_BYTES)}"\n`);
    expect(() => readPropertyFile(huge)).toThrow(/huge\.yaml: \(root\): larger than 1048576 bytes/);
    const target = join(tmp.dir, 'target.json');
    writeFileSync(target, JSON.stringify(propertyDocument(sampleProperty(Date.parse('2027-01-01')))));
    const link = join(tmp.dir, 'link.json');
    symlinkSync(target, link);
    expect(readPropertyFile(link).property_id).toBe('villa-demo');
    expect(() => readPropertyFile(link, { followLinks: false })).toThrow(/link\.json: \(root\): a symbolic link \(not followed\)/);
  });
});
