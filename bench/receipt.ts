/**
 * bench/receipt: the cost of MCP receipts (MCP Composition Profile on the VRP receipt envelope v1), as ratios to the raw Ed25519 work measured
 * in the same run.
 *
 *   issueMcpReceipt                         vs one crypto.sign of the same assertion signing input
 *   verifyReceipt (offer + transport)       vs two crypto.verify of the same signing inputs
 *   hashArguments(normalizeToolArguments)   vs sha256 of JSON.stringify(args) (no JCS, no normalisation)
 *
 * The offer is a real one (a vrpkit node's key ring and offer service, via serveNode). Rounds
 * interleave the cases so machine drift hits them all alike; the median round is reported.
 *
 * Run: npx tsx --conditions=vrpkit-source bench/receipt.ts [--rounds 6] [--ms 300]
 */
import { createHash, createPublicKey, sign, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyReceipt } from '@vrpkit/agent';
import { createJwsSigner, ed25519PrivateJwkFromSeed, importEd25519PrivateKey, publicJwkOf } from '@vrpkit/core';
import { initNode, issueMcpReceipt, offerFor, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, hashArguments, normalizeToolArguments } from '@vrpkit/protocol';
import { numberFlag } from './lib.js';

const ROUNDS = numberFlag('rounds', 6);
const MS_PER_CASE = numberFlag('ms', 300);
const DOMAIN = 'bench-receipt.example';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };

// A real offer from a real node; the receipt is then signed with a key we can also use raw.
const dir = mkdtempSync(join(tmpdir(), 'vrpkit-bench-receipt-'));
await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
const node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
const outcome = await offerFor(node.service, ARGS, { fresh: true });
await node.close();
rmSync(dir, { recursive: true, force: true });
if (!outcome.ok) throw new Error(`offer failed: ${outcome.error.code}`);

const privateJwk = ed25519PrivateJwkFromSeed(Buffer.alloc(32, 0x07));
const signer = createJwsSigner(privateJwk, 'bench-key', { typ: 'JWT' });
const offerJws = signer.sign(JSON.stringify(outcome.envelope.offer));
const envelope = { ...outcome.envelope, signature: { ...outcome.envelope.signature, kid: 'bench-key', jws: offerJws } };
const service = {
  canonicalDomain: DOMAIN,
  jwksUrl: `https://${DOMAIN}/.well-known/jwks.json`,
  activeSigner: () => signer,
  now: () => Date.parse(envelope.offer.generated_at),
};
const jwks = { keys: [publicJwkOf(privateJwk, 'bench-key')] };
const receipt = issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope });
const now = service.now();
const check = await verifyReceipt(receipt, { resolveJwks: () => jwks, now });
if (!check.fully_verified) throw new Error('the benchmark receipt does not verify');

const privateKey = importEd25519PrivateKey(privateJwk);
const publicKey = createPublicKey(privateKey);
const inputs = receipt.attestations.map((a) => {
  const [h, p, s] = a.signature.split('.') as [string, string, string];
  return { signingInput: Buffer.from(`${h}.${p}`, 'ascii'), signature: Buffer.from(s, 'base64url') };
});

interface Case {
  name: string;
  baselineOf?: string;
  run: () => unknown;
}
const cases: Case[] = [
  { name: 'baseline: 1 x crypto.sign (assertion)', run: () => sign(null, inputs[1]!.signingInput, privateKey) },
  {
    name: 'issueMcpReceipt',
    baselineOf: 'baseline: 1 x crypto.sign (assertion)',
    run: () => issueMcpReceipt({ service, tool: BOUND_TOOL_NAME, arguments: ARGS, envelope }),
  },
  { name: 'baseline: 2 x crypto.verify', run: () => inputs.every((x) => verify(null, x.signingInput, publicKey, x.signature)) },
  {
    name: 'verifyReceipt (2 layers)',
    baselineOf: 'baseline: 2 x crypto.verify',
    run: () => verifyReceipt(receipt, { resolveJwks: () => jwks, now }),
  },
  { name: 'baseline: sha256(JSON.stringify(args))', run: () => createHash('sha256').update(JSON.stringify(ARGS)).digest('hex') },
  {
    name: 'hashArguments(normalizeToolArguments(args))',
    baselineOf: 'baseline: sha256(JSON.stringify(args))',
    run: () => hashArguments(normalizeToolArguments(ARGS)),
  },
];

/** Operations per second of one case over about `ms` milliseconds. */
async function measure(c: Case, ms: number): Promise<number> {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 50; i++) await c.run();
    ops += 50;
    elapsed = performance.now() - start;
  }
  return (ops * 1000) / elapsed;
}

for (const c of cases) await measure(c, 100); // warm-up
const perRound = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let r = 0; r < ROUNDS; r++) for (const c of cases) perRound.get(c.name)!.push(await measure(c, MS_PER_CASE));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const rows = cases.map((c) => {
  const opsPerSec = median(perRound.get(c.name)!);
  const base = c.baselineOf ? median(perRound.get(c.baselineOf)!) : null;
  return {
    case: c.name,
    ops_per_sec: Math.round(opsPerSec),
    us_per_op: Number((1e6 / opsPerSec).toFixed(1)),
    // Cost relative to the baseline (time per op ÷ baseline time per op): 1.0 = no overhead.
    cost_ratio: base ? Number((base / opsPerSec).toFixed(2)) : null,
  };
});
console.table(rows);
const out = new URL('./results/', import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(
  new URL('receipt.json', out),
  `${JSON.stringify({ bench: 'receipt', run_at: new Date().toISOString(), rounds: ROUNDS, ms_per_case: MS_PER_CASE, node: process.version, cpus: cpus().length, rows }, null, 2)}\n`,
);
