import { readFileSync } from 'node:fs';
import type { Ed25519PublicJwk } from '@vrpkit/core';
import { verifyAuditChain } from '@vrpkit/gate';
import type { Command } from 'commander';
import { CliError } from '../../../errors.js';
import { printJson, run } from '../../../io.js';
import { closing, type GateStoreOptions, openStore, storeOption } from '../options.js';

function readJwks(file: string): Ed25519PublicJwk[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError('bad_jwks', { file, reason: (e as Error).message });
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new CliError('bad_jwks', { file, reason: 'no keys' });
  return keys as Ed25519PublicJwk[];
}

/** `vrp gate audit verify`: walk the hash chain; exit 0 when intact, else 1 naming the first bad entry and why. */
export function registerVerify(audit: Command): void {
  storeOption(
    audit
      .command('verify')
      .description('walk the hash chain from its first entry; exit 0 when intact, else 1 naming the first bad entry and why')
      .option(
        '--jwks <file>',
        'trust only checkpoints signed by these public keys (a JWKS file); default: the key recorded with each checkpoint',
      ),
  ).action((o: GateStoreOptions & { jwks?: string }) =>
    run(o.json, async () => {
      const trustedKeys = o.jwks === undefined ? undefined : readJwks(o.jwks);
      await closing(openStore(o, false), async (store) => {
        const r = await verifyAuditChain(store.audit, trustedKeys ? { trustedKeys } : {});
        if (o.json) printJson(r);
        if (r.ok) {
          if (!o.json)
            process.stdout.write(
              `audit chain intact: ${r.entries} entries, head ${r.head.hash}, ${r.checkpoints} signed checkpoints (last at ${r.last_checkpoint_seq ?? 'none'})\n`,
            );
          return;
        }
        if (!o.json) process.stderr.write(`error[audit_${r.problem}]: entry ${r.seq} ${r.problem}: ${r.reason}\n`);
        process.exitCode = 1;
      });
    }),
  );
}
