import type { Clock } from '@vrpkit/core';
import { decideEscalation } from '@vrpkit/gate';
import type { Command } from 'commander';
import { CliError } from '../../errors.js';
import { printJson } from '../../io.js';
import { type StoreChoiceOptions, storeChoiceOptions, withChosenStore } from './options.js';
import { iso } from './time.js';

/** `vrp gate approve ACT [--reject]`: a person's decision on an escalated act, bound to the digest reviewed. */
export function registerApprove(gate: Command, clock: Clock): void {
  storeChoiceOptions(
    gate
      .command('approve')
      .description(
        'approve (or with --reject refuse) an escalated candidate act; the gate issues its authority when the host dispatches it again',
      )
      .argument('<act-id>', 'candidate_act_id of the pending escalation')
      .option(
        '--digest <binding-digest>',
        'the binding digest you reviewed (`vrp gate pending` shows it); the decision is refused unless the escalation is bound to exactly it',
      )
      .option('--approver <name>', 'who decides (recorded with the decision)', process.env.USER ?? 'cli')
      .option('--reject', 'refuse the act instead of approving it'),
  ).action((actId: string, o: StoreChoiceOptions & { approver: string; reject?: boolean; digest?: string }) =>
    withChosenStore(o, async (store) => {
      // The gate's one approval binding: the decision binds to the digest the person reviewed
      // (without --digest, to the row's immutable binding); another binding is EF_SCOPE_MISMATCH.
      const d = await decideEscalation(store.escalations, {
        candidateActId: actId,
        status: o.reject ? 'REJECTED' : 'APPROVED',
        approver: o.approver,
        now: clock.now(),
        ...(o.digest !== undefined ? { reviewedDigest: o.digest } : {}),
      });
      if (!d.ok && d.code === 'EF_002') throw new CliError('not_pending', { act: actId, state: 'not escalated' });
      if (!d.ok) throw new CliError('EF_SCOPE_MISMATCH', { act: actId, bound: `${d.escalation?.binding_digest}`, reviewed: `${o.digest}` });
      const row = d.escalation;
      if (!d.decided)
        throw new CliError('not_pending', {
          act: actId,
          state: `${row.status.toLowerCase()}${row.status === 'PENDING' ? ' but expired' : ''}`,
        });
      const out = {
        candidate_act_id: row.candidate_act_id,
        binding_digest: row.binding_digest,
        status: row.status,
        approver: row.approver,
        decided_at: iso(row.decided_at),
      };
      if (o.json) printJson(out);
      else process.stdout.write(`${row.status.toLowerCase()} ${row.candidate_act_id} (digest ${row.binding_digest}) by ${row.approver}\n`);
    }),
  );
}
