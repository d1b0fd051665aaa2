/**
 * Issue 36 defect 1, the gate proxy: `vrp gate proxy --store postgres://…` exited 1 when
 * PostgreSQL restarted (`Unhandled 'error' event … terminating connection due to administrator
 * command` from an idle pooled connection). Here the server ends exactly the proxy's connections
 * (`pg_terminate_backend` by the `application_name` its store URL sets) while its role may not log
 * in — a database that is away — then lets it log in again: the proxy stays up, refuses the call
 * made meanwhile without reaching the downstream, answers `tools/list` meanwhile with the gate's own
 * coded refusal (not the database's message, which names the role), and serves the next call by itself.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { afterAll, describe, expect, it } from 'vitest';
import { agentOverStdio, errorOf, fakeServer, removeTmpDirs, tmp, vrpOk } from './support/gate-proxy.js';

const pgs = pgTestSchemas('vrp gate proxy on PostgreSQL', 'the proxy surviving the loss of its PostgreSQL connections');
const applicationName = `vrp-gate-proxy-outage-${randomBytes(5).toString('hex')}`;

afterAll(removeTmpDirs);

describe.skipIf(!pgs)('vrp gate proxy --store postgres://… when PostgreSQL goes away and comes back', () => {
  it('stays up, refuses calls meanwhile (nothing reaches the downstream), then serves again by itself', { timeout: 120_000 }, async () => {
    const owned = await pgs!.ownedSchema('gate_proxy_outage');
    const { role, schema } = owned;
    const sql = (text: string) => pgs!.query(text);
    const url = new URL(owned.url);
    url.searchParams.set('schema', schema);
    url.searchParams.set('application_name', applicationName);
    const store = url.toString();
    const dir = tmp();
    const effects = join(dir, 'effects.log');
    const policy = join(dir, 'policy.json');
    writeFileSync(effects, '');
    writeFileSync(join(dir, 'd.txt'), 'Write a note.');
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        policy_id: 'notes',
        informative_defaults: false,
        tools: [{ tool: 'note_write', consequence_class: 'PERSISTENT_STATE_CHANGE' }],
        hot_envelopes: [{ name: 'notes', consequence_classes: ['PERSISTENT_STATE_CHANGE'], tools: ['note_write'] }],
        provenance_rules: [],
      }),
    );
    const env = { FAKE_EFFECTS_FILE: effects, FAKE_DESCRIPTION_FILE: join(dir, 'd.txt') };
    const agent = await agentOverStdio(['--policy', policy, '--store', store, '--name', 'notes', '--', process.execPath, fakeServer], env);
    const write = (text: string) => agent.client.callTool({ name: 'note_write', arguments: { text } }) as Promise<CallToolResult>;
    const effectsOf = (text: string) =>
      readFileSync(effects, 'utf8')
        .split('\n')
        .filter((l) => l === `wrote ${text}`).length;
    try {
      await agent.client.listTools();
      await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);
      expect((await write('before')).isError).toBeFalsy();
      expect(effectsOf('before')).toBe(1);

      await sql(`ALTER ROLE ${role} NOLOGIN`);
      await sql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = '${applicationName}'`,
      );
      // The ended connections' errors reach the proxy's idle pooled clients: on main it exits here.
      await new Promise((r) => setTimeout(r, 300));
      const away = await write('away');
      expect(away.isError).toBe(true);
      expect(errorOf(away)).toMatchObject({ invoked: false });
      expect(['EF_STORE_UNAVAILABLE', 'EF-060']).toContain(errorOf(away).code);
      expect(effectsOf('away')).toBe(0);
      // tools/list meanwhile: the gate's own coded refusal, never the database's message (it names the role).
      const listed = await agent.client.listTools().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(listed).toBeInstanceOf(McpError);
      expect(listed).toMatchObject({ code: ErrorCode.InternalError, data: { code: 'EF_STORE_UNAVAILABLE', invoked: false } });
      expect(JSON.stringify({ message: (listed as McpError).message, data: (listed as McpError).data })).not.toContain(role);
      // A call whose re-list (past the proxy's bounded interval) finds a changed definition the store cannot record: the store's code too.
      writeFileSync(join(dir, 'd.txt'), 'Write a note, changed.');
      await new Promise((r) => setTimeout(r, 1100));
      const changed = await write('changed');
      expect(errorOf(changed)).toMatchObject({ code: 'EF_STORE_UNAVAILABLE', invoked: false });
      expect(effectsOf('changed')).toBe(0);
      writeFileSync(join(dir, 'd.txt'), 'Write a note.');

      await sql(`ALTER ROLE ${role} LOGIN`);
      expect((await agent.client.listTools()).tools.map((t) => t.name)).toContain('note_write');
      expect((await write('after')).isError).toBeFalsy();
      expect(effectsOf('after')).toBe(1);
      expect(agent.logs()).not.toMatch(/Unhandled 'error' event/);
    } finally {
      await agent.client.close().catch(() => {});
      await sql(`ALTER ROLE ${role} LOGIN`).catch(() => {});
    }
  });
});
