/**
 * `vrp gate proxy --downstream-oauth …` refuses every combination that cannot work before anything
 * starts (exit 64 with the reason; no store is written to), and names the master key it needs.
 * The flags at work, end to end, are run by the conformance suite's auth scenarios
 * (support/conformance-auth-client.mjs) and by the gate's proxy-downstream-oauth test.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTmpDirs, tmp } from './support/gate-proxy.js';

afterAll(removeTmpDirs);

const dir = tmp();
const policy = join(dir, 'policy.json');
const store = join(dir, 'gate.db');
writeFileSync(policy, JSON.stringify({ version: 1, policy_id: 'p' }));
const KEY = '11'.repeat(32);
const base = ['gate', 'proxy', '--policy', policy, '--store', store, '--name', 'oauth'];
const upstream = ['--upstream', 'http://127.0.0.1:9/mcp', '--insecure-http-upstream'];

const saved = { ...process.env };
afterEach(() => {
  for (const k of ['VRPKIT_MASTER_KEY', 'VRPKIT_DOWNSTREAM_CLIENT_SECRET']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('vrp gate proxy --downstream-oauth: bad combinations', () => {
  it.each([
    [[...base, '--downstream-oauth', 'service', '--', 'node', 'server.js'], '--downstream-oauth needs --upstream'],
    [[...base, ...upstream, '--downstream-client-id', 'gw'], 'need --downstream-oauth'],
    [[...base, ...upstream, '--downstream-oauth', 'user', '--downstream-grant', 'client_credentials'], 'is for --downstream-oauth service'],
    [
      [...base, ...upstream, '--downstream-oauth', 'service', '--downstream-grant', 'client_credentials'],
      'VRPKIT_DOWNSTREAM_CLIENT_SECRET',
    ],
    [[...base, ...upstream, '--downstream-oauth', 'exchange'], 'exchange needs --downstream-client-id'],
    [
      [...base, ...upstream, '--upstream-header', 'Authorization: Bearer x', '--downstream-oauth', 'service'],
      'drop it from --upstream-header',
    ],
    [[...base, ...upstream, '--downstream-oauth', 'user', '--listen', '127.0.0.1:0'], 'needs team mode (--auth-issuer)'],
    [[...base, ...upstream, '--downstream-oauth', 'service'], 'needs --listen'],
  ])('%j is refused: %s', async (args, reason) => {
    process.env.VRPKIT_MASTER_KEY = KEY;
    const r = await runVrpInProcess(args);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(reason);
    expect(existsSync(store)).toBe(false);
  });

  it('a secret in the environment with no client id is refused, not ignored', async () => {
    process.env.VRPKIT_MASTER_KEY = KEY;
    process.env.VRPKIT_DOWNSTREAM_CLIENT_SECRET = 's3cret-value';
    const r = await runVrpInProcess([...base, ...upstream, '--downstream-oauth', 'service', '--listen', '127.0.0.1:0']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--downstream-client-id is not');
    expect(r.stderr).not.toContain('s3cret-value');
  });

  it('without a master key, it says where one is expected, and starts nothing', async () => {
    delete process.env.VRPKIT_MASTER_KEY;
    const fresh = join(tmp(), 'gate.db');
    const r = await runVrpInProcess([...base, '--store', fresh, ...upstream, '--downstream-oauth', 'service', '--listen', '127.0.0.1:0']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('VRPKIT_MASTER_KEY');
    expect(existsSync(fresh)).toBe(false);
  });
});
