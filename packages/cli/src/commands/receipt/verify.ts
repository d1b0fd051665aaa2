/**
 * `vrp receipt verify` (docs/receipts.md): decides by what the node signed (`verifyMcpReceipt`)
 * and prints the reference algorithm's result beside its verdict, labelled as such. Exit 0
 * verified; 1 invalid, expired or malformed; 2 a layer unverifiable; 64 usage.
 */
import {
  createHardenedFetch,
  createReceiptJwksResolver,
  createSignerJwksResolver,
  JwksCache,
  type McpReceiptVerification,
  type ResolveReceiptJwks,
  type ResolveSignerJwks,
  receiptIssuerDomain,
  verifyMcpReceipt,
} from '@vrpkit/agent';
import { systemClock } from '@vrpkit/core';
import type { Command } from 'commander';
import { CliError } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { cacertOption, jsonOption, readOptionFile } from '../../options.js';
import { EXIT_NOT_VERIFIED, EXIT_UNKNOWN, parseJsonOption } from './options.js';

interface VerifyOptions {
  receipt: string;
  jwks?: string;
  now?: string;
  connectTo: string[];
  cacert?: string;
  json?: boolean;
}

// RFC 3339 with an explicit offset: `--now` is never read in a local time zone.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function parseNow(now: string | undefined): number {
  if (now === undefined) return systemClock.now();
  const ms = RFC3339.test(now) ? Date.parse(now) : Number.NaN;
  if (Number.isNaN(ms)) throw new CliError('invalid_now', { now });
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

/** Where the keys come from: one JWKS file for every attestation (offline), or the signing domains' own discovery (online). */
function keyResolvers(o: VerifyOptions, receipt: unknown) {
  if (o.jwks !== undefined) {
    // Offline, like a vector run: every attestation is checked against this one key set.
    const jwks = parseJsonOption(readOptionFile(o.jwks, 'JWKS'), `--jwks ${o.jwks}`);
    const resolveJwks: ResolveReceiptJwks = () => jwks;
    const resolveSignerJwks: ResolveSignerJwks = () => jwks;
    return { resolveJwks, resolveSignerJwks, close: async () => {} };
  }
  // Online, through the hardened fetch and one JWKS cache. vrpkit's verdict reads the keys the
  // signing domain's own discovery names; the reference reads `source`, only on the (unsigned) issuer's domain.
  const fetch = createHardenedFetch({ connectTo: o.connectTo, ...(o.cacert ? { ca: readOptionFile(o.cacert, 'CA') } : {}) });
  const cache = new JwksCache({ fetch });
  return {
    resolveJwks: createReceiptJwksResolver({ issuerDomain: receiptIssuerDomain(receipt) ?? '', cache }),
    resolveSignerJwks: createSignerJwksResolver({ fetch, cache }),
    close: () => fetch.close(),
  };
}

async function verifyReceiptFile(o: VerifyOptions): Promise<number> {
  const now = parseNow(o.now);
  const text = readOptionFile(o.receipt, 'receipt');
  let receipt: unknown;
  try {
    receipt = JSON.parse(text);
  } catch {
    receipt = undefined; // not JSON: a malformed artifact, reported as such (never a throw)
  }
  const { resolveJwks, resolveSignerJwks, close } = keyResolvers(o, receipt);
  try {
    const verdict = await verifyMcpReceipt(receipt, { resolveJwks, resolveSignerJwks, now });
    if (o.json) printJson(verdictJson(verdict));
    else printHuman(verdict);
    return receiptExitCode(verdict);
  } finally {
    await close();
  }
}

/** `vrp receipt verify --receipt FILE`. */
export function registerVerify(receipt: Command): void {
  receipt
    .command('verify')
    .description(
      'verify an MCP profile receipt by its signed content (the reference verifyReceipt result is printed beside it). ' +
        'Exit 0 verified, 1 invalid/expired/malformed, 2 a layer unverifiable, 64 usage',
    )
    .requiredOption('--receipt <file>', 'receipt JSON file')
    .option('--jwks <file>', 'verify every attestation against this JWKS file (offline; `source` is not fetched)')
    .option('--now <instant>', 'evaluate at this RFC 3339 instant instead of the system clock')
    // Not `connectToOption`: a receipt's issuer and signers are dialled on whatever port their URLs name.
    .option(
      '--connect-to <entry>',
      'without --jwks: dial HOST:PORT:ADDR:PORT instead of HOST:PORT (curl --connect-to); repeatable',
      collect,
      [],
    )
    .addOption(cacertOption('without --jwks: also trust this CA certificate (PEM)'))
    .addOption(jsonOption('print vrpkit’s verdict with the reference result under `reference`'))
    .action((o: VerifyOptions) => run(o.json, () => verifyReceiptFile(o), EXIT_UNKNOWN));
}
