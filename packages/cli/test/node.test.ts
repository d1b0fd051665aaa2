/**
 * `vrp node …` through the real CLI in a child process: init errors are precise
 * (file, field, reason; stable code) and leave nothing behind; `serve --json` prints the
 * listening event as its first stdout line and serves https until SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { initNode } from '@vrpkit/node';
import { nodeClient, tempDir } from '@vrpkit/testkit/node';
import { afterAll, describe, expect, it, vi } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const BIN = join(ROOT, 'packages/cli/src/bin.ts');
const tmp = tempDir('cli');
// Each case starts the real CLI under tsx (several seconds on a shared 2-core machine).
vi.setConfig({ testTimeout: 60_000 });
afterAll(() => tmp.cleanup());

function vrp(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=vrpkit-source', BIN, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function runVrp(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = vrp(args);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Nothing named after the data directory exists in its parent (no half-built temp directory either). */
function leftovers(parent: string, name: string): string[] {
  return readdirSync(parent).filter((f) => f.includes(name));
}

describe('vrp node init errors', () => {
  const malformed: [string, string, string, RegExp][] = [
    [
      'a field with a bad value (YAML)',
      'bad-field.yaml',
      'property_id: villa\nname: Villa\ntime_zone: Europe/Stockholm\ncurrency: EURO\nmax_guests: 4\nrates:\n  nightly: "1000.00"\n',
      /^error\[invalid_property\]: .*bad-field\.yaml: currency: must be an ISO 4217 currency code/m,
    ],
    [
      'a nested field (JSON)',
      'nested.json',
      JSON.stringify({
        property_id: 'villa',
        name: 'Villa',
        time_zone: 'Europe/Stockholm',
        currency: 'EUR',
        max_guests: 4,
        rates: { nightly: '1000.00', seasons: [{ name: 'Summer', start: '2027-06-01', end: '2027-08-31', nightly_minor: 12.5 }] },
      }),
      /^error\[invalid_property\]: .*nested\.json: rates\.seasons\.0\.nightly_minor: must be an integer amount in minor units/m,
    ],
    [
      'a YAML syntax error',
      'syntax.yaml',
      'name: [unclosed\nmax_guests: 4\n',
      /^error\[invalid_property\]: .*syntax\.yaml: \(root\): not valid YAML at line \d+/m,
    ],
    [
      'an unknown field',
      'unknown.yaml',
      'property_id: v\nname: V\ntime_zone: UTC\ncurrency: EUR\nmax_guests: 2\nrates: {nightly: "0.01"}\nswimming_pool: yes\n',
      /invalid_property.*unknown\.yaml: \(root\): .*swimming_pool/m,
    ],
    [
      'a fee labelled as a discount',
      'discount.yaml',
      'property_id: v\nname: V\ntime_zone: UTC\ncurrency: EUR\nmax_guests: 2\nrates: {nightly: "0.01"}\nfees:\n  - {code: promo, label: Early-bird discount, amount: "0.00"}\n',
      /invalid_property.*discount\.yaml: fees\.0\.label: a price line is never labelled as a discount/m,
    ],
  ];

  it.each(malformed)('%s → exit 1, file + field + reason, nothing written', async (_name, file, text, message) => {
    const propertyFile = join(tmp.dir, file);
    writeFileSync(propertyFile, text);
    const name = `data-${file.replace(/\W/g, '-')}`;
    const r = await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', join(tmp.dir, name), '--property', propertyFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(leftovers(tmp.dir, name)).toEqual([]);
  });

  it('--json reports the error as data with file, field and reason', async () => {
    const propertyFile = join(tmp.dir, 'guests.yaml');
    writeFileSync(propertyFile, 'property_id: v\nname: V\ntime_zone: UTC\ncurrency: EUR\nmax_guests: 0\nrates: {nightly: "0.01"}\n');
    const r = await runVrp([
      'node',
      'init',
      '--domain',
      'villa.example',
      '--data-dir',
      join(tmp.dir, 'data-json'),
      '--property',
      propertyFile,
      '--json',
    ]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        code: 'invalid_property',
        message: expect.any(String),
        details: {
          file: propertyFile,
          field: 'max_guests',
          reason: expect.stringMatching(/>=\s*1|≥\s*1|too small/i),
          issues: [{ field: 'max_guests', reason: expect.stringMatching(/>=\s*1|≥\s*1|too small/i) }],
        },
      },
    });
    expect(leftovers(tmp.dir, 'data-json')).toEqual([]);
  });

  it('a bad domain, a missing file, a used data directory and a missing option each have their own code', async () => {
    const d = join(tmp.dir, 'data-domain');
    expect((await runVrp(['node', 'init', '--domain', 'https://Villa.example:8443', '--data-dir', d, '--sample'])).stderr).toMatch(
      /^error\[invalid_domain\]/m,
    );
    expect(
      (await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', d, '--property', join(tmp.dir, 'absent.yaml')])).stderr,
    ).toMatch(/^error\[invalid_property\]: .*absent\.yaml: \(root\): cannot read the file \(ENOENT\)/m);
    expect(existsSync(d)).toBe(false);
    const used = join(tmp.dir, 'data-used');
    expect((await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', used, '--sample'])).code).toBe(0);
    const again = await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', used, '--sample']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error\[data_dir_not_empty\]/m);
    expect((await runVrp(['node', 'init', '--data-dir', join(tmp.dir, 'data-x')])).code).toBe(64);
  }, 120_000);
});

describe('vrp node usage', () => {
  it('bare `vrp node` prints its help and exits 64 (a usage error), not 0', async () => {
    const r = await runVrp(['node']);
    expect(r.code).toBe(64);
    expect(`${r.stdout}${r.stderr}`).toMatch(/Usage: vrp node \[options\] \[command\]/);
  });

  it('init without --property refuses with property_required (exit 64) unless --sample is explicit; nothing is created', async () => {
    const d = join(tmp.dir, 'no-property');
    const r = await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', d]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/^error\[property_required\]: pass --property FILE/m);
    expect(existsSync(d)).toBe(false);
    expect((await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', d, '--sample', '--property', 'x.yaml'])).code).toBe(
      64,
    );
    expect(existsSync(d)).toBe(false);
  }, 120_000);

  it('an IP address as --domain is refused with domain_is_ip_address, and a --data-dir that is a file with data_dir_not_directory', async () => {
    const d = join(tmp.dir, 'ip-domain');
    const ip = await runVrp(['node', 'init', '--domain', '127.0.0.1', '--data-dir', d, '--sample']);
    expect(ip.code).toBe(1);
    expect(ip.stderr).toMatch(/^error\[domain_is_ip_address\]: "127\.0\.0\.1" is an IP address/m);
    expect(existsSync(d)).toBe(false);
    const file = join(tmp.dir, 'not-a-dir.txt');
    writeFileSync(file, 'hello\n');
    const init = await runVrp(['node', 'init', '--domain', 'villa.example', '--data-dir', file, '--sample']);
    expect(init.stderr).toMatch(/^error\[data_dir_not_directory\]: .*not-a-dir\.txt is a file, not a directory/m);
    const list = await runVrp(['node', 'keys', 'list', '--data-dir', file]);
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/^error\[data_dir_not_directory\]/m);
    expect(readFileSync(file, 'utf8')).toBe('hello\n');
  }, 120_000);

  it('keys rotate --publish-ahead: the new key is listed as pending with the time it starts signing', async () => {
    const dataDir = join(tmp.dir, 'publish-ahead');
    await initNode({ domain: 'publish-ahead-cli.example', dataDir });
    const rotated = await runVrp(['node', 'keys', 'rotate', '--data-dir', dataDir, '--publish-ahead', '600', '--json']);
    expect(rotated.code).toBe(0);
    const r = JSON.parse(rotated.stdout) as { kid: string; activates_at: string };
    expect(Date.parse(r.activates_at) - Date.now()).toBeGreaterThan(500_000);
    const list = await runVrp(['node', 'keys', 'list', '--data-dir', dataDir]);
    expect(list.stdout).toContain(`${r.kid}  pending (signs from ${r.activates_at})  published`);
    expect(list.stdout).toMatch(/-01 {2}active {2}published/);
    expect((await runVrp(['node', 'keys', 'rotate', '--data-dir', dataDir, '--publish-ahead', '-5'])).code).toBe(64);
  }, 120_000);
});

describe('vrp node serve', () => {
  it('--json: the first stdout line is the listening event; the node answers on https://DOMAIN; SIGTERM stops it cleanly', async () => {
    const dataDir = join(tmp.dir, 'serve');
    expect((await runVrp(['node', 'init', '--domain', 'serve-cli.example', '--data-dir', dataDir, '--sample'])).code).toBe(0);
    const child = vrp(['node', 'serve', '--data-dir', dataDir, '--dev', '--json', '--port', '0']);
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const first = JSON.parse((await lines.next()).value as string);
    expect(first).toEqual({
      event: 'listening',
      ts: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      origin: 'https://serve-cli.example',
      address: '127.0.0.1',
      port: expect.any(Number),
      ca: join(dataDir, 'tls/ca.pem'),
    });
    const client = nodeClient('serve-cli.example', first.port, readFileSync(first.ca, 'utf8'));
    const res = await client.get('/api/verified-stay-offer?check_in=2099-01-01&check_out=2099-01-03&guests=2');
    expect(res.status).toBe(400); // beyond the booking horizon; still a clean JSON answer
    await client.close();
    const log = JSON.parse((await lines.next()).value as string);
    expect(log).toMatchObject({
      event: 'request',
      method: 'GET',
      path: '/api/verified-stay-offer',
      status: 400,
      query_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(JSON.stringify(log)).not.toContain('2099-01-01');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);

  it('vrp demo creates the sample node once, prints working commands, and stops cleanly on SIGINT', async () => {
    const dir = join(tmp.dir, 'demo');
    const child = vrp(['demo', '--dir', dir, '--quiet']);
    const exited = new Promise<number | null>((done) => child.on('close', done));
    let out = '';
    for await (const line of createInterface({ input: child.stdout! })) {
      out += `${line}\n`;
      if (line.startsWith('Ctrl-C')) break;
    }
    expect(out).toMatch(/^created a sample node for villa-demo\.example/m);
    for (const surface of ['/mcp', '/.well-known/agent-card.json', '/.well-known/jwks.json'])
      expect(out).toContain(`https://villa-demo.example${surface}`);
    const curl = /curl --connect-to villa-demo\.example:443:127\.0\.0\.1:(\d+) --cacert (\S+) '(https:\/\/villa-demo\.example[^']+)'/.exec(
      out,
    );
    expect(curl).not.toBeNull();
    expect(out).toMatch(
      /npm run -s vrp -- verify https:\/\/villa-demo\.example --check-in \S+ --check-out \S+ --guests 2 --connect-to villa-demo\.example:443:127\.0\.0\.1:\d+ --cacert \S+/,
    );
    const client = nodeClient('villa-demo.example', Number(curl![1]), readFileSync(resolve(ROOT, curl![2]!), 'utf8'));
    const url = new URL(curl![3]!);
    const res = await client.get(url.pathname + url.search);
    await client.close();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).offer.agent_permission.may_quote_as_official_direct_offer).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(0);

    // The demo's port changed every run, so the commands it printed went stale: a second run listens where the first did.
    const again = vrp(['demo', '--dir', dir, '--quiet']);
    const againExited = new Promise<number | null>((done) => again.on('close', done));
    let second = '';
    for await (const line of createInterface({ input: again.stdout! })) {
      second += `${line}\n`;
      if (line.startsWith('Ctrl-C')) break;
    }
    expect(second).not.toMatch(/created a sample node/);
    expect(second).toContain(`--connect-to villa-demo.example:443:127.0.0.1:${curl![1]} `);
    again.kill('SIGINT');
    expect(await againExited).toBe(0);
  }, 120_000);

  it('--dev without --port listens where it did last time and prints verify and conformance commands that work as printed (issue 36)', async () => {
    const dataDir = join(tmp.dir, 'serve-dev-port');
    expect((await runVrp(['node', 'init', '--domain', 'dev-port.example', '--data-dir', dataDir, '--sample'])).code).toBe(0);
    /** Start `serve --dev`, read its banner up to the Ctrl-C line, return the banner and the exit. */
    const start = async () => {
      const child = vrp(['node', 'serve', '--data-dir', dataDir, '--dev']);
      const exited = new Promise<number | null>((done) => child.on('close', done));
      let banner = '';
      for await (const line of createInterface({ input: child.stdout! })) {
        banner += `${line}\n`;
        if (line.startsWith('Ctrl-C')) break;
      }
      return { child, exited, banner };
    };
    const first = await start();
    const port = /on 127\.0\.0\.1:(\d+)/.exec(first.banner)![1];
    const commands = [...first.banner.matchAll(/^ {2}npm run -s vrp -- (.+)$/gm)].map((m) => m[1]!.split(' '));
    expect(commands.map((c) => c[0])).toEqual(['verify', 'conformance']);
    for (const c of commands) expect(c.join(' ')).toContain(`--connect-to dev-port.example:443:127.0.0.1:${port} --cacert `);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);

    const second = await start();
    expect(second.banner).toContain(`on 127.0.0.1:${port}`);
    // The commands the first run printed work against the second, as pasted (from the folder they were printed in).
    const verified = await runVrp(commands[0]!);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const checked = await runVrp(commands[1]!);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 180_000);

  it('without --dev and without a certificate it refuses with tls_required', async () => {
    const dataDir = join(tmp.dir, 'serve-no-tls');
    await initNode({ domain: 'serve-no-tls.example', dataDir });
    const r = await runVrp(['node', 'serve', '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error\[tls_required\]/m);
  });
});
