import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { propertyDocument, sampleProperty } from '@vrpkit/node';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { sqliteUrl, tempDir } from './helpers.js';

const pgs = pgTestSchemas('platform cli', 'the PostgreSQL run of the tenants import');
const tmp = tempDir('platform-cli');

const targets: [string, string][] = [['sqlite', sqliteUrl(tmp, 'platform')]];
if (pgs) targets.push(['postgres', pgs.schemaUrl('platcli')]);

const TENANTS = 1000;
const importDir = join(tmp, 'properties');

beforeAll(() => {
  mkdirSync(importDir);
  const doc = JSON.stringify(propertyDocument(sampleProperty(Date.parse('2026-06-01T00:00:00Z'))));
  for (let i = 0; i < TENANTS; i++) writeFileSync(join(importDir, `villa-${String(i).padStart(4, '0')}.example.json`), doc);
  // Three broken files: a missing required field, a file that is not JSON, a file name that is not a domain.
  const { name: _n, ...noName } = JSON.parse(doc) as Record<string, unknown>;
  writeFileSync(join(importDir, 'broken-field.example.json'), JSON.stringify(noName));
  writeFileSync(join(importDir, 'broken-json.example.json'), '{"name": ');
  writeFileSync(join(importDir, 'Not_A_Domain.json'), doc);
});

describe.each(targets)('vrp platform on %s', (_kind, url) => {
  const keyFile = join(tmp, `master-${_kind}.key`);
  const db = ['--database-url', url];
  const withKey = [...db, '--master-key-file', keyFile];

  it('generates a master key and initialises the platform; the key never reaches the output', async () => {
    const gen = await runVrpInProcess(['platform', 'master-key', 'generate', '--out', keyFile, '--json']);
    expect(gen.code).toBe(0);
    const init = await runVrpInProcess(['platform', 'init', ...withKey, '--operator-domain', 'platform.example', '--json']);
    expect(init.code).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ created: true, master_key_id: JSON.parse(gen.stdout).master_key_id });
    const again = await runVrpInProcess(['platform', 'master-key', 'generate', '--out', keyFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error[file_exists]');
  });

  it('imports 1,000 property files, reports the 3 broken ones by file, field and reason, and is idempotent', async () => {
    const first = await runVrpInProcess(['platform', 'tenants', 'import', importDir, ...withKey, '--json']);
    expect(first.code).toBe(2);
    const r = JSON.parse(first.stdout) as { imported: number; failed: { file: string; field: string; reason: string }[] };
    expect(r.imported).toBe(TENANTS);
    expect(r.failed.map((f) => [f.file.split('/').pop(), f.field])).toEqual([
      ['Not_A_Domain.json', '(file name)'],
      ['broken-field.example.json', 'name'],
      ['broken-json.example.json', '(root)'],
    ]);
    expect(r.failed[2]!.reason).toMatch(/not valid JSON/);
    expect(first.stderr).toContain(`imported ${TENANTS}/${TENANTS}`);
    const second = await runVrpInProcess(['platform', 'tenants', 'import', importDir, ...withKey, '--json']);
    expect(JSON.parse(second.stdout)).toMatchObject({ imported: 0, already_present: TENANTS });
  }, 120_000);

  it('adds, shows, disables, lists and removes a tenant', async () => {
    const propFile = join(tmp, 'solo.json');
    writeFileSync(propFile, JSON.stringify(propertyDocument(sampleProperty(Date.now()))));
    expect(
      (await runVrpInProcess(['platform', 'tenants', 'add', '--domain', 'solo.example', '--property', propFile, ...withKey])).code,
    ).toBe(0);
    const dup = await runVrpInProcess([
      'platform',
      'tenants',
      'add',
      '--domain',
      'solo.example',
      '--property',
      propFile,
      ...withKey,
      '--json',
    ]);
    expect(JSON.parse(dup.stdout).error.code).toBe('tenant_exists');
    const show = JSON.parse((await runVrpInProcess(['platform', 'tenants', 'show', 'solo.example', ...db, '--json'])).stdout);
    expect(show).toMatchObject({ domain: 'solo.example', status: 'active' });
    expect(show.keys).toHaveLength(1);
    expect(JSON.stringify(show)).not.toContain('sealed');
    expect((await runVrpInProcess(['platform', 'tenants', 'disable', 'solo.example', ...db])).code).toBe(0);
    const disabled = JSON.parse((await runVrpInProcess(['platform', 'tenants', 'list', '--status', 'disabled', ...db, '--json'])).stdout);
    expect(disabled.map((t: { domain: string }) => t.domain)).toEqual(['solo.example']);
    expect((await runVrpInProcess(['platform', 'tenants', 'remove', 'solo.example', ...db])).code).toBe(0);
    const gone = await runVrpInProcess(['platform', 'tenants', 'show', 'solo.example', ...db]);
    expect(gone.stderr).toContain('error[unknown_tenant]');
  });

  it("shows a tenant's feeds (URLs redacted) and removes one by name or URL, with stable error codes", async () => {
    const domain = 'villa-0001.example';
    const url = 'https://calendar.example/export/basic.ics?token=s3cret';
    const vrp = (...args: string[]) => runVrpInProcess(['platform', 'tenants', ...args, ...db]);
    expect((await vrp('add-feed', domain, '--name', 'airbnb', '--url', url)).code).toBe(0);
    expect((await vrp('add-feed', domain, '--name', 'vrbo', '--url', 'https://vrbo.example/1.ics')).code).toBe(0);

    const json = await vrp('show', domain, '--json');
    const shown = JSON.parse(json.stdout) as { feeds: Record<string, unknown>[] };
    expect(shown.feeds.map((f) => [f.name, f.state, f.last_success_at, f.last_error_code, typeof f.next_due_at])).toEqual([
      ['airbnb', 'stale', null, null, 'string'],
      ['vrbo', 'stale', null, null, 'string'],
    ]);
    const text = await vrp('show', domain);
    expect(text.stdout).toMatch(/feed airbnb stale https:\/\/calendar\.example\/… \(url sha256 [0-9a-f]{12}\)/);
    expect(text.stdout).toContain('last success never, last error none, next due ');
    expect(json.stdout + text.stdout).not.toContain('s3cret');

    const unknown = await vrp('remove-feed', '--domain', domain, '--feed', 'https://calendar.example/other.ics?token=s3cret', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { code: 'unknown_feed' } });
    expect(unknown.stdout).not.toContain('s3cret');
    const noTenant = await vrp('remove-feed', '--domain', 'nobody.example', '--feed', 'vrbo');
    expect(noTenant.stderr).toContain('error[unknown_tenant]');

    const byUrl = await vrp('remove-feed', '--domain', domain, '--feed', url, '--json');
    expect(JSON.parse(byUrl.stdout)).toEqual({ domain, feed: 'airbnb', removed: true });
    expect((await vrp('remove-feed', '--domain', domain, '--feed', 'vrbo')).stdout).toBe(`removed feed vrbo from ${domain}\n`);
    expect(JSON.parse((await vrp('show', domain, '--json')).stdout).feeds).toEqual([]);
  });

  it('rotates the master key: the old key is refused afterwards', async () => {
    const next = join(tmp, `master-${_kind}-2.key`);
    await runVrpInProcess(['platform', 'master-key', 'generate', '--out', next]);
    const r = await runVrpInProcess(['platform', 'master-key', 'rotate', ...withKey, '--new-master-key-file', next, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).resealed).toBe(TENANTS);
    const stale = await runVrpInProcess(['platform', 'init', ...withKey]);
    expect(stale.stderr).toContain('error[master_key_mismatch]');
  }, 120_000);
});
