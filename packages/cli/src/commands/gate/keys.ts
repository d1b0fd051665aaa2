import { chmodSync, writeFileSync } from 'node:fs';
import { generateEd25519Jwk, jwkThumbprint, publicJwkOf } from '@vrpkit/core';
import type { Command } from 'commander';
import { printJson, run } from '../../io.js';
import { jsonOption } from '../../options.js';

/** `vrp gate keys --out FILE`: the Ed25519 key the gate signs authority with (private JWK to the file, public JWKS to stdout). */
export function registerKeys(gate: Command): void {
  gate
    .command('keys')
    .description(
      'generate the Ed25519 key the gate signs authority with: the private JWK goes to --out (mode 0600), the public JWKS to stdout',
    )
    .requiredOption('--out <file>', 'where to write the private JWK (never printed)')
    .option('--kid <kid>', 'key id (default: the RFC 7638 thumbprint)')
    .addOption(jsonOption('machine-readable output (the public JWKS)'))
    .action((o: { out: string; kid?: string; json?: boolean }) =>
      run(o.json, async () => {
        const { privateJwk, publicJwk } = await generateEd25519Jwk();
        const kid = o.kid ?? (await jwkThumbprint(publicJwk));
        writeFileSync(o.out, `${JSON.stringify({ ...privateJwk, kid }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
        chmodSync(o.out, 0o600);
        const jwks = { keys: [publicJwkOf(privateJwk, kid)] };
        if (o.json) printJson(jwks);
        else process.stdout.write(`wrote private key ${o.out} (kid ${kid}); public JWKS:\n${JSON.stringify(jwks, null, 2)}\n`);
      }),
    );
}
