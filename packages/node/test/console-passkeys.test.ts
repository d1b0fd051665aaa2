/**
 * The host console's passkeys managed from the command line (`vrp node console passkeys [--json]`,
 * `… remove ID`), by the same rule as the console's page (passkeys-page.ts): listed with when each
 * was made and last used, never its public key; an unknown id and the last passkey are refused,
 * and a refusal removes nothing. The page itself is driven in Chromium (console-browser.test.ts).
 */
import { join } from 'node:path';
import { initNode } from '@vrpkit/node';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { tempDir, testClock } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleCredentials } from '../src/console/passkeys.js';

const NOW = Date.parse('2027-02-20T09:00:00Z');

describe('vrp node console passkeys', () => {
  const tmp = tempDir('console-passkeys');
  const dataDir = join(tmp.dir, 'node');
  const vrp = (...args: string[]) => runVrpInProcess(['node', 'console', 'passkeys', ...args, '--data-dir', dataDir]);
  const ids = () => new ConsoleCredentials(dataDir).passkeys().map((p) => p.id);

  beforeAll(async () => {
    await initNode({ domain: 'passkeys-villa.example', dataDir, clock: testClock(NOW) });
    const credentials = new ConsoleCredentials(dataDir);
    for (const id of ['cred-phone-0001', 'cred-laptop-0002']) {
      const { token } = credentials.createEnrollment(NOW);
      credentials.enrollPasskey(
        token,
        {
          id,
          public_key: 'pQECAyYgASFYIA',
          counter: 0,
          transports: ['internal'],
          created_at: new Date(NOW).toISOString(),
          last_used_at: null,
        },
        NOW,
      );
    }
  });
  afterAll(() => tmp.cleanup());

  it('lists the passkeys with when they were made and last used, never their public keys', async () => {
    const listed = await vrp('--json');
    expect(listed.code, listed.stderr).toBe(0);
    const doc = JSON.parse(listed.stdout) as { passkeys: Record<string, unknown>[] };
    expect(doc.passkeys.map((p) => p.id)).toEqual(['cred-phone-0001', 'cred-laptop-0002']);
    expect(doc.passkeys[0]).toMatchObject({ created_at: '2027-02-20T09:00:00.000Z', last_used_at: null, transports: ['internal'] });
    expect(listed.stdout).not.toContain('public_key');
    expect((await vrp()).stdout).toContain('cred-phone-0001  passkey cred-pho…  created 2027-02-20T09:00:00.000Z  last used never');
  });

  it('removes one; refuses an unknown id, a wrong verb and the last passkey, removing nothing', async () => {
    const unknown = await vrp('remove', 'cred-nobody', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('console_passkey_not_found');
    expect((await vrp('delete', 'cred-phone-0001')).code).toBe(64);
    expect(ids()).toHaveLength(2);

    const removed = await vrp('remove', 'cred-phone-0001', '--json');
    expect(removed.code, removed.stderr).toBe(0);
    expect(ids()).toEqual(['cred-laptop-0002']);

    const last = await vrp('remove', 'cred-laptop-0002');
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('error[console_last_passkey]');
    expect(ids()).toEqual(['cred-laptop-0002']);
  });
});
