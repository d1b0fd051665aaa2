import { visibleEscapes } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson } from '../../../io.js';
import { type GateStoreOptions, storeOption } from '../options.js';
import { singleServer, withPins } from './pins.js';

/** `vrp gate tools unpin TOOLS…`: the tools are hidden and refused until pinned again. */
export function registerUnpin(tools: Command): void {
  storeOption(
    tools
      .command('unpin')
      .description('remove pins: the tools are hidden and refused until pinned again')
      .argument('<tools...>', 'tool names')
      .option('--server <server-id>', 'the server identity (required when tools of several servers are known)'),
  ).action((names: string[], o: GateStoreOptions & { server?: string }) =>
    withPins(o, async (t) => {
      const server = singleServer(await t.listPins(o.server), o.server);
      const out = [];
      for (const name of names) out.push({ server_id: server, tool: name, unpinned: await t.unpin(server, name) });
      if (o.json) return printJson(out);
      for (const u of out) process.stdout.write(`${u.unpinned ? 'unpinned' : 'was not pinned:'} ${visibleEscapes(u.tool)}\n`);
    }),
  );
}
