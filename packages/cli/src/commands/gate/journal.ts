import { visibleEscapes } from '@vrpkit/core';
import { type JournalState, journalEntryView } from '@vrpkit/gate';
import { type Command, Option } from 'commander';
import { printJson } from '../../io.js';
import { rowLimit, type StoreChoiceOptions, storeChoiceOptions, withChosenStore } from './options.js';

/** `vrp gate journal`: the dispatch journal, newest first; digests only, never arguments. */
export function registerJournal(gate: Command): void {
  storeChoiceOptions(
    gate
      .command('journal')
      .description('show the dispatch journal (consumed → invoked → result), newest first; digests only, never arguments')
      .addOption(
        new Option('--state <state>', 'only rows in this state').choices([
          'CONSUMED',
          'INVOKED',
          'EFFECTUATED',
          'FAILED',
          'EFFECT_RESULT_UNKNOWN',
          'REFUSED',
        ]),
      )
      .option('--limit <n>', 'at most this many rows', rowLimit, 100),
  ).action((o: StoreChoiceOptions & { state?: JournalState; limit: number }) =>
    withChosenStore(o, async (store) => {
      const rows = (await store.journal.list({ limit: o.limit, ...(o.state ? { state: o.state } : {}) })).map(journalEntryView);
      if (o.json) return printJson(rows);
      if (!rows.length) return void process.stdout.write('journal is empty\n');
      for (const r of rows)
        process.stdout.write(
          `${r.consumed_at}  ${r.state.padEnd(21)}  ${r.candidate_act_id}  ${visibleEscapes(r.tool_id)}  ${r.authority_id}${r.error_code ? `  error=${r.error_code}` : ''}\n`,
        );
    }),
  );
}
