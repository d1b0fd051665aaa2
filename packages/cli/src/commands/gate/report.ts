import type { Clock } from '@vrpkit/core';
import { visibleEscapes } from '@vrpkit/core';
import type { ProxyTables } from '@vrpkit/gate';
import type { Command } from 'commander';
import { printJson } from '../../io.js';
import { type GateStoreOptions, parseSince, storeOption } from './options.js';
import { withPins } from './tools/pins.js';

type ReportRow = { consequence_class: string; tool: string; code: string; would_have_denied: number; denied: number };

/** The denies since `since`, by consequence class, tool and code: observe mode's would-have-denied beside enforce mode's denied. */
async function pilotReport(t: ProxyTables, since: number) {
  const rows = new Map<string, ReportRow>();
  for (const c of await t.countObservations(since)) {
    const key = `${c.consequence_class}\u0000${c.tool_name}\u0000${c.code}`;
    const row = rows.get(key) ?? {
      consequence_class: c.consequence_class,
      tool: c.tool_name,
      code: c.code,
      would_have_denied: 0,
      denied: 0,
    };
    if (c.mode === 'observe') row.would_have_denied += c.count;
    else row.denied += c.count;
    rows.set(key, row);
  }
  return {
    since: new Date(since).toISOString(),
    rows: [...rows.values()],
    totals: {
      would_have_denied: [...rows.values()].reduce((n, r) => n + r.would_have_denied, 0),
      denied: [...rows.values()].reduce((n, r) => n + r.denied, 0),
    },
  };
}

/** The report as a table, columns padded to their widest cell. */
function reportTable(out: Awaited<ReturnType<typeof pilotReport>>): string {
  const table = [
    ['CLASS', 'TOOL', 'CODE', 'WOULD HAVE DENIED (observe)', 'DENIED (enforce)'],
    ...out.rows.map((r) => [r.consequence_class, visibleEscapes(r.tool), r.code, String(r.would_have_denied), String(r.denied)]),
    ['total', '', '', String(out.totals.would_have_denied), String(out.totals.denied)],
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const lines = table.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  return `since ${out.since}\n${lines.map((l) => `${l}\n`).join('')}`;
}

/** `vrp gate report`: the pilot metric, denies that would have been sends (observe) and denies (enforce). */
export function registerReport(gate: Command, clock: Clock): void {
  storeOption(
    gate
      .command('report')
      .description(
        'the pilot metric: denies that would have been sends (observe mode) and denies (enforce mode), by consequence class, tool and code',
      )
      .option('--since <when>', 'only since this time: a duration back from now (30m, 24h, 7d) or an ISO date', '7d'),
  ).action((o: GateStoreOptions & { since: string }) =>
    withPins(o, async (t) => {
      const out = await pilotReport(t, parseSince(o.since, clock.now()));
      if (o.json) return printJson(out);
      process.stdout.write(reportTable(out));
    }),
  );
}
