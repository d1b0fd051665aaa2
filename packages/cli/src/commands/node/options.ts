/** The options every `vrp node` verb shares (which node, `--json`) and the values several node verbs parse. */
import { readFileSync } from 'node:fs';
import { BACKUP_PASSPHRASE_ENV, DATABASE_URL_ENV, MAX_SERVE_WORKERS, type NodeStoreOptions } from '@vrpkit/node';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError } from '../../errors.js';
import { jsonOption, positiveInt } from '../../options.js';

/** What every `vrp node` verb is given: which node, and `--json`. */
export interface NodeOptions {
  dataDir: string;
  json?: boolean;
  databaseUrl?: string;
}

/**
 * The options every `vrp node` verb shares, declared once: which node (`--data-dir`,
 * `--database-url`) and `--json`. `help` overrides a description where a command means more.
 */
export function nodeOptions(c: Command, help: { dataDir?: string; json?: string } = {}): Command {
  return c
    .requiredOption('--data-dir <dir>', help.dataDir ?? 'node data directory')
    .option(
      '--database-url <url>',
      `PostgreSQL store URL (postgres://…[?schema=name]); default: ${DATABASE_URL_ENV} or the SQLite file in the data directory`,
    )
    .addOption(jsonOption(help.json));
}

/** The node a verb's parsed options name, as every admin operation takes it. */
export function storeOptions(o: NodeOptions): NodeStoreOptions {
  return { dataDir: o.dataDir, ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}) };
}

/** `--workers N` of `vrp node serve` and `vrp platform serve`: 1 to MAX_SERVE_WORKERS processes. */
export function workerCount(v: string): number {
  const n = positiveInt(v);
  if (n > MAX_SERVE_WORKERS) throw new InvalidArgumentError(`at most ${MAX_SERVE_WORKERS} workers`);
  return n;
}

/** `--passphrase-file` of `vrp node backup` and `restore`. */
export function passphraseOption(): Option {
  return new Option('--passphrase-file <file>', `file holding the passphrase (default: ${BACKUP_PASSPHRASE_ENV})`);
}

/** The backup passphrase: the file's content without its final newline, else the environment variable, else empty (refused). */
export function backupPassphrase(file: string | undefined): string {
  if (file === undefined) return process.env[BACKUP_PASSPHRASE_ENV] ?? '';
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (cause) {
    throw new CliError('passphrase_unreadable', { file, reason: (cause as NodeJS.ErrnoException).code ?? 'error' });
  }
}
