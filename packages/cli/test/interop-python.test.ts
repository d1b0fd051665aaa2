/**
 * The official Python MCP SDK (PyPI `mcp`) against a vrpkit node, a platform tenant and
 * `vrp gate proxy --listen` in front of the node, on both revisions (issue 32 item 8):
 * `mode='auto'` negotiates 2026-07-28 through `server/discover`, `mode='legacy'` is the 2025
 * `initialize` handshake. Each lists the tool and calls it; the agent verifies the offer and the
 * receipt of each call, and `guests` sent as a string (what the Python SDK once sent, and the node
 * signed) is refused with `invalid_guests`.
 *
 * Runs when `VRPKIT_PYTHON_MCP` names a Python with `mcp` installed (`.ci/run` makes one:
 * `python3 -m venv DIR && DIR/bin/pip install mcp`); skips, saying so, otherwise.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { checkMcpCallReceipt, createReceiptJwksResolver, createSignerJwksResolver, JwksCache } from '@vrpkit/agent';
import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { describe, expect, it } from 'vitest';
import { type ClientEndpoint, clientTargetsForFile } from './support/interop.js';

const PYTHON = process.env.VRPKIT_PYTHON_MCP;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const ARGS = { check_in: day(30), check_out: day(33), guests: 2 };
const SCRIPT = new URL('./fixtures/mcp-python-client.py', import.meta.url).pathname;

if (!PYTHON) console.warn('interop-python: VRPKIT_PYTHON_MCP is unset (a Python with `pip install mcp`); the Python SDK client is not run');

interface PythonRun {
  protocol_version: string;
  tools: string[];
  result: { structuredContent?: unknown; _meta?: Record<string, unknown>; isError?: boolean };
  guests_as_text: { isError?: boolean; content: { text?: string }[] };
}

describe.skipIf(!PYTHON)('the Python MCP SDK client', () => {
  const targets = clientTargetsForFile();

  /** The Python client's run against one target in one mode. */
  async function python({ url, authorization }: ClientEndpoint, mode: string): Promise<PythonRun> {
    const { vrp } = targets();
    const argv = [SCRIPT, url, vrp.resolve.join(','), vrp.caFile, mode, JSON.stringify(ARGS), authorization ?? ''];
    const { stdout } = await promisify(execFile)(PYTHON as string, argv, { timeout: 60_000 });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as PythonRun;
  }

  describe.each(['node', 'tenant', 'proxy'] as const)('against %s', (name) => {
    it.each([
      ['auto', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ])(
      'mode %s speaks %s: lists and calls the tool, the offer and the receipt verify, guests "2" is invalid_guests',
      async (mode, revision) => {
        const endpoint = targets().endpoint(name);
        const run = await python(endpoint, mode);
        expect(run.protocol_version).toBe(revision);
        expect(run.tools).toEqual([BOUND_TOOL_NAME]);
        expect(run.result.isError).toBeFalsy();
        // The node signed the offer and the receipt; through the proxy both arrive as the node sent them.
        const { domain } = endpoint;
        const { fetch } = targets();
        const cache = new JwksCache({ fetch });
        const check = await checkMcpCallReceipt({
          callResult: run.result,
          sentCall: { tool: BOUND_TOOL_NAME, arguments: ARGS },
          envelope: run.result.structuredContent,
          surfaceHost: domain,
          resolveJwks: createReceiptJwksResolver({ issuerDomain: domain, cache }),
          resolveSignerJwks: createSignerJwksResolver({ fetch, cache }),
          now: Date.now(),
        });
        expect(check).toMatchObject({ receipt_present: true, verified: true });
        expect(run.guests_as_text.isError).toBe(true);
        expect(run.guests_as_text.content[0]?.text).toContain('invalid_guests');
      },
      90_000,
    );
  });
});
