import { readFileSync } from 'node:fs';
import { CHROMIUM_ENV, DEFAULT_CHROMIUM, domainOf } from '@vrpkit/agent';
import { checkNodeToolBinding, type NodeBindingReport } from '@vrpkit/conformance';
import { VrpError } from '@vrpkit/core';
import type { OfferRequestArgs } from '@vrpkit/protocol';
import type { Command } from 'commander';
import { EXIT_USAGE, printJson, reportError } from '../io.js';
import { collectConnectTo, type StayOptions, stayRequest } from './verify.js';

/** 0 the node conforms; 1 a check failed; 2 a check could not be evaluated (fail closed: unknown is not a pass). */
export function conformanceExitCode(r: NodeBindingReport): number {
  if (r.conforms) return 0;
  const statuses = r.surfaces.flatMap((s) => Object.values(s.checks).map((c) => c.status));
  return statuses.includes('fail') || r.names.one_string === 'fail' ? 1 : 2;
}

function renderReport(r: NodeBindingReport): string {
  const lines = [
    `${r.spec} — ${r.domain} (${r.checked_at})`,
    `offer endpoint: ${r.endpoint.reached ? 'reached' : 'not reached'}, ${r.endpoint.verification_status ?? r.endpoint.error?.code ?? 'unverified'}`,
  ];
  lines.push(
    `names: mcp=${JSON.stringify(r.names.mcp)} a2a=${JSON.stringify(r.names.a2a)} webmcp=${JSON.stringify(r.names.webmcp)} → one string: ${r.names.one_string}`,
  );
  for (const s of r.surfaces) {
    lines.push(`${s.surface.padEnd(7)} ${s.reached ? 'reached' : 'unreachable'}  ${s.url ?? ''}`);
    for (const [section, c] of Object.entries(s.checks)) lines.push(`  §${section} ${c.status.padEnd(7)} ${c.detail}`);
    if (s.report.error?.code === 'browser_unavailable') lines.push(`  ${s.report.error.message}`);
  }
  lines.push(r.conforms ? 'CONFORMS' : 'DOES NOT CONFORM');
  return `${lines.join('\n')}\n`;
}

/** `vrp conformance node https://DOMAIN …`: the Node Tool Binding §10 checks (three reads and one comparison). */
export function registerConformanceCommands(program: Command): void {
  program
    .command('conformance')
    .description(
      `check a node against VRP Node Tool Binding v0.1 §10 (MCP, A2A and WebMCP surfaces).\n` +
        `The WebMCP checks run Chromium from $${CHROMIUM_ENV}, else ${DEFAULT_CHROMIUM}; without it they are unknown (browser_unavailable).\n` +
        'Exit 0 conforms, 1 a check failed, 2 a check could not be evaluated, 64 usage error.',
    )
    .argument('<target>', 'node origin https://DOMAIN')
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
    .action(async (target: string, o: StayOptions & { connectTo?: string[]; cacert?: string; json?: boolean }) => {
      const json = Boolean(o.json);
      const domain = domainOf(target);
      if (!domain) {
        process.exitCode = reportError(
          new VrpError('invalid_target', `not a node origin: ${target} (expected https://DOMAIN)`),
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
      const report = await checkNodeToolBinding(domain, {
        network: { ...(o.connectTo ? { connectTo: o.connectTo } : {}), ...(ca ? { ca } : {}) },
        ...(args ? { args } : {}),
      });
      if (json) printJson(report);
      else process.stdout.write(renderReport(report));
      process.exitCode = conformanceExitCode(report);
    });
}
