import { readFileSync, writeFileSync } from 'node:fs';
import { CHROMIUM_ENV, DEFAULT_CHROMIUM, domainOf } from '@vrpkit/agent';
import {
  checkNode,
  type NodeConformanceReport,
  replayNodeVectors,
  runVectorCorpus,
  type SurfaceSelection,
  TOOL_SURFACES,
  type ToolSurface,
  toJUnit,
} from '@vrpkit/conformance';
import { VrpError } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import { type Command, InvalidArgumentError } from 'commander';
import { EXIT_USAGE, printJson, reportError, terminalSafe } from '../io.js';
import { collectConnectTo, type StayOptions, stayRequest } from './verify.js';
import { parseHttpsUrl, SURFACE_URL_OPTIONS, type SurfaceUrlOptions, surfaceUrlsOf } from './verify-via.js';

/** 0 the node conforms; 1 a rule failed; 2 a rule could not be evaluated (fail closed: unknown is not a pass). */
export function conformanceExitCode(r: NodeConformanceReport): number {
  if (r.conforms) return 0;
  return r.results.some((x) => x.status === 'fail') ? 1 : 2;
}

export function parseSurfaces(value: string): SurfaceSelection {
  if (value === 'auto') return 'auto';
  const list = value.split(',').map((s) => s.trim());
  const bad = list.filter((s) => !(TOOL_SURFACES as readonly string[]).includes(s));
  if (bad.length > 0 || list.length === 0) throw new InvalidArgumentError(`expected auto or a list of ${TOOL_SURFACES.join(',')}`);
  return [...new Set(list)] as ToolSurface[];
}

export function renderNodeReport(r: NodeConformanceReport): string {
  const lines = [
    `vrp conformance — ${r.domain} (${r.checked_at}), ${r.arguments.check_in} → ${r.arguments.check_out}, ${r.arguments.guests} guests`,
  ];
  const row = (x: NodeConformanceReport['results'][number]) => `  ${x.status.padEnd(7)} ${x.rule.padEnd(24)} ${terminalSafe(x.detail)}`;
  lines.push('core');
  for (const x of r.results.filter((x) => x.surface === null)) lines.push(row(x));
  for (const s of r.surfaces) {
    const state = s.exposed === true ? 'exposed' : s.exposed === false ? 'not exposed' : 'unknown';
    lines.push(`${s.surface} ${state} (${s.selected}) ${terminalSafe(s.url ?? '')} — ${terminalSafe(s.detail)}`);
    for (const x of r.results.filter((x) => x.surface === s.surface)) lines.push(row(x));
  }
  lines.push(r.conforms ? 'CONFORMS' : 'DOES NOT CONFORM');
  return `${lines.join('\n')}\n`;
}

interface NodeCommandOptions extends StayOptions, SurfaceUrlOptions {
  connectTo?: string[];
  cacert?: string;
  json?: boolean;
  junit?: string;
  surfaces: SurfaceSelection;
  vectors?: string;
}

/** `--vectors DIR`: replay every recorded node vector offline; 0 when every rule got its expected verdict. */
async function replayVectors(dir: string, target: string | undefined, json: boolean): Promise<number> {
  if (target !== undefined)
    return reportError(new VrpError('conflicting_options', 'give a node origin or --vectors, not both'), json, EXIT_USAGE);
  let outcomes: Awaited<ReturnType<typeof replayNodeVectors>>;
  try {
    outcomes = await replayNodeVectors(dir);
  } catch (e) {
    return reportError(e, json, EXIT_USAGE);
  }
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

/** `vrp conformance https://DOMAIN …`: every Core VRP v0.1 and Node Tool Binding v0.1 rule, by id. */
export function registerConformanceCommands(program: Command): void {
  const conformance = program.command('conformance');
  registerVectorsCommand(conformance);
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
    .option(
      '--connect-to <HOST:443:ADDR:PORT>',
      'dial ADDR:PORT for HOST:443, keeping the name for TLS (repeatable, like curl)',
      collectConnectTo,
    )
    .option('--cacert <file>', 'extra trusted CA certificate (PEM)')
    .option('--json', 'print the report as JSON')
    .option('--junit <file>', 'also write the verdicts as JUnit XML (one test case per rule)')
    .action(async (target: string | undefined, o: NodeCommandOptions) => {
      const json = Boolean(o.json);
      if (o.vectors !== undefined) {
        process.exitCode = await replayVectors(o.vectors, target, json);
        return;
      }
      const domain = target === undefined ? null : domainOf(target);
      if (!domain) {
        process.exitCode = reportError(
          new VrpError('invalid_target', `not a node origin: ${target ?? '(none)'} (expected https://DOMAIN, or --vectors DIR)`),
          json,
          EXIT_USAGE,
        );
        return;
      }
      if ((o.checkIn === undefined) !== (o.checkOut === undefined)) {
        process.exitCode = reportError(
          new VrpError('missing_option', 'give both --check-in and --check-out, or neither'),
          json,
          EXIT_USAGE,
        );
        return;
      }
      let ca: string | undefined;
      try {
        ca = o.cacert ? readFileSync(o.cacert, 'utf8') : undefined;
      } catch {
        process.exitCode = reportError(new VrpError('file_unreadable', `cannot read the CA file ${o.cacert}`), json, EXIT_USAGE);
        return;
      }
      let args: OfferRequestArgs | undefined;
      try {
        // Core VRP v0.1 §4 through the one request parser, as `vrp verify` and every node surface read it.
        args = o.checkIn !== undefined ? stayRequest({ ...o, guests: o.guests ?? '2' }) : undefined;
      } catch (e) {
        process.exitCode = reportError(e, json, EXIT_USAGE);
        return;
      }
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
          process.exitCode = reportError(new VrpError('file_unwritable', `cannot write ${o.junit}: ${(e as Error).message}`), json, 1);
          return;
        }
      }
      if (json) printJson(report);
      else process.stdout.write(renderNodeReport(report));
      process.exitCode = conformanceExitCode(report);
    });
}

interface VectorsCommandOptions {
  corpus: string;
  report?: string;
  json?: boolean;
  control?: string[];
  corpusPath?: string;
  corpusVersion?: string;
  corpusRepository?: string;
  corpusRevision?: string;
  sourceRepository?: string;
  sourceRevision?: string;
  reporter?: string;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `vrp conformance vectors --corpus DIR --report FILE`: a VRP conformance-report-v0.1 for vrpkit's verifier. */
function registerVectorsCommand(conformance: Command): void {
  conformance
    .command('vectors')
    .description(
      "run vrpkit's verifier over one vector corpus (offer or receipt vectors, *.json in one directory) and write a VRP conformance-report-v0.1.\n" +
        'Exit 0 when every vector matched and every must-fail control was rejected, 1 otherwise, 64 usage error.',
    )
    .requiredOption('--corpus <dir>', 'the corpus directory')
    .option('--report <file>', 'write the report there (default: stdout)')
    .option('--json', 'errors as JSON on stdout')
    .option('--control <file>', 'a vector the verifier MUST reject (repeatable; default: the *tamper* vectors)', collect)
    .option('--corpus-path <path>', 'the corpus path as named in the report (default: --corpus as given)')
    .option('--corpus-version <v>', 'the corpus version (default 0.1)')
    .option('--corpus-repository <url>', 'the https repository the corpus was taken from')
    .option('--corpus-revision <rev>', 'the revision of that repository')
    .option('--source-repository <url>', "the https repository of the verifier's source (with --source-revision)")
    .option('--source-revision <rev>', 'the source revision that ran')
    .option('--reporter <text>', 'who ran it')
    .action(async (o: VectorsCommandOptions) => {
      const json = Boolean(o.json);
      if ((o.sourceRepository === undefined) !== (o.sourceRevision === undefined)) {
        process.exitCode = reportError(
          new VrpError('missing_option', 'give --source-repository and --source-revision together'),
          json,
          EXIT_USAGE,
        );
        return;
      }
      let report: Awaited<ReturnType<typeof runVectorCorpus>>;
      try {
        report = await runVectorCorpus(o.corpus, {
          ...(o.corpusPath ? { path: o.corpusPath } : {}),
          ...(o.corpusVersion ? { version: o.corpusVersion } : {}),
          ...(o.corpusRepository ? { repository: o.corpusRepository } : {}),
          ...(o.corpusRevision ? { revision: o.corpusRevision } : {}),
          ...(o.control ? { controls: o.control } : {}),
          ...(o.sourceRepository && o.sourceRevision ? { source: { repository: o.sourceRepository, revision: o.sourceRevision } } : {}),
          ...(o.reporter ? { reporter: o.reporter } : {}),
        });
      } catch (e) {
        process.exitCode = reportError(e, json, EXIT_USAGE);
        return;
      }
      const text = `${JSON.stringify(report, null, 2)}\n`;
      if (o.report) {
        try {
          writeFileSync(o.report, text);
        } catch (e) {
          process.exitCode = reportError(new VrpError('file_unwritable', `cannot write ${o.report}: ${(e as Error).message}`), json, 1);
          return;
        }
        const matched = report.results.filter((r) => r.outcome === 'pass' || r.outcome === 'reject-as-required').length;
        process.stderr.write(
          `${o.report}: ${matched}/${report.results.length} vectors as expected; discriminates: ${report.discriminates}\n`,
        );
      } else process.stdout.write(text);
      const clean = report.discriminates && report.results.every((r) => r.outcome === 'pass' || r.outcome === 'reject-as-required');
      process.exitCode = clean ? 0 : 1;
    });
}
