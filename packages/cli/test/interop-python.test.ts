/**
 * The official Python MCP SDK (PyPI `mcp`) against a real node, on both revisions (issue 32):
 * `mode='auto'` negotiates 2026-07-28 through `server/discover`, `mode='legacy'` is the 2025
 * `initialize` handshake. Each lists the tool and calls it; the agent verifies the receipt of each
 * call, and `guests` sent as a string (what the Python SDK once sent, and the node signed) is
 * refused with `invalid_guests`.
 *
 * Runs when `VRPKIT_PYTHON_MCP` names a Python with `mcp` installed
 * (`python3 -m venv /tmp/venv-mcp && /tmp/venv-mcp/bin/pip install mcp`); skips, saying so, otherwise.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkMcpCallReceipt, createHardenedFetch, createReceiptJwksResolver, createSignerJwksResolver, JwksCache } from '@vrpkit/agent';
import { initNode, type ServedNode, serveNode } from '@vrpkit/node';
import { BOUND_TOOL_NAME, MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PYTHON = process.env.VRPKIT_PYTHON_MCP;
const DOMAIN = 'python-client.example';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };
const SCRIPT = new URL('./fixtures/mcp-python-client.py', import.meta.url).pathname;

if (!PYTHON) console.warn('mcp-python: VRPKIT_PYTHON_MCP is unset (a Python with `pip install mcp`); the Python SDK client is not run');

interface PythonRun {
  protocol_version: string;
  tools: string[];
  result: { structuredContent?: unknown; _meta?: Record<string, unknown>; isError?: boolean };
  guests_as_text: { isError?: boolean; content: { text?: string }[] };
}

describe.skipIf(!PYTHON)('the Python MCP SDK client', () => {
  let dir: string;
  let node: ServedNode;
  let caFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-python-'));
    await initNode({ domain: DOMAIN, dataDir: join(dir, 'node') });
    node = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, node.caPem as string);
  });

  afterAll(async () => {
    await node?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['auto', '2026-07-28'],
    ['legacy', '2025-11-25'],
  ])(
    'mode %s speaks %s: lists and calls the tool, the receipt verifies, guests "2" is invalid_guests',
    async (mode, revision) => {
      const url = `https://127.0.0.1:${node.port}${MCP_ENDPOINT_PATH}`;
      const { stdout } = await promisify(execFile)(PYTHON as string, [SCRIPT, url, DOMAIN, caFile, mode, JSON.stringify(ARGS)], {
        timeout: 60_000,
      });
      const run = JSON.parse(stdout.trim().split('\n').at(-1) as string) as PythonRun;
      expect(run.protocol_version).toBe(revision);
      expect(run.tools).toEqual([BOUND_TOOL_NAME]);
      expect(run.result.isError).toBeFalsy();
      const fetch = createHardenedFetch({ connectTo: [`${DOMAIN}:443:127.0.0.1:${node.port}`], ca: node.caPem as string });
      try {
        const cache = new JwksCache({ fetch });
        const check = await checkMcpCallReceipt({
          callResult: run.result,
          sentCall: { tool: BOUND_TOOL_NAME, arguments: ARGS },
          envelope: run.result.structuredContent,
          surfaceHost: DOMAIN,
          resolveJwks: createReceiptJwksResolver({ issuerDomain: DOMAIN, cache }),
          resolveSignerJwks: createSignerJwksResolver({ fetch, cache }),
          now: Date.now(),
        });
        expect(check).toMatchObject({ receipt_present: true, verified: true });
      } finally {
        await fetch.close();
      }
      expect(run.guests_as_text.isError).toBe(true);
      expect(run.guests_as_text.content[0]?.text).toContain('error[invalid_guests]');
    },
    90_000,
  );
});
