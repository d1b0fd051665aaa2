/** The proxy's tool pins on the gate store, for the `tools` verbs and `report`. */
import { visibleEscapes } from '@vrpkit/core';
import type { ProxyTables } from '@vrpkit/gate';
import { CliError, usage } from '../../../errors.js';
import { run } from '../../../io.js';
import { closing, type GateStoreOptions, openStore } from '../options.js';

/** Open the store's proxy tables, run, close; errors are reported as every command reports them. */
export function withPins(o: GateStoreOptions, fn: (pins: ProxyTables) => Promise<void>): Promise<void> {
  return run(o.json, () => closing(openStore(o, false), (store) => fn(store.proxy)));
}

/** The server to operate on: the one named, or the only one known. */
export function singleServer(rows: readonly { server_id: string }[], named: string | undefined): string {
  if (named) return named;
  const servers = [...new Set(rows.map((r) => r.server_id))];
  if (servers.length === 1) return servers[0]!;
  if (!servers.length) throw new CliError('unknown_tool', { what: 'tools' });
  throw usage(`tools of several servers are known; name one with --server (${visibleEscapes(servers.join(', '))})`);
}
