/** `vrp verify` as a user runs it: a child process against a real node over https, and offline on the official vectors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { officialSchema } from '@vrpkit/protocol';
import { runVrp } from '@vrpkit/testkit/cli';
import { loadVector } from '@vrpkit/testkit/minted';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'villa.example';

const vrp = (...args: string[]) => runVrp(args, { timeoutMs: 60_000 });

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe('vrp verify https://DOMAIN (against a real node)', () => {
  let root: string;
  let node: ServedNode;
  let reach: string[];
  const stay = ['--check-in', day(40), '--check-out', day(43)];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'vrpkit-cli-verify-'));
    await initNode({ domain: DOMAIN, dataDir: join(root, 'node') });
    node = await serveNode({ dataDir: join(root, 'node'), dev: true });
    reach = ['--connect-to', `${DOMAIN}:443:127.0.0.1:${node.port}`, '--cacert', node.caFile as string];
  });
  afterAll(async () => {
    await node?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('safe to quote → exit 0, with the phrase, the signed total, the booking URL, refund rows and facts', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...stay, '--guests', '2', ...reach);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('SAFE TO QUOTE');
    expect(r.stdout).toContain('"I found the official host-domain verified offer for this stay."');
    expect(r.stdout).toMatch(/total: +[\d.]+ [A-Z]{3} \(\d+ minor units\) — signed, exact/);
    expect(r.stdout).toContain(`book at:     https://${DOMAIN}/`);
    expect(r.stdout).toMatch(/refund terms/);
    expect(r.stdout).toMatch(/signature +affirmed +verifiable, from jws/);
  });

  it('--json prints the result; its `result` member is the official verification-result shape', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...stay, '--guests', '2', '--json', ...reach);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'verified', safe_to_quote: true });
    const validate = new Ajv2020({ strict: false }).compile(officialSchema('verificationResult'));
    expect(validate(out.result), JSON.stringify(validate.errors)).toBe(true);
  });

  it('a signed negative → exit 1 (verified but not quoteable)', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...stay, '--guests', '40', ...reach);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('NOT SAFE TO QUOTE — status verified');
    expect(r.stdout).toMatch(/availability +negated/);
    expect(r.stdout).toContain('the host-signed offer says available: false');
  });

  it('an unreachable node (no connect-to) → exit 2, every fact unknown', async () => {
    const r = await vrp('verify', `https://${DOMAIN}`, ...stay, '--guests', '2', '--json');
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'unknown', safe_to_quote: false, result: null });
    expect(new Set(Object.values(out.facts).map((f) => (f as { value: string }).value))).toEqual(new Set(['unknown']));
  });

  it('usage errors → exit 64', async () => {
    // Four independent processes, started together: one after another they outran the test's
    // 30 s on a loaded 2-core machine (7–11 s a start there).
    const runs = await Promise.all([
      vrp('verify', `https://${DOMAIN}`, '--check-in', day(40)),
      vrp('verify', `https://${DOMAIN}`, '--check-in', day(43), '--check-out', day(40), '--guests', '2'),
      vrp('verify', `https://${DOMAIN}/path`, ...stay, '--guests', '2'),
      vrp('verify', `https://${DOMAIN}`, ...stay, '--guests', 'two'),
    ]);
    expect(runs.map((r) => r.code)).toEqual([64, 64, 64, 64]);
  });
});

describe('vrp verify offer (offline, official vectors)', () => {
  let dir: string;
  const files = (name: string) => {
    const v = loadVector(name);
    writeFileSync(join(dir, `${name}.envelope.json`), JSON.stringify(v.input));
    writeFileSync(join(dir, `${name}.jwks.json`), JSON.stringify(v.jwks));
    return ['--envelope', join(dir, `${name}.envelope.json`), '--jwks', join(dir, `${name}.jwks.json`), '--now', v.clock];
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vrpkit-cli-offer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      '01-valid-fresh.json',
      0,
      { status: 'verified', code: null, fresh: true, payload_matches_offer: true, safe_to_quote: true, failures: [] },
    ],
    [
      '02-valid-expired.json',
      2,
      { status: 'expired', code: null, fresh: false, payload_matches_offer: true, safe_to_quote: false, failures: ['not_verified'] },
    ],
    [
      '03-tampered-signature.json',
      2,
      {
        status: 'invalid',
        code: 'signature_mismatch',
        fresh: null,
        payload_matches_offer: null,
        safe_to_quote: false,
        failures: ['not_verified'],
      },
    ],
    [
      '04-unknown-kid.json',
      2,
      {
        status: 'unverifiable',
        code: 'kid_not_in_jwks',
        fresh: null,
        payload_matches_offer: null,
        safe_to_quote: false,
        failures: ['not_verified'],
      },
    ],
  ])('%s → exit %i', async (name, code, expected) => {
    const r = await vrp('verify', 'offer', ...files(name), '--json');
    expect(r.code, r.stderr).toBe(code);
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it('missing --envelope → 64; a file that is not JSON → 64 with a stable code', async () => {
    expect((await vrp('verify', 'offer', '--jwks', join(dir, 'x.json'))).code).toBe(64);
    writeFileSync(join(dir, 'bad.json'), '<html>');
    const r = await vrp('verify', 'offer', '--envelope', join(dir, 'bad.json'), '--jwks', join(dir, 'bad.json'));
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('error[file_not_json]');
  });
});
