import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@vrpkit/gate';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `vrp gate proxy|ui|tools|report|audit` name the store `--store`; the store commands a person
// runs next to them (pending, approve, journal, revoke, bump-epoch) take the same flag.
const tmp = mkdtempSync(join(tmpdir(), 'vrp-gate-store-option-'));
const store = join(tmp, 'gate.db');

beforeAll(async () => {
  await (await openSqliteStore(store)).close();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('vrp gate store commands take --store like the proxy', () => {
  it('gate pending and gate journal read the proxy store named by --store', async () => {
    const pending = await runVrpInProcess(['gate', 'pending', '--store', store, '--json']);
    expect(pending.code).toBe(0);
    expect(JSON.parse(pending.stdout)).toEqual([]);
    expect((await runVrpInProcess(['gate', 'journal', '--store', store, '--json'])).code).toBe(0);
  });

  it('two ways of naming the store at once, or none, is a usage error (exit 64)', async () => {
    const both = await runVrpInProcess(['gate', 'pending', '--store', store, '--db', store]);
    expect(both).toMatchObject({
      code: 64,
      stderr: 'error[usage]: give exactly one of --db FILE, --database-url URL or --store FILE|URL\n',
    });
    expect((await runVrpInProcess(['gate', 'journal'])).code).toBe(64);
  });

  it('a --store file that does not exist is refused, never created', async () => {
    const missing = join(tmp, 'typo.db');
    const r = await runVrpInProcess(['gate', 'pending', '--store', missing, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('no_store');
  });
});
