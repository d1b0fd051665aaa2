/**
 * `vrp verify …` — verify a node's offer end to end, or a saved envelope offline.
 *
 * One command with two forms (`vrp verify https://DOMAIN …` and `vrp verify offer …`) rather
 * than a subcommand: both forms take `--json` and `--now`, and commander would hand those to the
 * parent when they follow a subcommand.
 */
import { AgentUsageError } from '@vrpkit/agent';
import { type Command, InvalidArgumentError } from 'commander';
import { EXIT_USAGE, exitStatusOf } from '../../errors.js';
import { reportError } from '../../io.js';
import { cacertOption, connectToOption, jsonOption, readOptionFile } from '../../options.js';
import { verifyOfflineOffer } from './offline.js';
import { type OnlineOptions, verifyOnline } from './online.js';
import { EXIT_UNVERIFIED, type StayOptions, stayRequest } from './stay.js';
import { parseHttpsUrl, parseVia, SURFACE_URL_OPTIONS, VIA_OPTION_HELP, type ViaChoice, verifyVia } from './via.js';

type VerifyOptions = OnlineOptions & StayOptions & { envelope?: string; jwks?: string; via?: ViaChoice };

function instant(v: string): string {
  if (!Number.isFinite(Date.parse(v))) throw new InvalidArgumentError('expected an ISO 8601 instant, e.g. 2026-06-02T12:05:00Z');
  return v;
}

/** Usage errors (bad arguments, unreadable files) exit 64; everything else is reported and exits 2 (fail closed). */
async function verifying(json: boolean | undefined, fn: () => number | Promise<number>): Promise<void> {
  try {
    process.exitCode = await fn();
  } catch (e) {
    process.exitCode = reportError(e, !!json, e instanceof AgentUsageError ? EXIT_USAGE : exitStatusOf(e, EXIT_UNVERIFIED));
  }
}

/** The online form: the stay through the protocol's request parser, then the node read over HTTP or the named tool surfaces. */
function verifyNode(target: string, o: VerifyOptions): Promise<number> {
  // A missing option is the parser's missing_parameter, like a missing query parameter.
  const args = stayRequest(o);
  // Tool surfaces: the logic lives in via.ts.
  if (o.via && o.via !== 'http')
    return verifyVia(target, {
      ...o,
      checkIn: args.check_in,
      checkOut: args.check_out,
      guests: args.guests,
      via: o.via,
      ...(o.cacert ? { ca: readOptionFile(o.cacert, 'CA') } : {}),
    });
  return verifyOnline(target, args, o);
}

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
    .addOption(connectToOption())
    .addOption(cacertOption("extra trusted CA certificate (PEM), e.g. a dev node's <dataDir>/tls/ca.pem"))
    .option('--via <surface>', VIA_OPTION_HELP, parseVia)
    .option(SURFACE_URL_OPTIONS[0][0], `with --via: ${SURFACE_URL_OPTIONS[0][1]}`, parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[1][0], `with --via: ${SURFACE_URL_OPTIONS[1][1]}`, parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[2][0], `with --via: ${SURFACE_URL_OPTIONS[2][1]}`, parseHttpsUrl)
    .option('--envelope <file>', 'offline: the signed_verified_stay_offer envelope (JSON)')
    .option('--jwks <file>', 'offline: the host-domain JWKS (JSON)')
    .option('--now <iso>', 'evaluate freshness at this instant instead of the system clock', instant)
    .addOption(
      jsonOption(
        'print JSON (online: the full result, the official verification result under "result"; offline: {status, code, fresh, payload_matches_offer, safe_to_quote, failures})',
      ),
    )
    .action((target: string | undefined, o: VerifyOptions, cmd: Command) => {
      const usage = (message: string) => cmd.error(`error: ${message}`, { exitCode: EXIT_USAGE, code: 'vrp.usage' });
      if (target === 'offer') {
        if (!o.envelope || !o.jwks) usage('vrp verify offer needs --envelope FILE and --jwks FILE');
        return verifying(o.json, () => verifyOfflineOffer(o as VerifyOptions & { envelope: string; jwks: string }));
      }
      if (!target) usage('missing the node to verify: vrp verify https://DOMAIN --check-in … (or: vrp verify offer --envelope … --jwks …)');
      if (o.envelope || o.jwks) usage('--envelope and --jwks belong to `vrp verify offer`');
      return verifying(o.json, () => verifyNode(target as string, o));
    });
}
