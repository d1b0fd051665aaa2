/**
 * `vrp node init`: create a node's data directory atomically. Everything is built in a
 * temporary sibling directory (store, migrations, property, first signing key) and renamed
 * into place only when all of it succeeded, so a bad property file or any other failure
 * leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { systemClock } from '@vrpkit/core';
import { assertDataDirNotFile, NODE_CONFIG_FORMAT, type NodeConfigFile, nodePaths } from '../datadir.js';
import { dnsNamePattern } from '../dns-name.js';
import { InvalidPropertyError, NodeError } from '../errors.js';
import { activateNewKey } from '../keys.js';
import { type PropertyDescription, readPropertyFile, sampleProperty } from '../property.js';
import { postgresTarget, type StoreTarget } from '../store/db.js';
import { NodeStore } from '../store/store.js';
import type { NodeStoreOptions } from './store.js';

/** Core VRP v0.1 §2 `canonical_domain`: a lowercase DNS name with at least two labels, no scheme, port or trailing dot. */
const DOMAIN_RE = dnsNamePattern('{4,253}');

export function assertCanonicalDomain(domain: string): void {
  if (!DOMAIN_RE.test(domain)) {
    throw new NodeError('invalid_domain', { domain: domain.slice(0, 80) });
  }
  // RFC 3696 §2: a top-level domain is never all-numeric, so 127.0.0.1 is an address, not a name.
  if (/\.\d+$/.test(domain)) {
    throw new NodeError('domain_is_ip_address', { domain });
  }
}

/** `databaseUrl` puts the store in PostgreSQL instead of `<dataDir>/node.sqlite`. */
export interface InitNodeOptions extends NodeStoreOptions {
  domain: string;
  /** A property description (JSON or YAML); without it a sample property is created. */
  propertyFile?: string;
}

export interface InitNodeResult {
  canonical_domain: string;
  data_dir: string;
  property_id: string;
  kid: string;
  store: 'sqlite' | 'postgres';
}

function onNodeDomain(url: string, domain: string): boolean {
  const host = new URL(url).hostname;
  return host === domain || host.endsWith(`.${domain}`);
}

/** Core VRP v0.1 §5: `property.url` is signed into every offer; like the booking URL it must be on the node's domain. */
export function assertUrlOnDomain(property: PropertyDescription, domain: string, file: string): void {
  if (property.url && !onNodeDomain(property.url, domain)) {
    throw new InvalidPropertyError(file, 'url', `must be on ${domain} or a subdomain of it`);
  }
}

export async function initNode(o: InitNodeOptions): Promise<InitNodeResult> {
  const now = (o.clock ?? systemClock).now();
  assertCanonicalDomain(o.domain);
  const dataDir = resolve(o.dataDir);
  assertDataDirNotFile(o.dataDir);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new NodeError('data_dir_not_empty', { dir: o.dataDir });
  }
  // Validate everything before writing anything.
  const property: PropertyDescription = o.propertyFile ? readPropertyFile(o.propertyFile) : sampleProperty(now);
  assertUrlOnDomain(property, o.domain, o.propertyFile ?? 'sample property');
  const pgTarget = o.databaseUrl ? postgresTarget(o.databaseUrl) : null;

  const tmp = join(dirname(dataDir), `.${basename(dataDir)}.init-${randomBytes(6).toString('hex')}`);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  let store: NodeStore | undefined;
  try {
    const config: NodeConfigFile = { format: NODE_CONFIG_FORMAT, canonical_domain: o.domain, store: pgTarget ? 'postgres' : 'sqlite' };
    writeFileSync(join(tmp, 'node.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o644 });
    const target: StoreTarget = pgTarget ?? { kind: 'sqlite', file: nodePaths(tmp).sqlite };
    store = await NodeStore.open(target);
    if (pgTarget && (await store.db.selectFrom('node_info').select('id').executeTakeFirst())) {
      throw new NodeError('store_not_empty', { schema: pgTarget.schema });
    }
    await store.putProperty(property, now);
    const { kid } = await activateNewKey(store, nodePaths(tmp).keys, o.domain, property.offer_lifetime_minutes * 60_000, now);
    // Written last: in PostgreSQL (outside the temp directory) node_info is the commit marker, so a
    // failed init leaves no node behind and can simply be run again.
    await store.setNodeInfo({ canonical_domain: o.domain, node_id: o.domain }, now);
    await store.close();
    store = undefined;
    if (existsSync(dataDir)) rmdirSync(dataDir); // empty (checked above); rename(2) needs it gone or empty
    renameSync(tmp, dataDir);
    return { canonical_domain: o.domain, data_dir: dataDir, property_id: property.property_id, kid, store: config.store };
  } catch (e) {
    await store?.close().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
