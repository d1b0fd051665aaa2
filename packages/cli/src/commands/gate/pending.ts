import type { Clock } from '@vrpkit/core';
import { visibleEscapes } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson } from '../../io.js';
import { type StoreChoiceOptions, storeChoiceOptions, withChosenStore } from './options.js';
import { iso } from './time.js';

/** `vrp gate pending`: the escalated acts waiting for a person (digests only). */
export function registerPending(gate: Command, clock: Clock): void {
  storeChoiceOptions(gate.command('pending').description('list escalated acts waiting for a person (digests only)')).action(
    (o: StoreChoiceOptions) =>
      withChosenStore(o, async (store) => {
        const now = clock.now();
        const rows = (await store.escalations.list('PENDING')).filter((r) => r.expires_at > now);
        const out = rows.map((r) => {
          const act = JSON.parse(r.act_json);
          return {
            candidate_act_id: r.candidate_act_id,
            tool_id: act.tool?.tool_id,
            consequence_class: act.consequence_class,
            destination_id: act.destination?.destination_id ?? null,
            provenance: act.instruction_provenance?.source_type ?? 'unknown',
            arguments_digest: act.arguments_digest?.value,
            binding_digest: r.binding_digest,
            requested_at: iso(r.requested_at),
            expires_at: iso(r.expires_at),
          };
        });
        if (o.json) return printJson(out);
        if (!out.length) return void process.stdout.write('no pending escalations\n');
        for (const e of out)
          process.stdout.write(
            `${e.candidate_act_id}  ${visibleEscapes(`${e.tool_id}`)}  ${e.consequence_class}  dest=${visibleEscapes(`${e.destination_id ?? '-'}`)}  provenance=${visibleEscapes(`${e.provenance}`)}  args=${e.arguments_digest}  digest=${e.binding_digest}  expires ${e.expires_at}\n`,
          );
      }),
  );
}
