/**
 * `vrp receipt verify` and `vrp receipt match` (docs/receipts.md).
 *
 * `verify` decides by what the node signed (`verifyMcpReceipt`) and prints the reference
 * algorithm's result beside its verdict, labelled as such. Exit codes: 0 = verified / bound;
 * 1 = not verified (invalid, expired, malformed) / not bound; 2 = unknown (a layer is
 * unverifiable, or there is no transport assertion to bind); 64 = usage.
 */
import { readFileSync } from 'node:fs';
import {
  createHardenedFetch,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  JwksCache,
  locateLayer,
  type McpReceiptVerification,
  type ResolveReceiptJwks,
  type ResolveSignerJwks,
  receiptIssuerDomain,
  unverifiedJwsPayload,
  verifyMcpReceipt,
} from '@vrpkit/agent';
import { systemClock, VrpError } from '@vrpkit/core';
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
import { EXIT_USAGE, printJson, reportError } from '../io.js';

const EXIT_NOT_VERIFIED = 1;
const EXIT_UNKNOWN = 2;

/** A usage problem found after parsing (unreadable file, bad instant, bad JSON option): exit 64. */
class ReceiptUsageError extends VrpError {}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new ReceiptUsageError('file_unreadable', `cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function parseJsonOption(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ReceiptUsageError('invalid_json', `${what} is not JSON`);
  }
}

// RFC 3339 with an explicit offset: `--now` is never read in a local time zone.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function parseNow(now: string | undefined): number {
  if (now === undefined) return systemClock.now();
  const ms = RFC3339.test(now) ? Date.parse(now) : Number.NaN;
  if (Number.isNaN(ms))
    throw new ReceiptUsageError('invalid_now', `--now must be an RFC 3339 instant such as 2026-06-24T12:00:00Z, got ${now}`);
  return ms;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Exit code of a verdict: a receipt the reference cannot even read is not verified (1);
 * otherwise vrpkit's verdict decides — verified → 0, invalid or expired → 1, unverifiable → 2.
 */
export function receiptExitCode(v: McpReceiptVerification): number {
  if (!v.reference.receipt_valid) return EXIT_NOT_VERIFIED;
  return v.status === 'verified' ? 0 : v.status === 'unverifiable' ? EXIT_UNKNOWN : EXIT_NOT_VERIFIED;
}

/** What `--json` prints: vrpkit's verdict, and the reference algorithm's result labelled as such. */
function verdictJson(v: McpReceiptVerification) {
  const { status, verified, signer, offer, transport, errors, reference } = v;
  return { status, verified, signer, offer, transport, errors, reference };
}

function printHuman(v: McpReceiptVerification): void {
  const r = v.reference;
  const row = (name: string, l: McpReceiptVerification['offer']) =>
    `  ${name.padEnd(10)} ${l.status.padEnd(12)} ${l.code ?? ''}${l.kid ? ` kid=${l.kid}` : ''}`.trimEnd();
  const lines = [
    `receipt: ${v.status}${v.signer ? ` (signed by ${v.signer})` : ''}${v.errors.length ? ` [${v.errors.join(', ')}]` : ''}`,
    row('offer', v.offer),
    row('transport', v.transport),
    !r.receipt_valid
      ? `reference verifyReceipt: invalid (${r.errors.join(', ')})`
      : `reference verifyReceipt (reads unsigned windows): ${r.fully_verified ? 'fully verified' : 'NOT fully verified'}`,
    ...r.attestations.map((a) =>
      `  [${a.index}] ${a.layer.padEnd(10)} ${a.status.padEnd(12)} ${a.error ?? ''}${a.kid ? ` kid=${a.kid}` : ''}`.trimEnd(),
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

interface VerifyOptions {
  receipt: string;
  jwks?: string;
  now?: string;
  connectTo: string[];
  cacert?: string;
  json?: boolean;
}

async function verifyCommand(o: VerifyOptions): Promise<number> {
  const now = parseNow(o.now);
  const text = readText(o.receipt, 'receipt');
  let receipt: unknown;
  try {
    receipt = JSON.parse(text);
  } catch {
    receipt = undefined; // not JSON: a malformed artifact, reported as such (never a throw)
  }
  let resolveJwks: ResolveReceiptJwks;
  let resolveSignerJwks: ResolveSignerJwks;
  let close = async () => {};
  if (o.jwks !== undefined) {
    // Offline, like a vector run: every attestation is checked against this one key set.
    const jwks = parseJsonOption(readText(o.jwks, 'JWKS'), `--jwks ${o.jwks}`);
    resolveJwks = () => jwks;
    resolveSignerJwks = () => jwks;
  } else {
    // Online, through the hardened fetch and one JWKS cache. vrpkit's verdict reads the keys the
    // signing domain's own discovery names; the reference reads `source`, only on the (unsigned) issuer's domain.
    const fetch = createHardenedFetch({ connectTo: o.connectTo, ...(o.cacert ? { ca: readText(o.cacert, 'CA file') } : {}) });
    close = () => fetch.close();
    const cache = new JwksCache({ fetch });
    resolveJwks = createReceiptJwksResolver({ issuerDomain: receiptIssuerDomain(receipt) ?? '', cache });
    resolveSignerJwks = createSignerJwksResolver({ fetch, cache });
  }
  try {
    const verdict = await verifyMcpReceipt(receipt, { resolveJwks, resolveSignerJwks, now });
    if (o.json) printJson(verdictJson(verdict));
    else printHuman(verdict);
    return receiptExitCode(verdict);
  } finally {
    await close();
  }
}

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

/**
 * `--arguments` through the gate's I-JSON parser (RFC 7493), the one parser for tool arguments:
 * a duplicate key, a lone surrogate or an inexact integer is refused, never read "last wins".
 */
function parseArgumentsOption(text: string): unknown {
  try {
    return parseIJson(text);
  } catch (e) {
    throw new ReceiptUsageError((e as VrpError).code ?? 'invalid_json', `--arguments: ${(e as Error).message}`);
  }
}

function matchCommand(o: MatchOptions): number {
  const sent = parseArgumentsOption(o.arguments);
  let normalized: Record<string, unknown>;
  try {
    normalized = normalizeToolArguments(sent);
  } catch (e) {
    throw new ReceiptUsageError((e as VrpError).code, `--arguments: ${(e as Error).message}`);
  }
  const receipt = parseJsonOption(readText(o.receipt, 'receipt'), `receipt ${o.receipt}`);
  const found = transportAssertionOf(receipt);
  if ('code' in found) {
    if (o.json) printJson({ bound: null, error: { code: found.code, message: found.message } });
    else process.stderr.write(`error[${found.code}]: ${found.message}\n`);
    return EXIT_UNKNOWN;
  }
  const { assertion } = found;
  // Profile, argument key casing: the observed call is normalised before hashing.
  const observed = { tool: o.tool, arguments_sha256: hashArguments(normalized) };
  const bound = assertionMatchesToolCall(assertion, { tool: o.tool, arguments: normalized });
  const report = {
    bound,
    tool_matches: assertion.tool === o.tool,
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
  if (o.json) printJson(report);
  else {
    process.stdout.write(
      `${bound ? 'bound' : 'NOT bound'}: assertion ${assertion.tool} ${assertion.arguments_sha256} / call ${o.tool} ${observed.arguments_sha256}\n` +
        '(binding only; the signature is checked by `vrp receipt verify`)\n',
    );
  }
  return bound ? 0 : EXIT_NOT_VERIFIED;
}

async function run(json: boolean | undefined, body: () => number | Promise<number>): Promise<void> {
  try {
    process.exitCode = await body();
  } catch (e) {
    process.exitCode = reportError(e, json === true, e instanceof ReceiptUsageError ? EXIT_USAGE : EXIT_UNKNOWN);
  }
}

/** `vrp receipt …`: verify a VRP receipt envelope v1 and bind its MCP transport assertion to a call. */
export function registerReceiptCommands(program: Command): void {
  const receipt = program.command('receipt').description('VRP receipts (envelope v1) and the MCP composition profile');

  receipt
    .command('verify')
    .description(
      'verify an MCP profile receipt by its signed content (the reference verifyReceipt result is printed beside it). ' +
        'Exit 0 verified, 1 invalid/expired/malformed, 2 a layer unverifiable, 64 usage',
    )
    .requiredOption('--receipt <file>', 'receipt JSON file')
    .option('--jwks <file>', 'verify every attestation against this JWKS file (offline; `source` is not fetched)')
    .option('--now <instant>', 'evaluate at this RFC 3339 instant instead of the system clock')
    .option(
      '--connect-to <entry>',
      'without --jwks: dial HOST:PORT:ADDR:PORT instead of HOST:PORT (curl --connect-to); repeatable',
      collect,
      [],
    )
    .option('--cacert <file>', 'without --jwks: also trust this CA certificate (PEM)')
    .option('--json', 'print vrpkit’s verdict with the reference result under `reference`')
    .action((o: VerifyOptions) => run(o.json, () => verifyCommand(o)));

  receipt
    .command('match')
    .description(
      'check that the receipt’s transport assertion describes this call (tool + arguments_sha256 after camelCase→snake_case). ' +
        'Does not check the signature. Exit 0 bound, 1 not bound, 2 no assertion to bind, 64 usage',
    )
    .requiredOption('--receipt <file>', 'receipt JSON file')
    .requiredOption('--tool <name>', 'the tool name the call carried')
    .requiredOption('--arguments <json>', 'the arguments object the call carried, as JSON')
    .option('--json', 'print the binding report as JSON')
    .action((o: MatchOptions) => run(o.json, () => matchCommand(o)));
}
