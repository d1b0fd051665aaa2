/**
 * Usage errors as a newcomer meets them (issue 36 frictions): a typo gets its one-line error and
 * a one-line hint, not the whole help; `--json` gets one JSON document on stdout and nothing on
 * stderr; and a `vrp platform` verb without a database URL is a usage error (exit 64) like the others.
 */
import { PLATFORM_DATABASE_URL_ENV } from '@vrpkit/platform';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../src/main.js';

describe('usage errors', () => {
  it.each([
    [['node', 'serv', '--data-dir', 'd']],
    [['node', 'init', '--domian', 'villa.example']],
    [['gate', 'pending', '--store', 'gate.db', '--jsn']],
    [['verify', 'https://villa.example', '--guests']],
  ])('%j: one line and a hint on stderr, exit 64', async (args) => {
    const r = await runVrpInProcess(args);
    expect(r.code).toBe(64);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^error: /);
    expect(lines.at(-1)).toBe(USAGE_HINT);
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(r.stderr).not.toContain('Usage:');
  });

  it.each([[['node', 'serv', '--json']], [['node', 'init', '--domian', 'villa.example', '--json']]])(
    '%j with --json: one JSON error on stdout, nothing on stderr, exit 64',
    async (args) => {
      const r = await runVrpInProcess(args);
      expect(r.code).toBe(64);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'usage', message: expect.stringMatching(/^(unknown|required)/) } });
    },
  );
});

describe('vrp platform without a database URL', () => {
  const saved = process.env[PLATFORM_DATABASE_URL_ENV];
  beforeEach(() => {
    delete process.env[PLATFORM_DATABASE_URL_ENV];
  });
  afterEach(() => {
    if (saved !== undefined) process.env[PLATFORM_DATABASE_URL_ENV] = saved;
  });

  it('is a usage error: exit 64, the platform code on stdout with --json', async () => {
    const r = await runVrpInProcess(['platform', 'tenants', 'list', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'database_url_required' } });
    expect(r.code).toBe(64);
    const bad = await runVrpInProcess(['platform', 'tenants', 'list', '--database-url', 'mysql://x', '--json']);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'invalid_database_url' } });
    expect(bad.code).toBe(64);
  });
});
