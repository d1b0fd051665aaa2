import { initNode } from '@vrpkit/node';
import { type Command, Option } from 'commander';
import { CLI_CODES, EXIT_USAGE } from '../../errors.js';
import { printJson, run } from '../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from './options.js';

/** `vrp node init`: a new data directory with its store, property and first signing key. */
export function registerInit(node: Command): void {
  nodeOptions(
    node
      .command('init')
      .description('create a node data directory: store, property, first Ed25519 signing key')
      .requiredOption('--domain <domain>', 'the canonical domain (lowercase, no scheme or port), e.g. villa.example')
      .option('--property <file>', 'property description, JSON or YAML (see packages/node/examples/property.example.yaml)')
      .addOption(
        new Option('--sample', 'publish a sample property instead (Visby, SEK prices): for trying vrpkit, not for a real domain').conflicts(
          'property',
        ),
      ),
    { dataDir: 'data directory to create (must not exist or be empty)', json: 'print the result as JSON' },
  ).action((o: NodeOptions & { domain: string; property?: string; sample?: boolean }, cmd: Command) => {
    // A node signs its property under the host's domain: which property is never a default.
    if (!o.property && !o.sample)
      cmd.error(`error[property_required]: ${CLI_CODES.property_required.message}`, { exitCode: EXIT_USAGE, code: 'property_required' });
    return run(o.json, async () => {
      const r = await initNode({
        ...storeOptions(o),
        domain: o.domain,
        ...(o.property ? { propertyFile: o.property } : {}),
      });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `initialized ${r.canonical_domain} in ${r.data_dir} (property ${r.property_id}, signing key ${r.kid}, ${r.store} store)\n`,
        );
    });
  });
}
