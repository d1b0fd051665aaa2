/**
 * The property description a host writes by hand (JSON or YAML) and `vrp node init --property`
 * imports. zod is the one source of truth for its shape; every error names the file, the
 * dotted field path and the reason (`invalid_property`). The format is documented with a
 * commented example in `examples/property.example.yaml`.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { dayNumber, isTimeZone, localDate } from './dates.js';
import { InvalidPropertyError } from './errors.js';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
/** Core §5 `price.adjustments`: "never a discount/savings/OTA-comparison label". */
const DISCOUNT_WORDS = /discount|saving|rebate|promo|deal|\boff\b|cheaper|ota/i;
/** Amounts are integer minor units; this cap keeps every stay total a safe integer. */
const MAX_AMOUNT = 100_000_000;

const isoDate = z.string().refine((s) => dayNumber(s) !== null, 'must be a real calendar date YYYY-MM-DD');
const amount = z.number().int('must be an integer amount in minor units').min(0, 'must be ≥ 0').max(MAX_AMOUNT, `must be ≤ ${MAX_AMOUNT}`);
const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a 24-hour time HH:MM');
const neutralLabel = z
  .string()
  .min(1)
  .max(80)
  .refine((s) => !DISCOUNT_WORDS.test(s), 'a price line is never labelled as a discount or saving (Core §5 adjustments)');

const season = z.strictObject({
  name: z.string().min(1).max(80),
  /** Free-form tag for `breakdown[].season_type`, e.g. high, low, holiday. */
  type: z.string().min(1).max(40).default('season'),
  /** First night of the season (inclusive). */
  start: isoDate,
  /** Last night of the season (inclusive). */
  end: isoDate,
  nightly: amount,
  /** Rate for the weekend nights; defaults to `nightly`. */
  weekend: amount.optional(),
});

const fee = z.strictObject({
  code: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  label: neutralLabel,
  /** A stay-level fee folded into the total (Core §5: no add-on fees). Never negative. */
  amount,
});

const refundRow = z.strictObject({
  hours_before_checkin: z.number().int().min(0),
  refund_percent: z.number().int().min(0).max(100),
});

export const propertyDescriptionSchema = z
  .strictObject({
    property_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1–64 characters of letters, digits, . _ -'),
    name: z.string().min(1).max(200),
    description: z.string().max(5000).default(''),
    /** Public page of the property; defaults to `https://{domain}/`. Must be on the node's domain. */
    url: z
      .string()
      .regex(/^https:\/\/\S+$/, 'must be an absolute https URL')
      .optional(),
    city: z.string().min(1).nullable().default(null),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
      .nullable()
      .default(null),
    time_zone: z.string().refine(isTimeZone, 'must be an IANA time zone, e.g. Europe/Stockholm'),
    currency: z.string().refine((c) => /^[A-Z]{3}$/.test(c) && CURRENCIES.has(c), 'must be an ISO 4217 currency code, e.g. EUR'),
    max_guests: z.number().int().min(1).max(100),
    min_nights: z.number().int().min(1).max(365).default(1),
    max_nights: z.number().int().min(1).max(365).default(60),
    /** How far ahead a stay may start (days from today in the property's time zone). */
    booking_horizon_days: z.number().int().min(1).max(1095).default(365),
    check_in_time: clockTime.default('15:00'),
    check_out_time: clockTime.default('11:00'),
    pets: z.string().max(40).nullable().default(null),
    pets_label: z.string().max(200).nullable().default(null),
    rates: z.strictObject({
      /** Nightly rate outside every season, in minor units. */
      nightly: amount,
      weekend: amount.optional(),
      /** Nights (named by the day they start) priced at the weekend rate. */
      weekend_nights: z.array(z.enum(WEEKDAY_NAMES)).max(7).default(['friday', 'saturday']),
      seasons: z.array(season).max(200).default([]),
    }),
    fees: z.array(fee).max(20).default([]),
    /** Core §5.3; absent/null = not published (unknown), [] = never a refund. Rows are relayed verbatim. */
    refund_schedule: z.array(refundRow).max(20).nullable().default(null),
    /** The host's opt-in; the node still withholds permission whenever the offer is not quoteable. */
    agent_permission: z
      .strictObject({
        may_quote_as_official_direct_offer: z.boolean().default(true),
        wording: z.string().max(200).optional(),
      })
      .default({ may_quote_as_official_direct_offer: true }),
    operator: z
      .strictObject({
        name: z.string().min(1).max(200).optional(),
        role: z.string().min(1).max(60).default('self'),
        key_custody: z.enum(['platform', 'self']).default('self'),
      })
      .default({ role: 'self', key_custody: 'self' }),
    /** valid_until = generated_at + this (Core §6). */
    offer_lifetime_minutes: z.number().int().min(1).max(1440).default(15),
    /** A calendar feed older than this is stale and makes offers non-quoteable. */
    calendar_max_age_minutes: z.number().int().min(1).max(10_080).default(180),
  })
  .superRefine((p, ctx) => {
    if (p.min_nights > p.max_nights) ctx.addIssue({ code: 'custom', path: ['min_nights'], message: 'must be ≤ max_nights' });
    const seen = new Set<string>();
    p.fees.forEach((f, i) => {
      if (seen.has(f.code)) ctx.addIssue({ code: 'custom', path: ['fees', i, 'code'], message: `duplicate fee code ${f.code}` });
      seen.add(f.code);
    });
    const hours = new Set<number>();
    p.refund_schedule?.forEach((r, i) => {
      if (hours.has(r.hours_before_checkin))
        ctx.addIssue({ code: 'custom', path: ['refund_schedule', i, 'hours_before_checkin'], message: 'duplicate threshold' });
      hours.add(r.hours_before_checkin);
    });
    const spans = p.rates.seasons.map((s) => [dayNumber(s.start) ?? 0, dayNumber(s.end) ?? 0] as const);
    spans.forEach(([a, b], i) => {
      if (b < a) ctx.addIssue({ code: 'custom', path: ['rates', 'seasons', i, 'end'], message: 'must not be before start' });
      spans.slice(0, i).forEach(([c, d], j) => {
        if (a <= d && c <= b) ctx.addIssue({ code: 'custom', path: ['rates', 'seasons', i, 'start'], message: `overlaps season ${j}` });
      });
    });
  });

/** A validated property description (defaults applied). */
export type PropertyDescription = z.output<typeof propertyDescriptionSchema>;

/** Validate an already-parsed document; `file` names it in errors. */
export function validatePropertyDescription(doc: unknown, file: string): PropertyDescription {
  const r = propertyDescriptionSchema.safeParse(doc);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new InvalidPropertyError(file, issue.path.map(String).join('.'), issue.message);
}

/** Read a property description file: `.json` as JSON, anything else as YAML (a superset of JSON). */
export function readPropertyFile(file: string): PropertyDescription {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InvalidPropertyError(file, '', `cannot read the file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let doc: unknown;
  if (extname(file).toLowerCase() === '.json') {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new InvalidPropertyError(file, '', `not valid JSON: ${(e as Error).message}`);
    }
  } else {
    try {
      doc = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
    } catch (e) {
      const where = e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}` : '';
      throw new InvalidPropertyError(file, '', `not valid YAML${where}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return validatePropertyDescription(doc, file);
}

/** Minor-unit digits of an ISO 4217 currency (EUR 2, JPY 0), as Intl knows them. */
export function currencyMinorDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/**
 * The sample property `vrp node init` creates without `--property` (and `vrp demo` serves):
 * seasons are laid out relative to `now` so the sample never goes stale.
 */
export function sampleProperty(now: number): PropertyDescription {
  const year = Number(localDate(now, 'Europe/Stockholm').slice(0, 4));
  const summer = (y: number) => ({
    name: `Summer ${y}`,
    type: 'high',
    start: `${y}-06-15`,
    end: `${y}-08-20`,
    nightly: 245000,
    weekend: 275000,
  });
  const winter = (y: number) => ({
    name: `Winter holidays ${y}`,
    type: 'holiday',
    start: `${y}-12-20`,
    end: `${y + 1}-01-05`,
    nightly: 210000,
  });
  return validatePropertyDescription(
    {
      property_id: 'villa-demo',
      name: 'Villa Demo',
      description: 'A sample seaside villa served by a vrpkit demo node. Three bedrooms, sea view, sauna.',
      city: 'Visby',
      country: 'SE',
      time_zone: 'Europe/Stockholm',
      currency: 'SEK',
      max_guests: 6,
      min_nights: 2,
      max_nights: 28,
      check_in_time: '15:00',
      check_out_time: '11:00',
      pets: 'not_allowed',
      pets_label: 'No pets',
      rates: { nightly: 165000, weekend: 185000, seasons: [summer(year), winter(year), summer(year + 1), winter(year + 1)] },
      fees: [{ code: 'cleaning', label: 'Final cleaning', amount: 95000 }],
      refund_schedule: [
        { hours_before_checkin: 720, refund_percent: 100 },
        { hours_before_checkin: 336, refund_percent: 50 },
        { hours_before_checkin: 0, refund_percent: 0 },
      ],
    },
    'sample property',
  );
}
