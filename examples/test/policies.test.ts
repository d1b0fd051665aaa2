/**
 * The gateway policies shipped in examples/policies load, and classify every tool the real
 * reference server lists (its installed version, over stdio with the official SDK `Client`) by
 * an explicit rule: what the server marks read-only is INFORMATIONAL (except get-env, a
 * disclosure of the environment that holds the proxy's credentials), everything else is a
 * consequential class. A server version that adds a tool fails here until the policy names it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadPolicy } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vrp-example-policies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers = [
  { policy: 'filesystem', pkg: 'server-filesystem', args: [dir], disclosures: [] as string[] },
  { policy: 'memory', pkg: 'server-memory', args: [], disclosures: [] },
  { policy: 'everything', pkg: 'server-everything', args: ['stdio'], disclosures: ['get-env'] },
];

describe.each(servers)('examples/policies/$policy.yaml', ({ policy, pkg, args, disclosures }) => {
  it(`classifies every tool of @modelcontextprotocol/${pkg} explicitly: reads informational, the rest consequential`, {
    timeout: 60_000,
  }, async () => {
    const p = loadPolicy(join(root, 'examples/policies', `${policy}.yaml`));
    const client = new Client({ name: 'policy-check', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(root, 'node_modules/@modelcontextprotocol', pkg, 'dist/index.js'), ...args],
        env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
        stderr: 'ignore',
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      for (const t of tools) {
        const cls = p.classify({ tool_id: t.name, function_id: t.name, tool_protocol: 'MCP', tool_endpoint: 'stdio:test' });
        // OTHER is the class of a tool no rule matched.
        expect(cls, t.name).not.toBe('OTHER');
        if (disclosures.includes(t.name)) expect(cls, t.name).toBe('DATA_DISCLOSURE');
        else if (t.annotations?.readOnlyHint === true) expect(cls, t.name).toBe('INFORMATIONAL');
        else expect(cls, t.name).not.toBe('INFORMATIONAL');
      }
    } finally {
      await client.close();
    }
  });
});
