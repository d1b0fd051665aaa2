import { readFileSync } from 'node:fs';
import { syncCalendar } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { positiveInt } from '../../../options.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node calendar sync`: import every feed; a failed feed marks the calendar unsafe (exit 1). */
export function registerSync(cal: Command): void {
  nodeOptions(
    cal
      .command('sync')
      .description('import every feed; a failed feed marks the calendar unsafe (offers become non-quoteable)')
      .option('--ca <file>', 'extra trusted CA certificate (PEM) for https feeds')
      .option('--timeout <ms>', 'per-feed deadline in milliseconds', positiveInt, 10_000),
  ).action((o: NodeOptions & { ca?: string; timeout: number }) =>
    run(o.json, async () => {
      const results = await syncCalendar({
        ...storeOptions(o),
        timeoutMs: o.timeout,
        ...(o.ca ? { ca: [readFileSync(o.ca, 'utf8')] } : {}),
      });
      if (o.json) printJson({ feeds: results });
      else
        for (const r of results)
          process.stdout.write(
            r.ok ? `${r.name}: ok, ${r.ranges} blocked ranges\n` : `${r.name}: FAILED error[${r.error?.code}]: ${r.error?.message}\n`,
          );
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    }),
  );
}
