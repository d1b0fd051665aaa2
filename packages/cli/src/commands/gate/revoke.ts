import type { Clock } from '@vrpkit/core';
import type { Command } from 'commander';
import { CliError } from '../../errors.js';
import { printJson } from '../../io.js';
import { type StoreChoiceOptions, storeChoiceOptions, withChosenStore } from './options.js';

/** `vrp gate revoke AUTHORITY`: one outstanding authority; enforce then refuses it with EF_REVOKED. */
export function registerRevoke(gate: Command, clock: Clock): void {
  storeChoiceOptions(
    gate
      .command('revoke')
      .description('revoke one outstanding authority (enforce then refuses it with EF_REVOKED)')
      .argument('<authority-id>'),
  ).action((authorityId: string, o: StoreChoiceOptions) =>
    withChosenStore(o, async (store) => {
      if (!(await store.ledger.revoke(authorityId, clock.now()))) throw new CliError('not_revocable', { authority: authorityId });
      if (o.json) printJson({ authority_id: authorityId, state: 'REVOKED' });
      else process.stdout.write(`revoked ${authorityId}\n`);
    }),
  );
}
