import { readFileSync } from 'node:fs';
import {
  AgentUsageError,
  checkOfferRequest,
  createHardenedFetch,
  type DiscoveryOutcome,
  type EnvelopeOutcome,
  FACT_NAMES,
  fetchDiscovery,
  fetchOfferEnvelope,
  JwksCache,
  quoteChecks,
  type StayOfferVerification,
  verifyOffer,
  verifyStayOfferEnvelope,
} from '@vrpkit/agent';
import { base64urlDecode, type Clock, type FetchLike, fixedClock, sha256Hex, systemClock } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { type Command, InvalidArgumentError } from 'commander';
import { EXIT_USAGE, printJson, reportError, terminalSafe } from '../io.js';
import { parseHttpsUrl, parseVia, SURFACE_URL_OPTIONS, VIA_OPTION_HELP, type ViaChoice, verifyVia } from './verify-via.js';

/** Exit codes of `vrp verify`: safe to quote (Core VRP v0.1 §7) / verified but not quoteable / anything else (fail closed, §8). */
export const EXIT_SAFE = 0;
export const EXIT_NOT_QUOTEABLE = 1;
export const EXIT_UNVERIFIED = 2;

/** 0 when safe; 1 only for a fresh verified offer that fails the gate (e.g. a signed negative); 2 for unknown, invalid, unverifiable, expired. */
export function exitCodeFor(status: string, safe: boolean): number {
  if (safe) return EXIT_SAFE;
  return status === 'verified' ? EXIT_NOT_QUOTEABLE : EXIT_UNVERIFIED;
}

/** The stay options of `vrp verify` and `vrp conformance`, as typed on the command line. */
export interface StayOptions {
  checkIn?: string;
  checkOut?: string;
  guests?: string;
}

/**
 * The offer request the stay options name: the protocol's one request parser (Core VRP v0.1 §4)
 * on the strings as typed — the form of an HTTP query — so `vrp` refuses exactly what a node
 * refuses, with the same code (`2026-02-30` is `invalid_date`). Throws `AgentUsageError` (exit 64).
 */
export function stayRequest(o: StayOptions): OfferRequestArgs {
  return checkOfferRequest({ check_in: o.checkIn, check_out: o.checkOut, guests: o.guests });
}

function instant(v: string): string {
  if (!Number.isFinite(Date.parse(v))) throw new InvalidArgumentError('expected an ISO 8601 instant, e.g. 2026-06-02T12:05:00Z');
  return v;
}

/**
 * A `--connect-to` entry, curl's HOST:PORT:ADDR:PORT. A VRP origin is `https://{domain}`, port
 * 443 (Core VRP v0.1 §2), so an entry for any other port would never be dialled: refused, not ignored.
 */
export function collectConnectTo(v: string, prev: string[] = []): string[] {
  const m = /^[^:\s]+:(\d{1,5}):\S+:\d{1,5}$/.exec(v);
  if (!m) throw new InvalidArgumentError(`${v} is not HOST:443:ADDR:PORT`);
  if (m[1] !== '443')
    throw new InvalidArgumentError(`${v} maps port ${m[1]}, but a node's origin is https://HOST on port 443: use HOST:443:ADDR:PORT`);
  return [...prev, v];
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new AgentUsageError('file_unreadable', `cannot read the ${what} file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function readJson(file: string, what: string): unknown {
  const text = readText(file, what);
  try {
    return JSON.parse(text);
  } catch {
    throw new AgentUsageError('file_not_json', `the ${what} file ${file} is not JSON`);
  }
}

/** Usage errors (bad arguments, unreadable files) exit 64; everything else is reported and exits 2 (fail closed). */
function fail(e: unknown, json: boolean): void {
  process.exitCode = reportError(e, json, e instanceof AgentUsageError ? EXIT_USAGE : EXIT_UNVERIFIED);
}

/**
 * Obtain the offer envelope for `args` from the node. This is the one transport-specific step of
 * `vrp verify`: today HTTP (Core §4, the endpoint the discovery document names); other
 * transports (MCP, A2A, WebMCP) branch here and return the same `EnvelopeOutcome`.
 */
export async function obtainEnvelope(discovery: DiscoveryOutcome, args: OfferRequestArgs, fetch: FetchLike): Promise<EnvelopeOutcome> {
  if (!discovery.ok) return { ok: false, code: discovery.code, message: discovery.message, url: null };
  return fetchOfferEnvelope(discovery.discovery, args, { fetch });
}

/** Minor units rendered with the currency's usual decimals (signed value kept verbatim beside it). */
function money(amount: number, currency: string, minorUnit: boolean): string {
  if (!minorUnit) return `${amount} ${currency}`;
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return `${amount} ${currency} (minor units)`;
  }
  return `${(amount / 10 ** digits).toFixed(digits)} ${currency} (${amount} minor units)`;
}

/** The human summary: verdict and why, the quote when safe, each fact's three-state value. */
export function renderSummary(r: StayOfferVerification, args: OfferRequestArgs): string {
  const lines: string[] = [];
  lines.push(`${r.domain}: ${args.check_in} → ${args.check_out}, ${args.guests} guest${args.guests === 1 ? '' : 's'}`);
  if (r.safe_to_quote && r.quote) {
    lines.push('SAFE TO QUOTE as the official direct offer');
    lines.push(`  say:         "${terminalSafe(r.quote.phrase)}"`);
    lines.push(`  total:       ${money(r.quote.total, r.quote.currency, r.quote.minor_unit)} — signed, exact`);
    lines.push(`  book at:     ${terminalSafe(r.quote.direct_booking_url)}`);
    lines.push(`  valid until: ${r.offer?.valid_until}`);
    if (r.quote.refund_schedule === null) lines.push('  refund terms: not stated in the signed offer (unknown)');
    else if (r.quote.refund_schedule.length === 0) lines.push('  refund terms: [] — no refund at any time');
    else {
      lines.push('  refund terms (verbatim rows):');
      for (const row of r.quote.refund_schedule)
        lines.push(`    hours_before_checkin ${row.hours_before_checkin} → refund_percent ${row.refund_percent}`);
    }
  } else {
    lines.push(`NOT SAFE TO QUOTE — status ${r.status}${r.code ? ` (${r.code})` : ''}: ${terminalSafe(r.reason)}`);
    if (r.failures.length > 0) lines.push(`  failed conditions: ${r.failures.join(', ')}`);
    if (r.safe_to_cite_verified_unavailable) {
      const why = r.offer?.availability.reason;
      lines.push(`  the host-signed offer says available: false${why ? ` (reason: ${terminalSafe(why)})` : ''} — a verified negative`);
    }
  }
  lines.push('facts (Core §9):');
  for (const name of FACT_NAMES) {
    const f = r.facts[name];
    lines.push(`  ${name.padEnd(29)} ${terminalSafe(f.value).padEnd(9)} ${f.class ? `${f.class}, from ${f.read_from}` : '-'}`);
  }
  return `${lines.join('\n')}\n`;
}

interface OnlineOptions {
  json?: boolean;
  connectTo?: string[];
  cacert?: string;
  now?: string;
}

/**
 * `--json` of an online verification. A signed payload nested deeper than the JSON serialiser's
 * stack (~5,000 levels) still verifies; its copies in the result (`offer`, `verification.payload`,
 * `verification.header`) are then printed as the SHA-256 of the signed JWS segment they were
 * decoded from — the verdict is printed, the hostile content is not.
 */
export function printVerification(r: StayOfferVerification, jws: string | null): void {
  try {
    printJson(r);
    return;
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  const [header, payload] = (jws ?? '').split('.');
  const printable = <T>(value: T, segment: string | undefined): T | { omitted: 'not_serialisable'; sha256: string | null } => {
    try {
      JSON.stringify(value);
      return value;
    } catch {
      const bytes = segment ? base64urlDecode(segment) : null;
      return { omitted: 'not_serialisable', sha256: bytes ? sha256Hex(bytes) : null };
    }
  };
  printJson({
    ...r,
    offer: printable(r.offer, payload),
    verification: r.verification && {
      ...r.verification,
      header: printable(r.verification.header, header),
      payload: printable(r.verification.payload, payload),
    },
  });
}

async function verifyOnline(target: string, args: OfferRequestArgs, o: OnlineOptions): Promise<void> {
  const json = !!o.json;
  let fetch: ReturnType<typeof createHardenedFetch> | undefined;
  try {
    fetch = createHardenedFetch({
      ...(o.connectTo ? { connectTo: o.connectTo } : {}),
      ...(o.cacert ? { ca: readText(o.cacert, 'CA') } : {}),
    });
    const clock: Clock = o.now ? fixedClock(o.now) : systemClock;
    const discovery = await fetchDiscovery(target, { fetch });
    if (!discovery.ok && discovery.code === 'invalid_domain') throw new AgentUsageError('invalid_domain', discovery.message);
    const obtained = await obtainEnvelope(discovery, args, fetch);
    const r = await verifyStayOfferEnvelope(discovery, obtained, args, { clock, jwksCache: new JwksCache({ fetch, clock }) });
    const jws = obtained.ok ? (obtained.envelope.signature as { jws?: unknown }).jws : null;
    if (json) printVerification(r, typeof jws === 'string' ? jws : null);
    else process.stdout.write(renderSummary(r, args));
    process.exitCode = exitCodeFor(r.status, r.safe_to_quote);
  } catch (e) {
    fail(e, json);
  } finally {
    await fetch?.close();
  }
}

function verifyOfflineOffer(o: { envelope: string; jwks: string; now?: string; json?: boolean }): void {
  const json = !!o.json;
  try {
    const envelope = readJson(o.envelope, 'envelope');
    const jwks = readJson(o.jwks, 'JWKS');
    const v = verifyOffer({ envelope, jwks, now: o.now ?? systemClock.now() });
    const gate = quoteChecks(v);
    const out = {
      status: v.status,
      code: v.code,
      fresh: v.fresh,
      payload_matches_offer: v.payloadMatchesOffer,
      safe_to_quote: gate.ok,
      failures: gate.failures,
    };
    if (json) printJson(out);
    else {
      process.stdout.write(
        `${gate.ok ? 'SAFE TO QUOTE (offline checks; discovery not checked)' : `NOT SAFE TO QUOTE — ${v.status}${v.code ? ` (${v.code})` : ''}: ${v.reason}`}\n`,
      );
      if (!gate.ok) process.stdout.write(`  failed conditions: ${gate.failures.join(', ')}\n`);
    }
    process.exitCode = exitCodeFor(v.status, gate.ok);
  } catch (e) {
    fail(e, json);
  }
}

/**
 * `vrp verify …` — verify a node's offer end to end, or a saved envelope offline.
 *
 * One command with two forms (`vrp verify https://DOMAIN …` and `vrp verify offer …`) rather
 * than a subcommand: both forms take `--json` and `--now`, and commander would hand those to the
 * parent when they follow a subcommand.
 */
export function registerVerifyCommands(program: Command): void {
  program
    .command('verify')
    .usage(
      'https://DOMAIN --check-in D --check-out D --guests N [--via http|mcp|a2a|webmcp|all] [--json] [--connect-to H:443:ADDR:PORT] [--cacert FILE] [--now ISO]\n       vrp verify offer --envelope FILE --jwks FILE [--now ISO] [--json]',
    )
    .description(
      "verify a VRP node's signed offer (discovery → JWKS → offer → safe-to-quote), or with `offer` a saved envelope offline.\n" +
        'Exit 0 safe to quote, 1 verified but not quoteable (e.g. a signed negative), 2 unknown/invalid/unverifiable/expired, 64 usage error.',
    )
    .argument('[target]', 'https://DOMAIN, or the word `offer` for offline verification')
    .option('--check-in <date>', 'YYYY-MM-DD')
    .option('--check-out <date>', 'YYYY-MM-DD')
    .option('--guests <n>', 'number of guests')
    .option(
      '--connect-to <HOST:443:ADDR:PORT>',
      'dial ADDR:PORT for HOST:443, keeping the name for TLS (repeatable, like curl)',
      collectConnectTo,
    )
    .option('--cacert <file>', "extra trusted CA certificate (PEM), e.g. a dev node's <dataDir>/tls/ca.pem")
    .option('--via <surface>', VIA_OPTION_HELP, parseVia)
    .option(SURFACE_URL_OPTIONS[0][0], `with --via: ${SURFACE_URL_OPTIONS[0][1]}`, parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[1][0], `with --via: ${SURFACE_URL_OPTIONS[1][1]}`, parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[2][0], `with --via: ${SURFACE_URL_OPTIONS[2][1]}`, parseHttpsUrl)
    .option('--envelope <file>', 'offline: the signed_verified_stay_offer envelope (JSON)')
    .option('--jwks <file>', 'offline: the host-domain JWKS (JSON)')
    .option('--now <iso>', 'evaluate freshness at this instant instead of the system clock', instant)
    .option(
      '--json',
      'print JSON (online: the full result, the official verification result under "result"; offline: {status, code, fresh, payload_matches_offer, safe_to_quote, failures})',
    )
    .action(async (target: string | undefined, o: OnlineOptions & StayOptions & { envelope?: string; jwks?: string }, cmd: Command) => {
      const usage = (message: string) => cmd.error(`error: ${message}`, { exitCode: EXIT_USAGE, code: 'vrp.usage' });
      if (target === 'offer') {
        if (!o.envelope || !o.jwks) usage('vrp verify offer needs --envelope FILE and --jwks FILE');
        return verifyOfflineOffer(o as { envelope: string; jwks: string; now?: string; json?: boolean });
      }
      if (!target) usage('missing the node to verify: vrp verify https://DOMAIN --check-in … (or: vrp verify offer --envelope … --jwks …)');
      if (o.envelope || o.jwks) usage('--envelope and --jwks belong to `vrp verify offer`');
      let args: OfferRequestArgs;
      try {
        // A missing option is the parser's missing_parameter, like a missing query parameter.
        args = stayRequest(o);
      } catch (e) {
        return fail(e, !!o.json);
      }
      const via = (o as { via?: ViaChoice }).via;
      if (via && via !== 'http') {
        // Tool surfaces: the logic lives in verify-via.ts.
        try {
          process.exitCode = await verifyVia(target as string, {
            ...o,
            checkIn: args.check_in,
            checkOut: args.check_out,
            guests: args.guests,
            via,
            ...(o.cacert ? { ca: readText(o.cacert, 'CA') } : {}),
          });
        } catch (e) {
          fail(e, !!o.json);
        }
        return;
      }
      await verifyOnline(target as string, args, o);
    });
}
