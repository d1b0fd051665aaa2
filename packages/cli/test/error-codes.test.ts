/**
 * `vrp`'s own error codes as data (`CLI_CODES`: message template and exit status), and a
 * package's refusal of a value the command line gave it (`InputRefused`: the package's code,
 * exit 64). Real commands in this process, a real SQLite gate store.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VrpError } from '@vrpkit/core';
import { openSqliteStore } from '@vrpkit/gate';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_CODES, CliError, EXIT_USAGE, exitStatusOf, InputRefused, usage } from '../src/errors.js';

const tmp = mkdtempSync(join(tmpdir(), 'vrp-error-codes-'));
const store = join(tmp, 'gate.db');
const receipt = join(tmp, 'receipt.json');

beforeAll(async () => {
  await (await openSqliteStore(store)).close();
  writeFileSync(receipt, '{}');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('exit statuses', () => {
  it('a vrp code ends the command with its table status; any other error with the command’s own', () => {
    expect(exitStatusOf(usage('x'), 1)).toBe(EXIT_USAGE);
    expect(exitStatusOf(new CliError('file_unreadable', { what: 'CA', file: 'f', reason: 'ENOENT' }), 2)).toBe(EXIT_USAGE);
    expect(exitStatusOf(new CliError('file_unwritable', { file: 'f', reason: 'EACCES' }), 2)).toBe(1);
    expect(exitStatusOf(new VrpError('usage', 'a package’s usage error'), 1)).toBe(EXIT_USAGE);
    expect(exitStatusOf(new VrpError('listen_failed', 'taken'), 2)).toBe(2);
    expect(exitStatusOf(new Error('boom'), 1)).toBe(1);
    for (const entry of Object.values(CLI_CODES)) expect([undefined, 1, EXIT_USAGE]).toContain((entry as { exit?: number }).exit);
  });

  it('refused input keeps the package’s code, and its details unless reworded for an option', () => {
    const e = new VrpError('invalid_date', 'check_in is not a date', { field: 'check_in' });
    expect(new InputRefused(e).toJSON()).toEqual({
      code: 'invalid_date',
      message: 'check_in is not a date',
      details: { field: 'check_in' },
    });
    expect(new InputRefused(e, '--check-in').toJSON()).toEqual({ code: 'invalid_date', message: '--check-in: check_in is not a date' });
    expect(new InputRefused(new Error('boom')).toJSON()).toEqual({ code: 'internal_error', message: 'boom' });
    expect(exitStatusOf(new InputRefused(e), 2)).toBe(EXIT_USAGE);
  });
});

describe('the codes users see', () => {
  it('gate approve of an act that is not escalated: not_pending, exit 1', async () => {
    const r = await runVrpInProcess(['gate', 'approve', 'act_nope', '--store', store]);
    expect(r).toMatchObject({ code: 1, stderr: 'error[not_pending]: act act_nope is not escalated\n' });
  });

  it('gate revoke of an unknown authority: not_revocable, exit 1, as JSON with --json', async () => {
    const r = await runVrpInProcess(['gate', 'revoke', 'auth_nope', '--store', store, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'not_revocable', message: 'authority auth_nope does not exist or is no longer outstanding' },
    });
  });

  it('gate tools pin with no tool seen: unknown_tool, exit 1', async () => {
    const r = await runVrpInProcess(['gate', 'tools', 'pin', '--all', '--store', store]);
    expect(r).toMatchObject({
      code: 1,
      stderr: 'error[unknown_tool]: no tools seen yet: start `vrp gate proxy` and list its tools once\n',
    });
  });

  it('receipt match --arguments that are not I-JSON: the gate’s code after the option, exit 64, no details', async () => {
    const r = await runVrpInProcess(['receipt', 'match', '--receipt', receipt, '--tool', 'x', '--arguments', '{"a":1,"a":2}', '--json']);
    expect(r.code).toBe(64);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe('EF_MALFORMED_ARGUMENTS');
    expect(error.message).toMatch(/^--arguments: /);
    expect(error.details).toBeUndefined();
  });

  it('platform tenants add-feed naming two tenants: usage, exit 64', async () => {
    const r = await runVrpInProcess([
      'platform',
      'tenants',
      'add-feed',
      'a.example',
      '--domain',
      'b.example',
      '--name',
      'x',
      '--url',
      'https://x',
    ]);
    expect(r).toMatchObject({ code: 64, stderr: 'error[usage]: two different tenants given: a.example and --domain b.example\n' });
  });

  it('node backup with an unreadable passphrase file: passphrase_unreadable, exit 1, before the node is read', async () => {
    const r = await runVrpInProcess([
      'node',
      'backup',
      '--data-dir',
      join(tmp, 'no-node'),
      '--out',
      join(tmp, 'b'),
      '--passphrase-file',
      join(tmp, 'none'),
    ]);
    expect(r).toMatchObject({
      code: 1,
      stderr: `error[passphrase_unreadable]: cannot read the passphrase file ${join(tmp, 'none')}: ENOENT\n`,
    });
  });
});
