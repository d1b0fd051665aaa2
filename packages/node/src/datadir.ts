/**
 * The node's data directory:
 *
 *   node.json      which store the node uses (never a credential)
 *   node.sqlite    the SQLite store (when the store is sqlite)
 *   keys/          one private JWK per signing key, mode 0600 (directory 0700); never logged, never served
 *   tls/           the dev CA and server certificate (`--dev`)
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NodeError } from './errors.js';
import { postgresTarget, type StoreTarget } from './store/db.js';

export const NODE_CONFIG_FORMAT = 'vrpkit-node/1';
/** Environment variable naming the PostgreSQL URL for a node whose store is postgres. */
export const DATABASE_URL_ENV = 'VRP_NODE_DATABASE_URL';

export interface NodeConfigFile {
  format: typeof NODE_CONFIG_FORMAT;
  canonical_domain: string;
  store: 'sqlite' | 'postgres';
}

export const nodePaths = (dataDir: string) => ({
  config: join(dataDir, 'node.json'),
  sqlite: join(dataDir, 'node.sqlite'),
  keys: join(dataDir, 'keys'),
  tls: join(dataDir, 'tls'),
});

/** A `--data-dir` that names a file is reported as such (not as a missing node or a used directory). */
export function assertDataDirNotFile(dataDir: string): void {
  if (statSync(dataDir, { throwIfNoEntry: false })?.isDirectory() === false) {
    throw new NodeError('data_dir_not_directory', { dir: dataDir });
  }
}

export function readNodeConfig(dataDir: string): NodeConfigFile {
  assertDataDirNotFile(dataDir);
  let text: string;
  try {
    text = readFileSync(nodePaths(dataDir).config, 'utf8');
  } catch {
    throw new NodeError('node_not_initialized', { what: `${dataDir} is not a node data directory (no node.json)` });
  }
  const cfg = JSON.parse(text) as NodeConfigFile;
  if (cfg.format !== NODE_CONFIG_FORMAT) throw new NodeError('unsupported_data_dir', { format: String(cfg.format) });
  return cfg;
}

/** Where the store of the node in `dataDir` lives. A postgres store takes its URL from the option or VRP_NODE_DATABASE_URL. */
export function storeTargetFor(dataDir: string, databaseUrl?: string): StoreTarget {
  const cfg = readNodeConfig(dataDir);
  if (cfg.store === 'sqlite') return { kind: 'sqlite', file: nodePaths(dataDir).sqlite };
  const url = databaseUrl ?? process.env[DATABASE_URL_ENV];
  if (!url) throw new NodeError('database_url_required', { env: DATABASE_URL_ENV });
  return postgresTarget(url);
}
