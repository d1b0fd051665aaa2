import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { propertyDocument, sampleProperty } from '@vrpkit/node';
import { UNSAFE_TEXT_CHARACTERS } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A tenant's property file and its file name are the importer's input, not the operator's: an
// escape sequence in them must not reach the operator's terminal as one (it could erase the
// failure report or recolour it), nor a bidi override reorder what the operator reads.
const ESC = '\u001b';
const RLO = '\u202e';
/** Output lines with a raw control (other than the line ends) or bidi character. */
const rawUnsafe = (out: string) => out.split('\n').filter((line) => new RegExp(UNSAFE_TEXT_CHARACTERS.source, 'u').test(line));

const tmp = mkdtempSync(join(tmpdir(), 'vrp-platform-terminal-'));
const dir = join(tmp, 'properties');
const db = ['--database-url', `sqlite:${join(tmp, 'platform.db')}`];
const withKey = [...db, '--master-key-file', join(tmp, 'master.key')];

beforeAll(async () => {
  mkdirSync(dir);
  const doc = propertyDocument(sampleProperty(Date.parse('2026-06-01T00:00:00Z')));
  writeFileSync(join(dir, 'hostile.example.json'), JSON.stringify({ ...doc, name: `Villa ${RLO}evil${ESC}[2J${ESC}]0;title\u0007` }));
  writeFileSync(join(dir, `ctl${ESC}[2J${RLO}.example.json`), JSON.stringify(doc));
  writeFileSync(join(dir, 'plain.example.json'), JSON.stringify(doc));
  expect((await runVrpInProcess(['platform', 'master-key', 'generate', '--out', join(tmp, 'master.key')])).code).toBe(0);
  expect((await runVrpInProcess(['platform', 'init', ...withKey])).code).toBe(0);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('vrp platform shows tenant-supplied text terminal-safe', () => {
  it('tenants import reports a hostile file name with visible escapes, and imports the rest', async () => {
    const r = await runVrpInProcess(['platform', 'tenants', 'import', dir, ...withKey]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('1 imported');
    expect(rawUnsafe(r.stderr)).toEqual([]);
    expect(r.stderr).toContain('ctl\\u{001B}[2J\\u{202E}.example.json: (file name)');
  });

  it('a property name with controls and bidi overrides is refused at import (the node would publish it), reported as escapes', async () => {
    const r = await runVrpInProcess(['platform', 'tenants', 'import', dir, ...withKey, '--json']);
    const failed = JSON.parse(r.stdout).failed as Array<{ file: string; field: string; reason: string }>;
    expect(failed.find((f) => f.file.endsWith('hostile.example.json'))).toMatchObject({
      field: 'name',
      reason: 'control and bidirectional-override characters are not accepted',
    });
    const show = await runVrpInProcess(['platform', 'tenants', 'show', 'hostile.example', ...db]);
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(/^error\[unknown_tenant\]/);
  });

  it('a folder from hosts: a symbolic link (even to a valid file) and a FIFO are reported, never read; the rest imports', async () => {
    const folder = join(tmp, 'from-hosts');
    mkdirSync(folder);
    const doc = propertyDocument(sampleProperty(Date.parse('2026-06-01T00:00:00Z')));
    const outside = join(tmp, 'outside.json');
    writeFileSync(outside, JSON.stringify(doc));
    symlinkSync(outside, join(folder, 'linked.example.json'));
    execFileSync('mkfifo', [join(folder, 'fifo.example.yaml')]);
    writeFileSync(join(folder, 'regular.example.json'), JSON.stringify(doc));
    const r = await runVrpInProcess(['platform', 'tenants', 'import', folder, ...withKey, '--json']);
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout) as { imported: number; failed: Array<{ file: string; reason: string }> };
    expect(out.imported).toBe(1);
    expect(out.failed.map((f) => [f.file.slice(folder.length + 1), f.reason])).toEqual([
      ['fifo.example.yaml', 'not a regular file (links and special files are not imported)'],
      ['linked.example.json', 'not a regular file (links and special files are not imported)'],
    ]);
  });

  it('an error message quoting input is terminal-safe too', async () => {
    const r = await runVrpInProcess(['platform', 'tenants', 'show', `x${ESC}[2J.example`, ...db]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error\[\w+\]: /);
    expect(rawUnsafe(r.stderr)).toEqual([]);
  });
});

describe('vrp platform tenants add-feed / remove-feed take the tenant either way', () => {
  const url = 'https://calendar.example/export.ics?token=s3cret';

  it('adds with --domain and removes with DOMAIN as the argument, like the other tenants commands', async () => {
    const add = await runVrpInProcess([
      'platform',
      'tenants',
      'add-feed',
      '--domain',
      'plain.example',
      '--name',
      'vrbo',
      '--url',
      url,
      ...db,
    ]);
    expect(add).toMatchObject({ code: 0, stdout: 'added feed vrbo to plain.example\n' });
    const rm = await runVrpInProcess(['platform', 'tenants', 'remove-feed', 'plain.example', '--feed', url, ...db, '--json']);
    expect(rm.code).toBe(0);
    expect(JSON.parse(rm.stdout)).toEqual({ domain: 'plain.example', feed: 'vrbo', removed: true });
  });

  it('no tenant, or two different ones, is a usage error (exit 64) that changes nothing', async () => {
    const none = await runVrpInProcess(['platform', 'tenants', 'add-feed', '--name', 'vrbo', '--url', url, ...db, '--json']);
    expect(none.code).toBe(64);
    expect(JSON.parse(none.stdout).error.code).toBe('usage');
    const two = await runVrpInProcess(['platform', 'tenants', 'remove-feed', 'a.example', '--domain', 'b.example', '--feed', 'x', ...db]);
    expect(two.code).toBe(64);
    expect(two.stderr).toBe('error[usage]: two different tenants given: a.example and --domain b.example\n');
    const show = JSON.parse((await runVrpInProcess(['platform', 'tenants', 'show', 'plain.example', ...db, '--json'])).stdout);
    expect(show.feeds).toEqual([]);
  });
});

describe('an error message of several lines keeps its lines', () => {
  it('tenants add with a property file of several problems prints one per line', async () => {
    const file = join(tmp, 'two-problems.json');
    writeFileSync(file, JSON.stringify({ property_id: 'x' }));
    const r = await runVrpInProcess(['platform', 'tenants', 'add', '--domain', 'two.example', '--property', file, ...withKey]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).every((l) => l.startsWith(`${file}: `))).toBe(true);
  });
});

describe('vrp platform --admin-listen', () => {
  it('an address outside loopback and private networks is a usage error (exit 64) before anything starts', async () => {
    for (const cmd of [
      ['serve', '--dev'],
      ['sync-worker', '--once'],
    ]) {
      const r = await runVrpInProcess(['platform', ...cmd, ...withKey, '--admin-listen', '0.0.0.0:9464']);
      expect(r.code).toBe(64);
      expect(r.stderr).toContain('--admin-listen is a loopback or private HOST:PORT');
    }
  });
});
