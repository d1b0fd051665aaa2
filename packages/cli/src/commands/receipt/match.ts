/**
 * `vrp receipt match` (docs/receipts.md): does the receipt's transport assertion describe this
 * call (tool + arguments_sha256 after camelCase→snake_case)? The signature is not checked here.
 * Exit 0 bound, 1 not bound, 2 no assertion to bind, 64 usage.
 */
import { locateLayer, unverifiedJwsPayload } from '@vrpkit/agent';
import { parseIJson } from '@vrpkit/gate';
import {
  assertionMatchesToolCall,
  hashArguments,
  MCP_TRANSPORT_LAYER,
  type McpTransportAssertion,
  normalizeToolArguments,
  readMcpTransportAssertion,
} from '@vrpkit/protocol';
import type { Command } from 'commander';
import { refusing } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { jsonOption, readOptionFile } from '../../options.js';
import { EXIT_NOT_VERIFIED, EXIT_UNKNOWN, parseJsonOption } from './options.js';

interface MatchOptions {
  receipt: string;
  tool: string;
  arguments: string;
  json?: boolean;
}

/** The one transport attestation's decoded assertion, or why there is none. */
function transportAssertionOf(receipt: unknown): { assertion: McpTransportAssertion } | { code: string; message: string } {
  const found = locateLayer(receipt, MCP_TRANSPORT_LAYER);
  if ('missing' in found) return { code: found.missing, message: 'expected exactly one transport attestation' };
  const assertion = readMcpTransportAssertion(unverifiedJwsPayload(found.attestation.signature));
  return assertion
    ? { assertion }
    : { code: 'malformed_attestation', message: 'the transport signature does not carry a profile 1.0 transport assertion' };
}

/** The binding report of `assertion` against the call `tool` + `arguments` (normalised). */
function bindingReport(assertion: McpTransportAssertion, tool: string, normalized: Record<string, unknown>) {
  // Profile, argument key casing: the observed call is normalised before hashing.
  const observed = { tool, arguments_sha256: hashArguments(normalized) };
  return {
    bound: assertionMatchesToolCall(assertion, { tool, arguments: normalized }),
    tool_matches: assertion.tool === tool,
    arguments_match: assertion.arguments_sha256 === observed.arguments_sha256,
    asserted: {
      tool: assertion.tool,
      arguments_sha256: assertion.arguments_sha256,
      served_at: assertion.served_at,
      issuer: assertion.issuer,
    },
    observed,
    signature_checked: false,
  };
}

function matchCall(o: MatchOptions): number {
  // `--arguments` through the gate's I-JSON parser (RFC 7493), the one parser for tool arguments:
  // a duplicate key, a lone surrogate or an inexact integer is refused, never read "last wins".
  const normalized = refusing(() => normalizeToolArguments(parseIJson(o.arguments)), '--arguments');
  const found = transportAssertionOf(parseJsonOption(readOptionFile(o.receipt, 'receipt'), `receipt ${o.receipt}`));
  if ('code' in found) {
    if (o.json) printJson({ bound: null, error: { code: found.code, message: found.message } });
    else process.stderr.write(`error[${found.code}]: ${found.message}\n`);
    return EXIT_UNKNOWN;
  }
  const report = bindingReport(found.assertion, o.tool, normalized);
  if (o.json) printJson(report);
  else
    process.stdout.write(
      `${report.bound ? 'bound' : 'NOT bound'}: assertion ${report.asserted.tool} ${report.asserted.arguments_sha256} / call ${o.tool} ${report.observed.arguments_sha256}\n` +
        '(binding only; the signature is checked by `vrp receipt verify`)\n',
    );
  return report.bound ? 0 : EXIT_NOT_VERIFIED;
}

/** `vrp receipt match --receipt FILE --tool NAME --arguments JSON`. */
export function registerMatch(receipt: Command): void {
  receipt
    .command('match')
    .description(
      'check that the receipt’s transport assertion describes this call (tool + arguments_sha256 after camelCase→snake_case). ' +
        'Does not check the signature. Exit 0 bound, 1 not bound, 2 no assertion to bind, 64 usage',
    )
    .requiredOption('--receipt <file>', 'receipt JSON file')
    .requiredOption('--tool <name>', 'the tool name the call carried')
    .requiredOption('--arguments <json>', 'the arguments object the call carried, as JSON')
    .addOption(jsonOption('print the binding report as JSON'))
    .action((o: MatchOptions) => run(o.json, () => matchCall(o), EXIT_UNKNOWN));
}
