/**
 * A downstream MCP server that names a tool with terminal escapes (so that, printed raw, it
 * reads as `read_file`) or puts escapes and bidi overrides in a description: the proxy refuses
 * the name outright (not recorded, listed or pinnable; every call denied with
 * EF_TOOL_NOT_PINNED; logged by digest only), and every human-readable `vrp gate` line shows
 * the server's text with control and bidi characters as visible `\u{XXXX}` escapes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalSha256Base64url, sha256Base64url, visibleEscapes } from '@vrpkit/core';
import { openSqliteStore } from '@vrpkit/gate';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentOverStdio, errorOf, fakeServer, removeTmpDirs, SPAWN, tmp, vrpOk } from './support/gate-proxy.js';

afterAll(removeTmpDirs);

/** The name the fake server offers with FAKE_HOSTILE_NAMES (support/fake-mcp-server.mjs). */
const HOSTILE_NAME = 'send\x1b[2K\rread_file\nFAKE LINE';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for raw control characters
const RAW_CONTROL_OR_BIDI = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('visibleEscapes', () => {
  it('shows C0/C1 controls, DEL and bidi overrides/isolates as visible escapes and leaves other text alone', () => {
    expect(visibleEscapes(HOSTILE_NAME)).toBe('send\\u{001B}[2K\\u{000D}read_file\\u{000A}FAKE LINE');
    expect(visibleEscapes('a\x7f\x85\u202a\u202e\u2066\u2069b')).toBe('a\\u{007F}\\u{0085}\\u{202A}\\u{202E}\\u{2066}\\u{2069}b');
    expect(visibleEscapes('Réservé — 東京 ✓ note_write')).toBe('Réservé — 東京 ✓ note_write');
  });
});

describe('vrp gate proxy in front of a server with hostile tool names and descriptions', SPAWN, () => {
  const dir = tmp();
  const store = join(dir, 'gate.db');
  const effects = join(dir, 'effects.log');
  let agent: Awaited<ReturnType<typeof agentOverStdio>>;

  beforeAll(async () => {
    writeFileSync(effects, '');
    writeFileSync(join(dir, 'd.txt'), 'Write a note.');
    writeFileSync(
      join(dir, 'policy.json'),
      JSON.stringify({
        version: 1,
        policy_id: 'notes',
        informative_defaults: false,
        tools: [{ tool: '*', consequence_class: 'INFORMATIONAL' }],
        hot_envelopes: [{ name: 'all', consequence_classes: ['INFORMATIONAL'] }],
      }),
    );
    agent = await agentOverStdio(
      ['--policy', join(dir, 'policy.json'), '--store', store, '--name', 'notes', '--', process.execPath, fakeServer],
      { FAKE_EFFECTS_FILE: effects, FAKE_DESCRIPTION_FILE: join(dir, 'd.txt'), FAKE_HOSTILE_NAMES: '1' },
    );
  }, SPAWN.timeout);
  afterAll(async () => {
    await agent?.client.close();
  });

  it('refuses a tool name outside the MCP pattern: never recorded, listed or pinned, every call denied with EF_TOOL_NOT_PINNED, logged by digest only', async () => {
    expect((await agent.client.listTools()).tools).toEqual([]);
    const seen = JSON.parse(await vrpOk(['gate', 'tools', 'list', '--store', store, '--json'])) as { tool: string }[];
    expect(seen.map((t) => t.tool).sort()).toEqual(['crash', 'hang', 'note_read', 'note_write']);

    await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);
    expect((await agent.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['crash', 'hang', 'note_read', 'note_write']);

    const denied = (await agent.client.callTool({ name: HOSTILE_NAME, arguments: {} })) as CallToolResult;
    expect(errorOf(denied)).toMatchObject({ code: 'EF_TOOL_NOT_PINNED', invoked: false });
    expect(readFileSync(effects, 'utf8')).toBe('');

    const refused = await runVrpInProcess(['gate', 'tools', 'pin', HOSTILE_NAME, '--store', store, '--json']);
    expect(refused.code).toBe(1);
    expect((JSON.parse(refused.stdout) as { error: { code: string } }).error.code).toBe('unknown_tool');

    await expect.poll(agent.logs).toMatch(/"event":"tool_name_refused".*"call":true/);
    const refusals = agent
      .logs()
      .split('\n')
      .filter((l) => l.includes('"tool_name_refused"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(new Set(refusals.map((r) => r.name_digest))).toEqual(new Set([sha256Base64url(HOSTILE_NAME)]));
    expect(agent.logs()).not.toContain('FAKE LINE');
  });

  it('prints downstream descriptions in `vrp gate tools list` with control and bidi characters escaped', async () => {
    const out = await vrpOk(['gate', 'tools', 'list', '--store', store]);
    expect(out).not.toMatch(RAW_CONTROL_OR_BIDI);
    expect(out).toContain('desc\\u{001B}]0;title\\u{0007}\\u{202E}evil');
  });

  it('escapes a hostile name recorded in an older store in `tools list` and `report`; the proxy still refuses it', async () => {
    const seen = JSON.parse(await vrpOk(['gate', 'tools', 'list', '--store', store, '--json'])) as { server_id: string }[];
    const serverId = seen[0]!.server_id;
    const s = await openSqliteStore(store);
    try {
      const t = s.proxy;
      const definition = { name: HOSTILE_NAME, description: 'desc\x1b]0;title\x07' };
      const now = Date.now();
      await t.recordSeen(
        [
          {
            server_id: serverId,
            tool_name: HOSTILE_NAME,
            digest: canonicalSha256Base64url(definition),
            definition: JSON.stringify(definition),
            server_info: null,
          },
        ],
        now,
      );
      await t.recordObservation({
        recorded_at: now,
        mode: 'enforce',
        server_id: serverId,
        tool_name: HOSTILE_NAME,
        consequence_class: 'INFORMATIONAL',
        code: 'EF_TOOL_NOT_PINNED',
        candidate_act_id: null,
        arguments_digest: null,
      });
    } finally {
      await s.close();
    }
    const list = await vrpOk(['gate', 'tools', 'list', '--store', store]);
    expect(list).not.toMatch(RAW_CONTROL_OR_BIDI);
    expect(list).toContain('send\\u{001B}[2K\\u{000D}read_file\\u{000A}FAKE LINE');
    expect(list).not.toMatch(/^FAKE LINE/m);
    const report = await vrpOk(['gate', 'report', '--store', store, '--since', '1h']);
    expect(report).not.toMatch(RAW_CONTROL_OR_BIDI);
    expect(report).toContain('send\\u{001B}[2K\\u{000D}read_file\\u{000A}FAKE LINE');

    const pinAll = await runVrpInProcess(['gate', 'tools', 'pin', HOSTILE_NAME, '--store', store]);
    expect(pinAll.code).toBe(1);
    expect(pinAll.stderr).toMatch(/^error\[unknown_tool\]/);
    expect(pinAll.stderr).not.toMatch(RAW_CONTROL_OR_BIDI);
    expect((await agent.client.listTools()).tools.map((t) => t.name)).not.toContain(HOSTILE_NAME);
    const denied = (await agent.client.callTool({ name: HOSTILE_NAME, arguments: {} })) as CallToolResult;
    expect(errorOf(denied).code).toBe('EF_TOOL_NOT_PINNED');
    expect(readFileSync(effects, 'utf8')).toBe('');
  });
});
