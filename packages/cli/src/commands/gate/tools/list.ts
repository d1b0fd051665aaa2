import { visibleEscapes } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson } from '../../../io.js';
import { type GateStoreOptions, storeOption } from '../options.js';
import { withPins } from './pins.js';

/** `vrp gate tools list`: the tools the proxies have seen, with their definition digest and pin state. */
export function registerList(tools: Command): void {
  storeOption(
    tools
      .command('list')
      .description('tools the proxies have seen, with their definition digest and pin state')
      .option('--server <server-id>', 'only this server identity'),
  ).action((o: GateStoreOptions & { server?: string }) =>
    withPins(o, async (t) => {
      const rows = (await t.listPins(o.server)).map((r) => ({
        server_id: r.server_id,
        tool: r.tool_name,
        state: r.pinned_digest === null ? 'unpinned' : r.pinned_digest === r.seen_digest ? 'pinned' : 'changed',
        seen_digest: r.seen_digest,
        pinned_digest: r.pinned_digest,
        pinned_by: r.pinned_by,
        definition: JSON.parse(r.seen_definition) as Record<string, unknown>,
        server_info: r.server_info ? (JSON.parse(r.server_info) as Record<string, unknown>) : null,
        seen_at: new Date(r.seen_at).toISOString(),
      }));
      if (o.json) return printJson(rows);
      if (!rows.length) return void process.stdout.write('no tools seen yet: start `vrp gate proxy` once, or call tools/list through it\n');
      for (const r of rows) {
        // Names and descriptions are the downstream server's text: escaped, never raw, on a terminal.
        const description = typeof r.definition.description === 'string' ? r.definition.description.split('\n')[0]!.slice(0, 100) : '';
        process.stdout.write(
          `${r.state.padEnd(8)}  ${visibleEscapes(r.tool)}  digest=${r.seen_digest}  server=${visibleEscapes(r.server_id)}\n          ${visibleEscapes(description)}\n`,
        );
      }
    }),
  );
}
