/**
 * The property description a host writes by hand (JSON or YAML) and `vrp node init --property`
 * imports. zod is the one source of truth for its shape; a file is checked whole and every
 * problem is reported at once, one `file: field: reason` line each (`invalid_property`), an
 * unknown key with the nearest known one. The format is documented with a commented example in
 * `examples/property.example.yaml`.
 *
 * Prices in a file are never a bare number, which could be read as major or minor units: a
 * price is a decimal string in major units (`nightly: "85.00"`, converted with the currency's
 * ISO 4217 exponent) or an integer of minor units under a key that says so
 * (`nightly_minor: 8500`). Inside the node every amount is integer minor units (Core VRP v0.1 §5).
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { isDisplaySafeText } from '@vrpkit/protocol';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { dayNumber, isTimeZone, localDate } from './dates.js';
import { InvalidPropertyError, type PropertyIssue } from './errors.js';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
/** Core §5 `price.adjustments`: "never a discount/savings/OTA-comparison label". */
const DISCOUNT_WORDS = /discount|saving|rebate|promo|deal|\boff\b|cheaper|ota/i;
/** Amounts are integer minor units; this cap keeps every stay total a safe integer. */
const MAX_AMOUNT = 100_000_000;

/**
 * Text the node publishes and agents quote (name, description, labels): no control characters and
 * no bidi overrides, the guest fields' rule, since a host's property file can come from someone
 * else (a platform imports its hosts' files) and these characters hide or reorder what a person
 * reads in a terminal or on a page. The description alone may hold line breaks and tabs.
 */
const displayText = z.string().refine((s) => isDisplaySafeText(s), 'control and bidirectional-override characters are not accepted');
const displayParagraphs = z
  .string()
  .refine((s) => isDisplaySafeText(s, '\n\t'), 'control and bidirectional-override characters are not accepted');
/** A property file larger than this is refused before it is read (a real one is a few kilobytes). */
export const MAX_PROPERTY_FILE_BYTES = 1024 * 1024;

const isoDate = z.string().refine((s) => dayNumber(s) !== null, 'must be a real calendar date YYYY-MM-DD');
const amount = z.number().int('must be an integer amount in minor units').min(0, 'must be ≥ 0').max(MAX_AMOUNT, `must be ≤ ${MAX_AMOUNT}`);
const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a 24-hour time HH:MM');
const neutralLabel = displayText
  .min(1)
  .max(80)
  .refine((s) => !DISCOUNT_WORDS.test(s), 'a price line is never labelled as a discount or saving (Core §5 adjustments)');

const seasonSchema = z.strictObject({
  name: displayText.min(1).max(80),
  /** Free-form tag for `breakdown[].season_type`, e.g. high, low, holiday. */
  type: displayText.min(1).max(40).default('season'),
  /** First night of the season (inclusive). */
  start: isoDate,
  /** Last night of the season (inclusive). */
  end: isoDate,
  nightly: amount,
  /** Rate for the weekend nights; defaults to `nightly`. */
  weekend: amount.optional(),
});

const feeSchema = z.strictObject({
  code: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  label: neutralLabel,
  /** A stay-level fee folded into the total (Core §5: no add-on fees). Never negative. */
  amount,
});

const refundRowSchema = z.strictObject({
  hours_before_checkin: z.number().int().min(0),
  refund_percent: z.number().int().min(0).max(100),
});

const ratesSchema = z.strictObject({
  /** Nightly rate outside every season, in minor units. */
  nightly: amount,
  weekend: amount.optional(),
  /** Nights (named by the day they start) priced at the weekend rate. */
  weekend_nights: z.array(z.enum(WEEKDAY_NAMES)).max(7).default(['friday', 'saturday']),
  seasons: z.array(seasonSchema).max(200).default([]),
});

const agentPermissionSchema = z.strictObject({
  may_quote_as_official_direct_offer: z.boolean().default(true),
  wording: displayText.max(200).optional(),
});

const operatorSchema = z.strictObject({
  name: displayText.min(1).max(200).optional(),
  role: displayText.min(1).max(60).default('self'),
  key_custody: z.enum(['platform', 'self']).default('self'),
});

export const propertyDescriptionSchema = z
  .strictObject({
    property_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1–64 characters of letters, digits, . _ -'),
    name: displayText.min(1).max(200),
    description: displayParagraphs.max(5000).default(''),
    /** Public page of the property; defaults to `https://{domain}/`. Must be on the node's domain. */
    url: z
      .string()
      .regex(/^https:\/\/\S+$/, 'must be an absolute https URL')
      .optional(),
    /**
     * The host's booking terms and privacy notice (UCP Booking `links[]`: `terms_of_service`,
     * `privacy_policy`, "mandatory for legal compliance"); may be on the host's own site. Absent: the
     * node serves pages of its own at `https://{domain}/ucp/terms` and `/ucp/privacy` (ucp/legal.ts).
     */
    terms_url: z
      .string()
      .regex(/^https:\/\/\S+$/, 'must be an absolute https URL')
      .max(2000)
      .optional(),
    privacy_url: z
      .string()
      .regex(/^https:\/\/\S+$/, 'must be an absolute https URL')
      .max(2000)
      .optional(),
    city: displayText.min(1).max(200).nullable().default(null),
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
    pets: displayText.max(40).nullable().default(null),
    pets_label: displayText.max(200).nullable().default(null),
    rates: ratesSchema,
    fees: z.array(feeSchema).max(20).default([]),
    /** Core §5.3; absent/null = not published (unknown), [] = never a refund. Rows are relayed verbatim. */
    refund_schedule: z.array(refundRowSchema).max(20).nullable().default(null),
    /** The host's opt-in; the node still withholds permission whenever the offer is not quoteable. */
    agent_permission: agentPermissionSchema.default({ may_quote_as_official_direct_offer: true }),
    operator: operatorSchema.default({ role: 'self', key_custody: 'self' }),
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

/** Where the prices of a document are, and their keys (each also written `KEY_minor` in a file). */
const PRICE_KEYS = { rates: ['nightly', 'weekend'], season: ['nightly', 'weekend'], fee: ['amount'] } as const;

/** The keys each object of a hand-written file may hold, by dotted path (`*` = any list index). */
const FILE_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(propertyDescriptionSchema.shape),
  rates: [...Object.keys(ratesSchema.shape), ...PRICE_KEYS.rates.map((k) => `${k}_minor`)],
  'rates.seasons.*': [...Object.keys(seasonSchema.shape), ...PRICE_KEYS.season.map((k) => `${k}_minor`)],
  'fees.*': [...Object.keys(feeSchema.shape), ...PRICE_KEYS.fee.map((k) => `${k}_minor`)],
  'refund_schedule.*': Object.keys(refundRowSchema.shape),
  agent_permission: Object.keys(agentPermissionSchema.shape),
  operator: Object.keys(operatorSchema.shape),
};

const DECIMAL_RE = /^(\d+)(?:\.(\d+))?$/;

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const dotted = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** Edit distance (Levenshtein), for naming the key a typo meant. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** "unknown key `max_guest` — did you mean `max_guests`?" when a known key is a typo away. */
function unknownKeyReason(key: string, parentPath: readonly PropertyKey[]): string {
  const known = FILE_KEYS[parentPath.map((p) => (typeof p === 'number' ? '*' : String(p))).join('.')] ?? [];
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return `unknown key \`${key}\`${best ? ` — did you mean \`${best}\`?` : ''}`;
}

/** Every zod issue as a `field: reason`, an unrecognized-keys issue as one line per key. */
function issuesOf(error: z.ZodError): PropertyIssue[] {
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: dotted(i.path), reason: unknownKeyReason(k, i.path) }))
      : [{ field: dotted(i.path), reason: i.message }],
  );
}

function fail(file: string, issues: PropertyIssue[]): never {
  throw new InvalidPropertyError(file, issues[0]!.field, issues[0]!.reason, issues);
}

/**
 * A price of a hand-written file in integer minor units: `KEY: "85.00"` (major units, at most
 * the currency's ISO 4217 exponent of decimals) or `KEY_minor: 8500`. Rewrites `obj[KEY]` in
 * place and returns the problem with the key it is about, if any (range checks are the schema's).
 */
function priceInMinorUnits(obj: Doc, key: string, currency: string | null): { key: string; reason: string } | undefined {
  const minorKey = `${key}_minor`;
  const major = obj[key];
  const minor = obj[minorKey];
  delete obj[minorKey];
  if (major === undefined && minor === undefined) return undefined;
  if (major !== undefined && minor !== undefined) return { key, reason: `give ${key} or ${minorKey}, not both` };
  if (minor !== undefined) {
    if (typeof minor !== 'number' || !Number.isInteger(minor))
      return { key: minorKey, reason: 'must be an integer amount in minor units, e.g. 8500' };
    obj[key] = minor;
    return undefined;
  }
  if (typeof major === 'number')
    return {
      key,
      reason: `a bare number could be major or minor units: write major units as a decimal string (${key}: "85.00") or minor units as an integer (${minorKey}: 8500)`,
    };
  const m = typeof major === 'string' ? DECIMAL_RE.exec(major.trim()) : null;
  if (!m) return { key, reason: `must be a decimal string in major units, e.g. ${key}: "85.00" (or ${minorKey}: 8500)` };
  if (currency === null) return undefined; // the currency itself is reported
  const digits = currencyMinorDigits(currency);
  const fraction = m[2] ?? '';
  if (fraction.length > digits)
    return {
      key,
      reason: `${currency} has ${digits} decimal place${digits === 1 ? '' : 's'} (ISO 4217): "${major}" is not a whole number of minor units`,
    };
  obj[key] = Number(m[1]! + fraction.padEnd(digits, '0'));
  return undefined;
}

/**
 * A hand-written document with every price converted to integer minor units, plus the
 * problems found on the way, and the price fields they are about (so the schema's own
 * complaint about the same field is not repeated).
 */
function pricesInMinorUnits(doc: unknown): { doc: unknown; issues: PropertyIssue[]; reported: Set<string> } {
  const issues: PropertyIssue[] = [];
  const reported = new Set<string>();
  if (!isDoc(doc)) return { doc, issues, reported };
  const currency = typeof doc.currency === 'string' && CURRENCIES.has(doc.currency) ? doc.currency : null;
  const convert = (value: unknown, path: (string | number)[], keys: readonly string[]): unknown => {
    if (!isDoc(value)) return value;
    const copy = { ...value };
    for (const key of keys) {
      const problem = priceInMinorUnits(copy, key, currency);
      if (problem) {
        issues.push({ field: dotted([...path, problem.key]), reason: problem.reason });
        reported.add(dotted([...path, key]));
        delete copy[key];
      }
    }
    return copy;
  };
  const out: Doc = { ...doc };
  if (isDoc(out.rates)) {
    const rates = convert(out.rates, ['rates'], PRICE_KEYS.rates) as Doc;
    if (Array.isArray(rates.seasons)) rates.seasons = rates.seasons.map((s, i) => convert(s, ['rates', 'seasons', i], PRICE_KEYS.season));
    out.rates = rates;
  }
  if (Array.isArray(out.fees)) out.fees = out.fees.map((f, i) => convert(f, ['fees', i], PRICE_KEYS.fee));
  return { doc: out, issues, reported };
}

/**
 * Validate a hand-written property document (parsed JSON or YAML; prices as described in the
 * module comment). `file` names it in errors; every problem is reported at once.
 */
export function parsePropertyDocument(doc: unknown, file: string): PropertyDescription {
  const prices = pricesInMinorUnits(doc);
  const r = propertyDescriptionSchema.safeParse(prices.doc);
  // A price already reported is absent from the converted document: its "required" is not news.
  const issues = [...prices.issues, ...(r.success ? [] : issuesOf(r.error).filter((i) => !prices.reported.has(i.field)))];
  if (issues.length > 0) fail(file, issues);
  return r.data!;
}

/**
 * Validate a property built in a program, amounts already in integer minor units (what
 * `sampleProperty` builds and `propertyDocument` undoes); `label` names it in errors.
 */
export function validatePropertyDescription(doc: unknown, label: string): PropertyDescription {
  const r = propertyDescriptionSchema.safeParse(doc);
  if (!r.success) fail(label, issuesOf(r.error));
  return r.data;
}

/** A property as a hand-written document again (prices as `*_minor` integers): what a file holds. */
export function propertyDocument(p: PropertyDescription): Record<string, unknown> {
  const minor = <T extends Record<string, unknown>>(o: T, keys: readonly string[]) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [keys.includes(k) ? `${k}_minor` : k, v]));
  return {
    ...p,
    rates: { ...minor(p.rates, PRICE_KEYS.rates), seasons: p.rates.seasons.map((s) => minor(s, PRICE_KEYS.season)) },
    fees: p.fees.map((f) => minor(f, PRICE_KEYS.fee)),
  };
}

/**
 * Read a property description file: `.json` as JSON, anything else as YAML (a superset of JSON).
 * Only a regular file of at most `MAX_PROPERTY_FILE_BYTES` is read: a FIFO or device would block
 * or never end, a huge file would exhaust memory. `followLinks: false` refuses a symbolic link
 * (a folder of files from others must not lead the reader outside it).
 */
export function readPropertyFile(file: string, opts: { followLinks?: boolean } = {}): PropertyDescription {
  let text: string;
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    const flags = constants.O_RDONLY | constants.O_NONBLOCK | (opts.followLinks === false ? constants.O_NOFOLLOW : 0);
    fd = openSync(file, flags);
    const st = fstatSync(fd);
    if (!st.isFile()) throw new InvalidPropertyError(file, '', 'not a regular file');
    if (st.size > MAX_PROPERTY_FILE_BYTES) {
      throw new InvalidPropertyError(file, '', `larger than ${MAX_PROPERTY_FILE_BYTES} bytes (${st.size})`);
    }
    text = readFileSync(fd, 'utf8');
  } catch (e) {
    if (e instanceof InvalidPropertyError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new InvalidPropertyError(
      file,
      '',
      code === 'ELOOP' ? 'a symbolic link (not followed)' : `cannot read the file (${code ?? 'error'})`,
    );
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return parsePropertyText(text, file, extname(file).toLowerCase() === '.json' ? 'json' : 'yaml');
}

/**
 * A property description's text (what a file holds, or what the host console was given):
 * `json` as JSON, `yaml` as YAML, then `parsePropertyDocument`; `label` names it in errors.
 */
export function parsePropertyText(text: string, label: string, format: 'json' | 'yaml'): PropertyDescription {
  let doc: unknown;
  if (format === 'json') {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new InvalidPropertyError(label, '', `not valid JSON: ${(e as Error).message}`);
    }
  } else {
    try {
      doc = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
    } catch (e) {
      const where = e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}` : '';
      throw new InvalidPropertyError(label, '', `not valid YAML${where}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return parsePropertyDocument(doc, label);
}

/** Minor-unit digits of an ISO 4217 currency (EUR 2, JPY 0), as Intl knows them. */
export function currencyMinorDigits(currency: string): number {
  let digits = minorDigits.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    minorDigits.set(currency, digits);
  }
  return digits;
}

/** Minor digits by currency code, as found (a formatter costs a tenth of a millisecond to make); only codes Intl accepts get here. */
const minorDigits = new Map<string, number>();

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
