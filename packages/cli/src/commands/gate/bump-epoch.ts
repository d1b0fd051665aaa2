import type { Clock } from '@vrpkit/core';
import type { PolicyState } from '@vrpkit/gate';
import { Argument, type Command } from 'commander';
import { printJson } from '../../io.js';
import { type StoreChoiceOptions, storeChoiceOptions, withChosenStore } from './options.js';

/** `vrp gate bump-epoch policy|authority|revocation`: every authority issued before it is refused at enforce. */
export function registerBumpEpoch(gate: Command, clock: Clock): void {
  storeChoiceOptions(
    gate
      .command('bump-epoch')
      .description('bump an epoch: every authority issued before it is refused at enforce')
      .addArgument(new Argument('<epoch>', 'which epoch').choices(['policy', 'authority', 'revocation'])),
  ).action((epoch: 'policy' | 'authority' | 'revocation', o: StoreChoiceOptions) =>
    withChosenStore(o, async (store) => {
      const state = await store.epochs.bump(`${epoch}_epoch` as keyof PolicyState, clock.now());
      if (o.json) printJson(state);
      else
        process.stdout.write(
          `policy_epoch=${state.policy_epoch} authority_epoch=${state.authority_epoch} revocation_epoch=${state.revocation_epoch}\n`,
        );
    }),
  );
}
