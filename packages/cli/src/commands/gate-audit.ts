import { readFileSync } from 'node:fs';
import { type Clock, type Ed25519PublicJwk, VrpError } from '@vrpkit/core';
import { exportAudit, verifyAuditChain } from '@vrpkit/gate';
import type { Command } from 'commander';
import { printJson, run, usage } from '../io.js';
import { openStore, parseSince, type StoreOpts, storeOption } from './gate-proxy.js';

/**
 * `vrp gate audit verify|export`: check the store's hash-chained audit log (naming the first
 * bad entry and why) and stream its entries (docs/gateway.md "Audit log").
 */
export function registerGateAuditCommands(gate: Command, clock: Clock): void {
  const audit = gate.command('audit').description('the tamper-evident audit log of every gate decision: verify it, export it');

  storeOption(
    audit
      .command('verify')
      .description('walk the hash chain from its first entry; exit 0 when intact, else 1 naming the first bad entry and why')
      .option(
        '--jwks <file>',
        'trust only checkpoints signed by these public keys (a JWKS file); default: the key recorded with each checkpoint',
      ),
  ).action((o: StoreOpts & { jwks?: string }) =>
    run(o.json, async () => {
      const trustedKeys = o.jwks === undefined ? undefined : readJwks(o.jwks);
      const store = await openStore(o, false);
      try {
        const r = await verifyAuditChain(store, trustedKeys ? { trustedKeys } : {});
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
      } finally {
        await store.close();
      }
    }),
  );

  storeOption(
    audit
      .command('export')
      .description('stream audit entries in chain order, one JSON object per line (digests and codes only, never arguments)')
      .option('--since <when>', 'only entries since this time: a duration back from now (30m, 24h, 7d) or an ISO date')
      .option('--format <format>', 'output format (jsonl)', 'jsonl'),
  ).action((o: StoreOpts & { since?: string; format: string }) =>
    run(o.json, async () => {
      if (o.format !== 'jsonl') throw usage(`--format must be jsonl, got ${o.format}`);
      const since = o.since === undefined ? undefined : parseSince(o.since, clock.now());
      const store = await openStore(o, false);
      let n = 0;
      try {
        for await (const e of exportAudit(store, since === undefined ? {} : { since })) {
          n += 1;
          // Respect back-pressure: a slow reader (a pipe) holds the next page, not the whole log.
          if (!process.stdout.write(`${JSON.stringify(e)}\n`)) await new Promise((r) => process.stdout.once('drain', r));
        }
      } finally {
        await store.close();
      }
      if (!o.json) process.stderr.write(`exported ${n} entries\n`);
    }),
  );
}

function readJwks(file: string): Ed25519PublicJwk[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new VrpError('bad_jwks', `cannot read a JWKS from ${file}: ${(e as Error).message}`);
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new VrpError('bad_jwks', `${file} is not a JWKS with keys`);
  return keys as Ed25519PublicJwk[];
}
