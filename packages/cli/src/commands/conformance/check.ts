/**
 * `vrp conformance https://DOMAIN …`: every Core VRP v0.1 and Node Tool Binding v0.1 rule, by id,
 * against a live node; with `--vectors DIR`, the recorded node vectors replayed offline instead.
 */
import { writeFileSync } from 'node:fs';
import { CHROMIUM_ENV, DEFAULT_CHROMIUM, domainOf } from '@vrpkit/agent';
import { checkNode, replayNodeVectors, type SurfaceSelection, type ToolSurface, toJUnit } from '@vrpkit/conformance';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import type { Command } from 'commander';
import { CliError, InputRefused, refusing } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { cacertOption, connectToOption, jsonOption, readOptionFile } from '../../options.js';
import { type StayOptions, stayRequest } from '../verify/stay.js';
import { parseHttpsUrl, SURFACE_URL_OPTIONS, type SurfaceUrlOptions, surfaceUrlsOf } from '../verify/via.js';
import { conformanceExitCode, parseSurfaces, renderNodeReport } from './report.js';

interface CheckOptions extends StayOptions, SurfaceUrlOptions {
  connectTo?: string[];
  cacert?: string;
  json?: boolean;
  junit?: string;
  surfaces: SurfaceSelection;
  vectors?: string;
}

/** `--vectors DIR`: replay every recorded node vector offline; 0 when every rule got its expected verdict. */
async function replayVectors(dir: string, target: string | undefined, json: boolean): Promise<number> {
  if (target !== undefined) throw new CliError('conflicting_options', { one: 'a node origin', other: '--vectors' });
  const outcomes = await replayNodeVectors(dir).catch((e: unknown) => {
    throw new InputRefused(e);
  });
  if (json) printJson(outcomes.map(({ report: _r, ...o }) => o));
  else {
    for (const o of outcomes) {
      process.stdout.write(`${o.matches ? 'ok      ' : 'MISMATCH'} ${o.vector} — ${o.name}\n`);
      for (const m of o.mismatches)
        process.stdout.write(`  ${m.rule}: expected ${m.expected ?? '(not judged)'}, observed ${m.observed ?? '(not judged)'}\n`);
    }
    const ok = outcomes.filter((o) => o.matches).length;
    process.stdout.write(`${ok}/${outcomes.length} vectors as expected\n`);
  }
  return outcomes.every((o) => o.matches) ? 0 : 1;
}

/** What a check needs from the command line, every value checked (a bad one is a usage error, exit 64) before anything is read. */
function checkRequest(target: string | undefined, o: CheckOptions) {
  const domain = target === undefined ? null : domainOf(target);
  if (!domain) throw new CliError('invalid_target', { target: target ?? '(none)' });
  if ((o.checkIn === undefined) !== (o.checkOut === undefined))
    throw new CliError('missing_option', { one: '--check-in', other: '--check-out' });
  const ca = o.cacert ? readOptionFile(o.cacert, 'CA') : undefined;
  // Core VRP v0.1 §4 through the one request parser, as `vrp verify` and every node surface read it.
  const args: OfferRequestArgs | undefined =
    o.checkIn !== undefined ? refusing(() => stayRequest({ ...o, guests: o.guests ?? '2' })) : undefined;
  return { domain, ca, args };
}

async function check(target: string | undefined, o: CheckOptions): Promise<number> {
  const json = Boolean(o.json);
  if (o.vectors !== undefined) return replayVectors(o.vectors, target, json);
  const { domain, ca, args } = checkRequest(target, o);
  const surfaceUrls: Partial<Record<ToolSurface, string>> = surfaceUrlsOf(o);
  process.stderr.write(json ? '' : `checking ${domain} …\n`);
  const report = await checkNode(domain, {
    network: { ...(o.connectTo ? { connectTo: o.connectTo } : {}), ...(ca ? { ca } : {}) },
    surfaces: o.surfaces,
    surfaceUrls,
    ...(args ? { args } : {}),
  });
  if (o.junit) {
    try {
      writeFileSync(o.junit, toJUnit(report));
    } catch (e) {
      throw new CliError('file_unwritable', { file: o.junit, reason: (e as Error).message });
    }
  }
  if (json) printJson(report);
  else process.stdout.write(renderNodeReport(report));
  return conformanceExitCode(report);
}

/** The group command itself: `vrp conformance TARGET`. */
export function registerCheck(conformance: Command): void {
  conformance
    .description(
      'check a node against Core VRP v0.1 and VRP Node Tool Binding v0.1 (MCP, A2A and WebMCP surfaces); every verdict names a rule id (docs/conformance.md).\n' +
        `The WebMCP checks run Chromium from $${CHROMIUM_ENV}, else ${DEFAULT_CHROMIUM}; without it they are unknown (browser_unavailable).\n` +
        'Exit 0 conforms, 1 a rule failed, 2 a rule could not be evaluated, 64 usage error.',
    )
    .argument('[target]', 'node origin https://DOMAIN (omit with --vectors)')
    .option('--vectors <dir>', 'offline: replay the node-surface vectors of DIR (examples/conformance/node) instead of reading a node')
    .option('--surfaces <list>', 'mcp,a2a,webmcp (each must be exposed) or auto (judge what the node exposes)', parseSurfaces, 'auto')
    .option(SURFACE_URL_OPTIONS[0][0], SURFACE_URL_OPTIONS[0][1], parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[1][0], SURFACE_URL_OPTIONS[1][1], parseHttpsUrl)
    .option(SURFACE_URL_OPTIONS[2][0], SURFACE_URL_OPTIONS[2][1], parseHttpsUrl)
    .option('--check-in <date>', 'YYYY-MM-DD (default: 30 days ahead)')
    .option('--check-out <date>', 'YYYY-MM-DD (default: check-in + 3 nights)')
    .option('--guests <n>', 'number of guests (default 2)')
    .addOption(connectToOption())
    .addOption(cacertOption())
    .addOption(jsonOption('print the report as JSON'))
    .option('--junit <file>', 'also write the verdicts as JUnit XML (one test case per rule)')
    .action((target: string | undefined, o: CheckOptions) => run(o.json, () => check(target, o)));
}
