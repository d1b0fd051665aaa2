/**
 * What `vrp gate audit verify` and `anchor` trust and require of a chain: the checkpoint keys
 * (`--jwks`), the checkpoint interval its gates sign at (`--checkpoint-every`), the anchors (`--anchor`).
 */
import { readFileSync } from 'node:fs';
import type { Ed25519PublicJwk } from '@vrpkit/core';
import { AUDIT_CHECKPOINT_EVERY, readAnchors, type VerifyAuditOptions } from '@vrpkit/gate';
import { type Command, InvalidArgumentError } from 'commander';
import { CliError } from '../../../errors.js';

export interface AuditTrustOptions {
  jwks?: string;
  checkpointEvery: number;
}

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

function wholeNumber(v: string): number {
  if (!/^\d{1,9}$/.test(v)) throw new InvalidArgumentError('must be a whole number (0: no checkpoint required)');
  return Number(v);
}

/** `--jwks FILE` and `--checkpoint-every N`. */
export function auditTrustOptions(c: Command): Command {
  return c
    .option(
      '--jwks <file>',
      'trust only checkpoints signed by these public keys (a JWKS file); default: the key recorded with each checkpoint',
    )
    .option(
      '--checkpoint-every <n>',
      'the interval the gates writing this chain sign checkpoints at (their auditCheckpointEvery): each window of n entries must hold one',
      wholeNumber,
      AUDIT_CHECKPOINT_EVERY,
    );
}

/** The verify options these flags (and an anchor file, if given) name. */
export function verifyOptionsOf(o: AuditTrustOptions, anchorFile?: string): VerifyAuditOptions {
  return {
    checkpointEvery: o.checkpointEvery,
    ...(o.jwks === undefined ? {} : { trustedKeys: readJwks(o.jwks) }),
    ...(anchorFile === undefined ? {} : { anchors: readAnchors(anchorFile) }),
  };
}
