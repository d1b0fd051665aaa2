/**
 * The proxy SIGKILLed in the middle of an allowed consequential call, again and again: between
 * consume and the downstream call (`VRP_GATE_PROXY_FAULT=after-consume`) and after the downstream
 * answered, before the result is journaled (`after-downstream-call`). Each restarted proxy first
 * retries the call that was cut off, then makes the next one and is killed in its turn. The
 * downstream appends every effect to a file: across every kill and restart each act has at most
 * one effect, exactly the ones the kill point allows (Tool-Use Binding draft, retries: "never a
 * second invoke"; an unknown outcome is denied EF_EFFECT_RESULT_UNKNOWN, not run again).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { agentOverStdio, errorOf, fakeServer, removeTmpDirs, tmp, vrpOk } from './support/gate-proxy.js';

afterAll(removeTmpDirs);

const KILLS = 20;
const POINTS = ['after-consume', 'after-downstream-call'] as const;

describe('vrp gate proxy killed between consume and the downstream call, and after it', () => {
  it(`runs each act's effect at most once across ${KILLS} SIGKILLs and restarts`, { timeout: 600_000 }, async () => {
    const dir = tmp();
    const store = join(dir, 'gate.db');
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
    const args = ['--policy', policy, '--store', store, '--name', 'notes', '--', process.execPath, fakeServer];
    const env = { FAKE_EFFECTS_FILE: effects, FAKE_DESCRIPTION_FILE: join(dir, 'd.txt') };
    const write = (text: string) => ({ name: 'note_write', arguments: { text } });
    const effectsOf = (text: string) =>
      readFileSync(effects, 'utf8')
        .split('\n')
        .filter((l) => l === `wrote ${text}`).length;
    const journal = async () =>
      (JSON.parse(await vrpOk(['gate', 'journal', '--db', store, '--json'])) as { state: string }[]).map((j) => j.state).sort();

    for (let i = 0; i < KILLS; i++) {
      const point = POINTS[i % 2]!;
      const agent = await agentOverStdio(args, { ...env, VRP_GATE_PROXY_FAULT: point });
      try {
        await expect.poll(agent.logs).toMatch(new RegExp(`"event":"fault_injection".*${point}`));
        if (i === 0) {
          await agent.client.listTools();
          await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);
        } else {
          // The restarted proxy recovered the act cut off by the last kill: its retry is refused, not run.
          const retry = (await agent.client.callTool(write(`act-${i - 1}`))) as CallToolResult;
          expect(errorOf(retry)).toMatchObject({ code: 'EF_EFFECT_RESULT_UNKNOWN', invoked: false });
        }
        // The proxy dies in this call: the agent sees its connection close, never a result.
        await expect(agent.client.callTool(write(`act-${i}`))).rejects.toThrow(/closed/i);
      } finally {
        await agent.client.close().catch(() => {});
      }
      expect(effectsOf(`act-${i}`), `act-${i} killed ${point}`).toBe(point === 'after-consume' ? 0 : 1);
      // The killed act's journal row is where the kill left it (INVOKED in both windows: the mark commits with the
      // consume, before the downstream call); the earlier ones were recovered as unknown.
      expect(await journal()).toEqual([...Array<string>(i).fill('EFFECT_RESULT_UNKNOWN'), 'INVOKED'].sort());
    }

    // A proxy without the fault: the last cut-off act is refused, a new act runs once, and its replay is refused.
    const agent = await agentOverStdio(args, env);
    try {
      expect(errorOf((await agent.client.callTool(write(`act-${KILLS - 1}`))) as CallToolResult).code).toBe('EF_EFFECT_RESULT_UNKNOWN');
      expect(((await agent.client.callTool(write('after'))) as CallToolResult).isError).toBeFalsy();
      expect(errorOf((await agent.client.callTool(write('after'))) as CallToolResult).code).toBe('EF_005');
    } finally {
      await agent.client.close();
    }
    for (let i = 0; i < KILLS; i++) expect(effectsOf(`act-${i}`)).toBe(i % 2 === 0 ? 0 : 1);
    expect(effectsOf('after')).toBe(1);
    // Every call the downstream received had its effect: no call reached it twice.
    const lines = readFileSync(effects, 'utf8').split('\n').filter(Boolean);
    expect(lines.filter((l) => l === 'call note_write').length).toBe(KILLS / 2 + 1);
  });
});
