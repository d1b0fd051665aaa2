/** The options every `vrp platform` verb shares (which database and master key, `--json`) and the durations several parse. */

import { isVrpError } from '@vrpkit/core';
import { MASTER_KEY_ENV, PLATFORM_DATABASE_URL_ENV, PlatformStore, parseAdminListen } from '@vrpkit/platform';
import { type Command, InvalidArgumentError } from 'commander';
import { InputRefused } from '../../errors.js';
import { jsonOption } from '../../options.js';

/** What every `vrp platform` verb is given. */
export interface PlatformOptions {
  databaseUrl?: string;
  masterKeyFile?: string;
  json?: boolean;
}

/** The options every `vrp platform` verb shares: which database, which master key (`masterKey`), `--json`. */
export function platformOptions(c: Command, o: { masterKey?: boolean } = {}): Command {
  c.option('--database-url <url>', `platform database: postgres://…[?schema=name] or sqlite:PATH (default: ${PLATFORM_DATABASE_URL_ENV})`);
  if (o.masterKey)
    c.option('--master-key-file <file>', `file holding the 256-bit master key that seals tenant keys (default: ${MASTER_KEY_ENV})`);
  return c.addOption(jsonOption());
}

/** The platform's refusals of the database URL itself: the command line's fault, so exit 64 as every usage error (issue 36). */
const DATABASE_URL_REFUSALS: readonly string[] = ['database_url_required', 'invalid_database_url'];

/** Open the platform database for one command and close it afterwards, whatever happened. */
export async function withStore<T>(o: PlatformOptions, fn: (store: PlatformStore) => Promise<T>): Promise<T> {
  const store = await PlatformStore.open(o.databaseUrl).catch((e: unknown) => {
    throw isVrpError(e) && DATABASE_URL_REFUSALS.includes(e.code) ? new InputRefused(e) : e;
  });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** An age in ms (`--older-than`): a whole number with its unit (s, m, h, d). */
export function age(v: string): number {
  const m = /^([1-9]\d{0,5}|0)(s|m|h|d)$/.exec(v);
  if (!m) throw new InvalidArgumentError('an age with its unit such as 90d, 12h, 30m or 45s');
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** A positive duration in ms (`--interval`, `--lease`, `--keep-alive`): a whole number with its unit. */
export function duration(v: string): number {
  const ms = age(v);
  if (ms === 0) throw new InvalidArgumentError('a positive duration with its unit such as 60s, 15m or 1h');
  return ms;
}

/** `--admin-listen`: an address outside loopback and private networks is a usage error (exit 64) before anything starts. */
export function adminListen(v: string): { host: string; port: number } {
  try {
    return parseAdminListen(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}
