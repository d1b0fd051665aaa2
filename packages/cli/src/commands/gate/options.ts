/**
 * The options every `vrp gate` verb shares: which gate store (`--store`, or for the older verbs
 * one of `--db`, `--database-url`, `--store`) and `--json`, and the values several gate verbs parse.
 */
import { existsSync } from 'node:fs';
import { type GateStore, openGateStore, parseGateStoreTarget } from '@vrpkit/gate';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError, usage } from '../../errors.js';
import { run } from '../../io.js';
import { jsonOption } from '../../options.js';

const JSON_HELP = 'machine-readable output';

/** What a verb on the gate store is given: `--store`, its PostgreSQL `--schema`, `--json`. */
export interface GateStoreOptions {
  store: string;
  schema: string;
  json?: boolean;
}

/** `--store FILE|URL` and `--schema` (and `--json`, unless the verb prints none). */
export function storeOption(c: Command, withJson = true): Command {
  c.requiredOption('--store <sqlite-file|postgres-url>', 'the gate store: a SQLite file, or a postgres:// URL').option(
    '--schema <name>',
    'PostgreSQL schema of the gate tables',
    'vrpkit_gate',
  );
  return withJson ? c.addOption(jsonOption(JSON_HELP)) : c;
}

/** Open the gate store `--store` names; an operation on an existing store never creates an empty one by a typo. */
export function openStore(o: Pick<GateStoreOptions, 'store' | 'schema'>, create: boolean): Promise<GateStore> {
  const target = parseGateStoreTarget(o.store);
  if (!create && target.kind === 'sqlite' && !existsSync(target.file)) throw new CliError('no_store', { path: target.file });
  return openGateStore(o.store, { schema: o.schema });
}

/** Run `fn` on the store once it is open, and close it whatever happened. */
export async function closing(opened: Promise<GateStore>, fn: (store: GateStore) => Promise<void>): Promise<void> {
  const store = await opened;
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** What the approval and journal verbs are given: exactly one of `--db`, `--database-url`, `--store`. */
export interface StoreChoiceOptions {
  db?: string;
  databaseUrl?: string;
  store?: string;
  schema?: string;
  json?: boolean;
}

/** `--db FILE`, `--database-url URL` or `--store FILE|URL` (exactly one), `--schema`, `--json`. */
export function storeChoiceOptions(c: Command): Command {
  return c
    .option('--db <file>', 'SQLite authority store file')
    .option('--database-url <url>', 'PostgreSQL authority store URL')
    .option('--store <sqlite-file|postgres-url>', 'the gate store, as `vrp gate proxy|ui|tools|report|audit` name it')
    .option('--schema <name>', 'PostgreSQL schema of the gate tables', 'vrpkit_gate')
    .addOption(jsonOption(JSON_HELP));
}

/** Open the store named by exactly one of --db / --database-url / --store, run, close; usage errors exit 64. */
export function withChosenStore(o: StoreChoiceOptions, fn: (store: GateStore) => Promise<void>): Promise<void> {
  return run(o.json, async () => {
    if ([o.db, o.databaseUrl, o.store].filter((v) => v !== undefined).length !== 1)
      throw usage('give exactly one of --db FILE, --database-url URL or --store FILE|URL');
    // Operating on a store means an existing one: never create an empty database by a typo.
    if (o.db && !existsSync(o.db)) throw new CliError('no_store', { path: o.db });
    const schema = o.schema!;
    const target = o.store ?? (o.db !== undefined ? `sqlite:${o.db}` : o.databaseUrl!);
    await closing(o.store !== undefined ? openStore({ store: o.store, schema }, false) : openGateStore(target, { schema }), fn);
  });
}

/** `--approver NAME` of the verbs that serve the approvals page: who decisions made there are recorded as. */
export function approverOption(help: string): Option {
  return new Option('--approver <name>', help).default(process.env.USER ?? 'approvals-page');
}

/** `--retain-arguments DURATION` of the verbs that serve the approvals page. */
export function retainArgumentsOption(): Option {
  return new Option(
    '--retain-arguments <duration>',
    'keep the arguments of escalated acts this long after the decision (30m, 24h, 7d), then purge them',
  ).default('7d');
}

/** `--limit` of a listing: a positive whole number of rows, at most six digits. */
export function rowLimit(v: string): number {
  if (!/^[1-9]\d{0,5}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

const UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `2m`, `24h`, `7d`, or a bare number in `bareUnit`; milliseconds. Throws RangeError with the flag's name. */
export function parseDuration(v: string, flag: string, bareUnit?: keyof typeof UNITS): number {
  const m = /^(\d{1,7})([smhd])?$/.exec(v.trim());
  const unit = (m?.[2] ?? bareUnit) as keyof typeof UNITS | undefined;
  if (!m || !unit) throw new RangeError(`${flag} must be a duration such as 90s, 30m, 24h or 7d, got ${v}`);
  return Number(m[1]) * UNITS[unit];
}

/** `--since`: a duration back from `now` (30m, 24h, 7d) or an ISO date; epoch ms. */
export function parseSince(v: string, now: number): number {
  const m = /^(\d{1,6})([mhd])$/.exec(v);
  if (m) return now - Number(m[1]) * UNITS[m[2] as 'm' | 'h' | 'd'];
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw usage(`--since must be a duration (30m, 24h, 7d) or an ISO date, got ${v}`);
  return t;
}

/** A value a parser refused, as a usage error (exit 64) with the parser's message. */
export function parseUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw usage((e as Error).message);
  }
}
