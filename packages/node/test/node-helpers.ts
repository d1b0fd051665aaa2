/**
 * Test support for the node's own tests: temp data directories, a mutable clock, an https
 * client that reaches `https://{domain}` on a loopback port with the dev CA (curl
 * `--connect-to` + `--cacert`, test-only), and ajv validators for the official schemas.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OfficialSchemaName, officialSchema } from '@vrpkit/protocol';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `vrpkit-node-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A clock the test moves by hand (the node reads it through `now`). */
export function testClock(start: string | number) {
  let t = typeof start === 'number' ? start : Date.parse(start);
  return {
    now: () => t,
    set: (at: string | number) => {
      t = typeof at === 'number' ? at : Date.parse(at);
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

export interface NodeClient {
  get(path: string): Promise<{ status: number; headers: Headers; text: string }>;
  close(): Promise<void>;
}

/** Dial 127.0.0.1:port for every request, with SNI and certificate checks for `domain` against `caPem`. */
export function nodeClient(domain: string, port: number, caPem: string): NodeClient {
  const connector = buildConnector({ ca: caPem });
  const agent = new Agent({
    connect: (opts, cb) => connector({ ...opts, hostname: '127.0.0.1', port: String(port), servername: domain }, cb),
  });
  return {
    async get(path) {
      const res = await undiciFetch(`https://${domain}${path}`, { dispatcher: agent });
      return { status: res.status, headers: res.headers as unknown as Headers, text: await res.text() };
    },
    close: () => agent.close(),
  };
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

/** Validate against an official VRP schema; returns ajv's errors (empty when valid). */
export function schemaErrors(name: OfficialSchemaName, doc: unknown): unknown[] {
  const id = (officialSchema(name) as { $id: string }).$id;
  const validate = ajv.getSchema(id) ?? ajv.compile(officialSchema(name));
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}

/** YYYY-MM-DD `days` after the instant `from` (UTC). */
export function dayAfter(from: number, days: number): string {
  return new Date(from + days * 86_400_000).toISOString().slice(0, 10);
}
