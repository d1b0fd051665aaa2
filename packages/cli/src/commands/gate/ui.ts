import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { usage } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { type ApproverSignInOptions, approverSignInOptions, approversConfig } from './approvers.js';
import {
  approverOption,
  type GateStoreOptions,
  openStore,
  parseDuration,
  parseUsage,
  retainArgumentsOption,
  storeOption,
} from './options.js';

interface UiOptions extends GateStoreOptions, ApproverSignInOptions {
  listen: string;
  approver: string;
  retainArguments: string;
  policy?: string;
  policySet?: string;
}

/**
 * `vrp gate ui`: the approvals page on a gate store (docs/gateway.md "Approving an act"). A
 * person sees each escalated act with its full arguments and approves or rejects exactly the
 * digest shown; a proxy waiting on the same store sees the decision within its poll interval.
 */
export function registerUi(gate: Command, clock: Clock): void {
  storeOption(
    approverSignInOptions(
      gate
        .command('ui')
        .description('serve the approvals page for a gate store (URL and token printed once on stderr; --json prints them on stdout)')
        .option('--listen <host:port>', 'loopback address of the page (port 0 picks a free one)', '127.0.0.1:8932')
        .addOption(approverOption('recorded (as token:NAME) as the approver of decisions made on this page with the printed token'))
        .addOption(retainArgumentsOption()),
    )
      .option(
        '--policy <file>',
        "the proxies' policy: its approval.self_approval says whether an approver may approve their own act (default: never)",
      )
      .option('--policy-set <file>', "the proxies' policy set (team mode): self-approval as the act principal's member says"),
  ).action((o: UiOptions) =>
    run(o.json, async () => {
      // Loaded here only: the page needs hono, the other `vrp` commands do not.
      const [{ parseListen, loadPolicySet }, { startApprovalsUi }, { loadPolicy, selfApprovalRule }] = await Promise.all([
        import('@vrpkit/gate/proxy'),
        import('@vrpkit/gate/ui'),
        import('@vrpkit/gate'),
      ]);
      const listen = parseUsage(() => parseListen(o.listen));
      const retainArgumentsMs = parseUsage(() => parseDuration(o.retainArguments, '--retain-arguments'));
      if (o.policy && o.policySet) throw usage('give at most one of --policy or --policy-set');
      const approvers = await approversConfig(o);
      const selfApproval = selfApprovalRule(
        o.policy ? loadPolicy(o.policy) : undefined,
        o.policySet ? loadPolicySet(o.policySet) : undefined,
      );
      const store = await openStore(o, false);
      let ui: Awaited<ReturnType<typeof startApprovalsUi>>;
      try {
        ui = await startApprovalsUi({
          store,
          listen,
          approver: o.approver,
          ...(approvers ? { approvers } : {}),
          selfApproval,
          retainArgumentsMs,
          clock,
          onDecision: (fields) =>
            process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), event: 'decision', ...fields })}\n`),
        });
      } catch (e) {
        await store.close();
        throw e;
      }
      // The token is printed this once (like a notebook server's); whoever holds it can decide.
      // Known approvers sign in instead: no token exists then.
      const open = ui.token ? `${ui.url}?token=${ui.token}` : ui.url;
      if (o.json) printJson({ url: ui.url, ...(ui.token ? { token: ui.token } : {}), open });
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
