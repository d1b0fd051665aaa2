/**
 * `vrp receipt verify|match` exit codes for receipts a real node issued and an attacker then
 * edited, each `describe` named after the defect it guards against.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHardenedFetch } from '@vrpkit/agent';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, JWKS_PATH, RECEIPT_META_KEY } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { serveSurface } from '@vrpkit/testkit/surfaces';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'receipt-hardening.example';
const MIRROR = 'keys-mirror.example';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(32), guests: 2 };

type Attestation = Record<string, unknown> & { layer: string };
type Receipt = Record<string, unknown> & { attestations: Attestation[]; subject: Record<string, unknown> };

let tmp: string;
let node: ServedNode;
let receipt: Receipt;
let jwksFile: string;
let mirror: { connectTo: string; close(): Promise<void> };
let n = 0;

const vrp = (...args: string[]) => runVrpInProcess(args);

function receiptFile(r: unknown): string {
  const file = join(tmp, `receipt-${n++}.json`);
  writeFileSync(file, JSON.stringify(r));
  return file;
}

/** `vrp receipt verify` offline against the node's own key set; returns the exit code and the verdict. */
async function verifyOffline(r: unknown, now?: string) {
  const run = await vrp('receipt', 'verify', '--receipt', receiptFile(r), '--jwks', jwksFile, ...(now ? ['--now', now] : []), '--json');
  return { code: run.code, verdict: JSON.parse(run.stdout) };
}

const edited = (edit: (all: Attestation[]) => Attestation[]): Receipt => ({
  ...receipt,
  attestations: edit(structuredClone(receipt.attestations)),
});

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'vrpkit-receipt-hardening-'));
  await initNode({ domain: DOMAIN, dataDir: join(tmp, 'node') });
  node = await serveNode({ dataDir: join(tmp, 'node'), dev: true, port: 0 });
  const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem! });
  const client = new Client({ name: 'vrpkit-receipt-hardening-test', version: '0.1.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`https://${DOMAIN}/mcp`), { fetch }));
    const result = await client.callTool({ name: BOUND_TOOL_NAME, arguments: ARGS });
    receipt = result._meta?.[RECEIPT_META_KEY] as Receipt;
    const jwks = await (await fetch(`https://${DOMAIN}${JWKS_PATH}`)).text();
    jwksFile = join(tmp, 'jwks.json');
    writeFileSync(jwksFile, jwks);

    // A domain that republishes the node's key set, with a certificate from the node's dev CA.
    const ca = { certPem: node.caPem!, keyPem: readFileSync(join(tmp, 'node', 'tls', 'ca-key.pem'), 'utf8') };
    mirror = await serveSurface(
      MIRROR,
      ca,
      new Hono().get(JWKS_PATH, (c) => c.body(jwks, 200, { 'content-type': 'application/json' })),
    );
  } finally {
    await client.close();
    await fetch.close();
  }
});

afterAll(async () => {
  await mirror?.close();
  await node?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('receipt checks trust unsigned fields', () => {
  it('control: the receipt as issued is verified (exit 0)', async () => {
    const { code, verdict } = await verifyOffline(receipt);
    expect(verdict).toMatchObject({ status: 'verified', signer: DOMAIN, errors: [] });
    expect(code).toBe(0);
  });

  it('edited valid_from/valid_until do not make a 48-hour-old receipt pass (exit 1)', async () => {
    const later = new Date(Date.now() + 48 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const widened = edited((all) => all.map((a) => ({ ...a, valid_from: '2000-01-01T00:00:00Z', valid_until: '2100-01-01T00:00:00Z' })));
    const { code, verdict } = await verifyOffline(widened, later);
    expect(verdict.reference.fully_verified).toBe(true);
    expect(verdict).toMatchObject({ status: 'expired', offer: { code: 'sig_expired' }, transport: { code: 'sig_expired' } });
    expect(code).toBe(1);
  });

  it('a removed offer layer is unknown (exit 2)', async () => {
    const { code, verdict } = await verifyOffline(edited((all) => all.filter((a) => a.layer !== 'offer')));
    expect(verdict).toMatchObject({ status: 'unverifiable', offer: { code: 'layer_missing' } });
    expect(code).toBe(2);
  });

  it('a removed transport layer is unknown (exit 2)', async () => {
    const { code, verdict } = await verifyOffline(edited((all) => all.filter((a) => a.layer !== 'transport')));
    expect(verdict).toMatchObject({ status: 'unverifiable', transport: { code: 'layer_missing' } });
    expect(code).toBe(2);
  });

  it('a second transport layer is not verified (exit 1)', async () => {
    const { code, verdict } = await verifyOffline(edited((all) => [...all, all[1]!]));
    expect(verdict).toMatchObject({ status: 'invalid', transport: { code: 'duplicate_layer' } });
    expect(code).toBe(1);
  });

  it('a rewritten subject is not verified (exit 1)', async () => {
    const { code, verdict } = await verifyOffline({ ...receipt, subject: { ...receipt.subject, stay: `${ARGS.check_in}/${day(33)}` } });
    expect(verdict).toMatchObject({ status: 'invalid', errors: ['subject_mismatch'] });
    expect(code).toBe(1);
  });

  it('a rewritten issuer.node is not verified (exit 1)', async () => {
    const { code, verdict } = await verifyOffline({ ...receipt, issuer: { node: MIRROR } });
    expect(verdict).toMatchObject({ status: 'invalid', errors: ['issuer_mismatch'] });
    expect(code).toBe(1);
  });

  it('a rewritten ref is not verified (exit 1)', async () => {
    const { code, verdict } = await verifyOffline(
      edited((all) => all.map((a) => ({ ...a, ref: `offer:${DOMAIN}:${ARGS.check_in}/${day(33)}` }))),
    );
    expect(verdict).toMatchObject({ status: 'invalid', errors: ['offer_ref_mismatch'] });
    expect(code).toBe(1);
  });

  it('online: a receipt relabelled to a domain that republishes the node key set is not verified (exit 1)', async () => {
    const relabelled = {
      ...receipt,
      subject: { ...receipt.subject, property: MIRROR },
      issuer: { node: MIRROR },
      attestations: receipt.attestations.map((a) => ({ ...a, source: `https://${MIRROR}${JWKS_PATH}` })),
    };
    const run = await vrp(
      'receipt',
      'verify',
      '--receipt',
      receiptFile(relabelled),
      '--connect-to',
      `${DOMAIN}:443:127.0.0.1:${node.port}`,
      '--connect-to',
      mirror.connectTo,
      '--cacert',
      node.caFile!,
      '--json',
    );
    const verdict = JSON.parse(run.stdout);
    expect(verdict.reference.fully_verified).toBe(true); // the reference fetched the mirror's copy of the keys
    expect(verdict).toMatchObject({ status: 'invalid', signer: DOMAIN });
    expect(verdict.errors).toEqual(expect.arrayContaining(['issuer_mismatch', 'subject_mismatch']));
    expect(run.code).toBe(1);
  });
});

describe('vrp receipt match --arguments accepts duplicate JSON keys', () => {
  it('duplicate keys are refused by the I-JSON parser (exit 64), where last-wins would have bound', async () => {
    const file = receiptFile(receipt);
    const duplicate = `{"check_in":"${ARGS.check_in}","check_out":"${ARGS.check_out}","guests":3,"guests":2}`;
    const r = await vrp('receipt', 'match', '--receipt', file, '--tool', BOUND_TOOL_NAME, '--arguments', duplicate);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('error[EF_MALFORMED_ARGUMENTS]');
    const plain = await vrp('receipt', 'match', '--receipt', file, '--tool', BOUND_TOOL_NAME, '--arguments', JSON.stringify(ARGS));
    expect(plain.code).toBe(0);
  });
});

describe('vrp receipt verify accepts a receipt whose layers come from two calls (issue 36 defect 9, regression)', () => {
  it('the offer layer of a 3-guest call beside the transport layer of this 2-guest call (same stay) is invalid: arguments_mismatch (exit 1)', async () => {
    const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem! });
    const client = new Client({ name: 'vrpkit-receipt-two-calls', version: '0.1.0' });
    let other: Receipt;
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`https://${DOMAIN}/mcp`), { fetch }));
      const result = await client.callTool({ name: BOUND_TOOL_NAME, arguments: { ...ARGS, guests: 3 } });
      other = result._meta?.[RECEIPT_META_KEY] as Receipt;
    } finally {
      await client.close();
      await fetch.close();
    }
    const offerOf3 = other.attestations.find((a) => a.layer === 'offer')!;
    const spliced = edited((all) => all.map((a) => (a.layer === 'offer' ? offerOf3 : a)));
    const { code, verdict } = await verifyOffline(spliced);
    // The two calls may fall in different seconds (served_at_mismatch too): what matters is the arguments binding.
    expect(verdict).toMatchObject({ status: 'invalid', verified: false });
    expect(verdict.errors).toContain('arguments_mismatch');
    expect(code).toBe(1);
  });
});
