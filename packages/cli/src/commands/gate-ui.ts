import { type Clock, systemClock } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson, run } from '../io.js';
import { openStore, parseUsage, type StoreOpts, storeOption } from './gate-proxy.js';

/**
 * `vrp gate ui`: the approvals page on a gate store (docs/gateway.md "Approving an act"). A
 * person sees each escalated act with its full arguments and approves or rejects exactly the
 * digest shown; a proxy waiting on the same store sees the decision within its poll interval.
 */
export function registerGateUiCommand(gate: Command, clock: Clock = systemClock): void {
  storeOption(
    gate
      .command('ui')
      .description('serve the approvals page for a gate store (URL and token printed once on stderr; --json prints them on stdout)')
      .option('--listen <host:port>', 'loopback address of the page (port 0 picks a free one)', '127.0.0.1:8932')
      .option('--approver <name>', 'recorded as the approver of decisions made on this page', process.env.USER ?? 'approvals-page')
      .option(
        '--retain-arguments <duration>',
        'keep the arguments of escalated acts this long after the decision (30m, 24h, 7d), then purge them',
        '7d',
      ),
  ).action((o: StoreOpts & { listen: string; approver: string; retainArguments: string }) =>
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

const UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `2m`, `24h`, `7d`, or a bare number in `bareUnit`; milliseconds. Throws RangeError with the flag's name. */
export function parseDuration(v: string, flag: string, bareUnit?: keyof typeof UNITS): number {
  const m = /^(\d{1,7})([smhd])?$/.exec(v.trim());
  const unit = (m?.[2] ?? bareUnit) as keyof typeof UNITS | undefined;
  if (!m || !unit) throw new RangeError(`${flag} must be a duration such as 90s, 30m, 24h or 7d, got ${v}`);
  return Number(m[1]) * UNITS[unit];
}

/** `--notify-url`: https only (the notice names acts and links the page). */
export function parseNotifyUrl(v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new RangeError(`--notify-url is not a URL: ${v}`);
  }
  if (url.protocol !== 'https:') throw new RangeError(`--notify-url must be https://, got ${url.protocol}`);
  return url.toString();
}
