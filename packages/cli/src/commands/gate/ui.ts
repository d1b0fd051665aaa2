import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson, run } from '../../io.js';
import {
  approverOption,
  type GateStoreOptions,
  openStore,
  parseDuration,
  parseUsage,
  retainArgumentsOption,
  storeOption,
} from './options.js';

/**
 * `vrp gate ui`: the approvals page on a gate store (docs/gateway.md "Approving an act"). A
 * person sees each escalated act with its full arguments and approves or rejects exactly the
 * digest shown; a proxy waiting on the same store sees the decision within its poll interval.
 */
export function registerUi(gate: Command, clock: Clock): void {
  storeOption(
    gate
      .command('ui')
      .description('serve the approvals page for a gate store (URL and token printed once on stderr; --json prints them on stdout)')
      .option('--listen <host:port>', 'loopback address of the page (port 0 picks a free one)', '127.0.0.1:8932')
      .addOption(approverOption('recorded as the approver of decisions made on this page'))
      .addOption(retainArgumentsOption()),
  ).action((o: GateStoreOptions & { listen: string; approver: string; retainArguments: string }) =>
    run(o.json, async () => {
      // Loaded here only: the page needs hono, the other `vrp` commands do not.
      const [{ parseListen }, { startApprovalsUi }] = await Promise.all([import('@vrpkit/gate/proxy'), import('@vrpkit/gate/ui')]);
      const listen = parseUsage(() => parseListen(o.listen));
      const retainArgumentsMs = parseUsage(() => parseDuration(o.retainArguments, '--retain-arguments'));
      const store = await openStore(o, false);
      let ui: Awaited<ReturnType<typeof startApprovalsUi>>;
      try {
        ui = await startApprovalsUi({
          store,
          listen,
          approver: o.approver,
          retainArgumentsMs,
          clock,
          onDecision: (fields) =>
            process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), event: 'decision', ...fields })}\n`),
        });
      } catch (e) {
        await store.close();
        throw e;
      }
      const open = `${ui.url}?token=${ui.token}`;
      // The token is printed this once (like a notebook server's); whoever holds it can decide.
      if (o.json) printJson({ url: ui.url, token: ui.token, open });
      else process.stderr.write(`approvals page: ${open}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await ui.close();
      await store.close();
    }),
  );
}
