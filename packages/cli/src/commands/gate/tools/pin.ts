import type { Clock } from '@vrpkit/core';
import { visibleEscapes } from '@vrpkit/core';
import type { Command } from 'commander';
import { CliError, usage } from '../../../errors.js';
import { printJson } from '../../../io.js';
import { type GateStoreOptions, storeOption } from '../options.js';
import { singleServer, withPins } from './pins.js';

type PinOptions = GateStoreOptions & { all?: boolean; server?: string; digest?: string; by: string };

/** `vrp gate tools pin TOOLS… | --all`: pin the definitions as last seen (reviewed with `tools list --json` first). */
export function registerPin(tools: Command, clock: Clock): void {
  storeOption(
    tools
      .command('pin')
      .description('pin the definition of these tools as last seen (review it with `tools list --json` first)')
      .argument('[tools...]', 'tool names')
      .option('--all', 'every tool of the server that is not pinned to its current definition')
      .option('--server <server-id>', 'the server identity (required when tools of several servers are known)')
      .option('--digest <digest>', 'pin only if the definition seen still has this digest (the one you reviewed); one tool only')
      .option('--by <name>', 'who pins (recorded)', process.env.USER ?? 'cli'),
  ).action((names: string[], o: PinOptions) =>
    withPins(o, async (t) => {
      if (!o.all === !names.length) throw usage('name the tools to pin, or give --all');
      if (o.digest !== undefined && names.length !== 1) throw usage('--digest pins exactly one tool');
      const rows = await t.listPins(o.server);
      const server = singleServer(rows, o.server);
      const targets = o.all
        ? rows.filter((r) => r.server_id === server && r.pinned_digest !== r.seen_digest).map((r) => r.tool_name)
        : names;
      const out = [];
      for (const name of targets) {
        const r = await t.pin(server, name, { by: o.by, now: clock.now(), ...(o.digest !== undefined ? { digest: o.digest } : {}) });
        if (!r.pinned && r.reason === 'unknown_tool')
          throw new CliError('unknown_tool', { what: `tool ${visibleEscapes(name)} for server ${visibleEscapes(server)}` });
        if (!r.pinned)
          throw new CliError('digest_mismatch', { tool: visibleEscapes(name), seen: `${r.row?.seen_digest}`, reviewed: `${o.digest}` });
        out.push({ server_id: server, tool: name, pinned_digest: r.row.pinned_digest, pinned_by: r.row.pinned_by });
      }
      if (o.json) return printJson(out);
      for (const p of out)
        process.stdout.write(`pinned ${visibleEscapes(p.tool)} (digest ${p.pinned_digest}) for ${visibleEscapes(p.server_id)}\n`);
      if (!out.length) process.stdout.write('nothing to pin\n');
    }),
  );
}
