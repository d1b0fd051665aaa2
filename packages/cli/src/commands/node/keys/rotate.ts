import { MAX_PUBLISH_AHEAD_SECONDS, rotateKey } from '@vrpkit/node';
import { type Command, InvalidArgumentError } from 'commander';
import { printJson, run } from '../../../io.js';
import { type NodeOptions, nodeOptions, storeOptions } from '../options.js';

function publishAhead(v: string): number {
  if (!/^\d{1,6}$/.test(v) || Number(v) > MAX_PUBLISH_AHEAD_SECONDS)
    throw new InvalidArgumentError(`a whole number of seconds from 0 to ${MAX_PUBLISH_AHEAD_SECONDS}`);
  return Number(v);
}

/** `vrp node keys rotate`: a new signing key; the old one stays published until its offers expire. */
export function registerRotate(keys: Command): void {
  nodeOptions(
    keys
      .command('rotate')
      .description('publish a new key and sign with it; the old key stays published until its offers expire')
      .option(
        '--publish-ahead <seconds>',
        `publish the new key now but sign with it only after SECONDS (0 to ${MAX_PUBLISH_AHEAD_SECONDS}), so agents' JWKS caches hold it before its first offer`,
        publishAhead,
        0,
      ),
  ).action((o: NodeOptions & { publishAhead: number }) =>
    run(o.json, async () => {
      const r = await rotateKey({ ...storeOptions(o), publishAheadSeconds: o.publishAhead });
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `${o.publishAhead > 0 ? `published key ${r.kid}; it signs from ${r.activates_at}` : `active key ${r.kid}`}${r.retired.length ? `; retired ${r.retired.join(', ')} (published until ${r.retain_until})` : ''}\n`,
        );
    }),
  );
}
