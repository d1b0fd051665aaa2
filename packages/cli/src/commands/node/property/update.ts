import { updateProperty } from '@vrpkit/node';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

/** `vrp node property update`: replace the property description, validated first, in one transaction. */
export function registerUpdate(property: Command): void {
  nodeOptions(
    property
      .command('update')
      .description('replace the property description of an existing node (validated first, one transaction)')
      .requiredOption('--file <file>', 'property description, JSON or YAML'),
  ).action((o: NodeOptions & { file: string }) =>
    run(o.json, async () => {
      const r = await updateProperty({ ...storeOptions(o), propertyFile: o.file });
      if (o.json) printJson(r);
      else process.stdout.write(`updated ${r.property_id} on ${r.canonical_domain}; the next offer uses it\n`);
    }),
  );
}
