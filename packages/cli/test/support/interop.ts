/**
 * The servers the real-client interop tests (official conformance suite, MCP Inspector CLI, Python
 * MCP SDK) point their clients at, started as users run them: a vrpkit node and a platform tenant
 * over https with their dev CAs, `@modelcontextprotocol/server-everything` over Streamable HTTP,
 * and `vrp gate proxy --listen` in front of it (its tools pinned). Clients reach the node and the
 * tenant by name (`resolve` → 127.0.0.1, `caFile`), the way `--connect-to`/`--cacert` do.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { initNode, type ServedNode, sampleProperty, serveNode } from '@vrpkit/node';
import { generateMasterKeyText, PlatformStore, parseMasterKey, type ServedPlatform, servePlatform } from '@vrpkit/platform';
import { MCP_ENDPOINT_PATH } from '@vrpkit/protocol';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll } from 'vitest';
import { everythingServer, type ListeningProxy, proxyOverHttp, tmp, vrpOk } from './gate-proxy.js';

/**
 * Preloaded (`node --import`) into a client's process so it reaches the node and the tenant by
 * name: see conformance-client.mjs.
 */
export const clientPreload = fileURLToPath(new URL('./conformance-client.mjs', import.meta.url));

/** The MCP revisions every vrpkit MCP endpoint serves (issue 32). */
export const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];

/**
 * A Node that runs the suite's and the Inspector's code (both need Node >= 22: `fs.globSync`,
 * engines `>=22.19`): `VRPKIT_NODE24` (set by `.ci/run`), else this Node when it is new enough.
 */
export function modernNode(): string | undefined {
  if (process.env.VRPKIT_NODE24) return process.env.VRPKIT_NODE24;
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 19) ? process.execPath : undefined;
}

/** A free loopback port (for a server that takes its port from the environment, as server-everything does). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface VrpTargets {
  node: { domain: string; url: string };
  tenant: { domain: string; url: string };
  /** The node's and the platform's dev CAs in one PEM file. */
  caFile: string;
  /** Names a client resolves to 127.0.0.1. */
  resolve: string[];
  /** For vrpkit's hardened fetch: `DOMAIN:443:127.0.0.1:PORT` of each, and both CAs. */
  connectTo: string[];
  caPems: string[];
  close(): Promise<void>;
}

/** A vrpkit node and a platform with one tenant, each on its own dev CA. */
export async function serveVrpTargets(): Promise<VrpTargets> {
  const dir = tmp();
  const nodeDomain = 'interop-node.example';
  const tenantDomain = 'interop-tenant.example';
  await initNode({ domain: nodeDomain, dataDir: join(dir, 'node') });
  const node: ServedNode = await serveNode({ dataDir: join(dir, 'node'), dev: true, port: 0 });
  const master = parseMasterKey(generateMasterKeyText());
  const store = await PlatformStore.open(`sqlite:${join(dir, 'platform.sqlite')}`);
  await store.init(master, 'interop-platform.example');
  await store.addTenants(master, [{ domain: tenantDomain, property: sampleProperty(Date.now()) }]);
  const platform: ServedPlatform = await servePlatform({ store, masterKeys: [master], tls: { kind: 'dev', dir: join(dir, 'dev-tls') } });
  const caFile = join(dir, 'cas.pem');
  writeFileSync(caFile, `${node.caPem}\n${platform.caPem}\n`);
  return {
    node: { domain: nodeDomain, url: `https://${nodeDomain}:${node.port}${MCP_ENDPOINT_PATH}` },
    tenant: { domain: tenantDomain, url: `https://${tenantDomain}:${platform.port}${MCP_ENDPOINT_PATH}` },
    caFile,
    resolve: [nodeDomain, tenantDomain],
    connectTo: [`${nodeDomain}:443:127.0.0.1:${node.port}`, `${tenantDomain}:443:127.0.0.1:${platform.port}`],
    caPems: [node.caPem as string, platform.caPem as string],
    close: async () => {
      await platform.close();
      await store.close();
      await node.close();
    },
  };
}

/** `server-everything streamableHttp` on a free loopback port: the reference server, connected to directly. */
export async function serveEverythingHttp(): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [everythingServer, 'streamableHttp'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let logs = '';
    child.stderr!.on('data', (d) => {
      logs += d;
      if (logs.includes('listening on port')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${logs}`)));
  });
  return {
    url: `http://127.0.0.1:${port}${MCP_ENDPOINT_PATH}`,
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

/**
 * `vrp gate proxy --listen POLICY_ARGS -- DOWNSTREAM`, every tool pinned as an operator does after
 * review (a tools/list first records the definitions to pin). Escalated calls are denied at once
 * (`--approval-timeout 0`): no person approves in these tests.
 */
async function pinnedProxy(policy: string, downstream: string[], env: Record<string, string> = {}): Promise<ListeningProxy> {
  const store = join(tmp(), 'gate.db');
  const proxy = await proxyOverHttp(['--policy', policy, '--store', store, '--approval-timeout', '0', ...downstream], env);
  const client = await proxy.connect();
  await client.listTools();
  await vrpOk(['gate', 'tools', 'pin', '--all', '--store', store]);
  return proxy;
}

/** The proxy in front of server-everything (stdio child) with the shipped example policy (examples/policies/everything.yaml). */
export function proxyInFrontOfEverything(): Promise<ListeningProxy> {
  const policy = join(repoRoot, 'examples/policies/everything.yaml');
  return pinnedProxy(policy, ['--name', 'everything', '--', process.execPath, everythingServer, 'stdio']);
}

/**
 * The proxy in front of the vrpkit node's `/mcp` (`--upstream`), the offer tool a read. The proxy
 * reaches the node by name with its dev CA: the same preload as the suite's (name → 127.0.0.1)
 * and NODE_EXTRA_CA_CERTS, as `--connect-to`/`--cacert` would.
 */
export function proxyInFrontOfNode(vrp: VrpTargets): Promise<ListeningProxy> {
  const policy = join(tmp(), 'policy.yaml');
  writeFileSync(
    policy,
    [
      'version: 1',
      'policy_id: vrp-node',
      'informative_defaults: false',
      'tools:',
      '  - { tool: get_verified_stay_offer, consequence_class: INFORMATIONAL }',
      'hot_envelopes:',
      '  - { name: reads, consequence_classes: [INFORMATIONAL] }',
    ].join('\n'),
  );
  return pinnedProxy(policy, ['--name', 'vrp-node', '--upstream', vrp.node.url], reachByName(vrp));
}

/** The environment of a Node client process that reaches the node and the tenant by name with their dev CAs (clientPreload). */
export function reachByName(vrp: VrpTargets): Record<string, string> {
  return {
    NODE_OPTIONS: `--import ${clientPreload}`,
    VRPKIT_CONFORMANCE_RESOLVE: vrp.resolve.join(','),
    VRPKIT_CONFORMANCE_CA: vrp.caFile,
    NODE_EXTRA_CA_CERTS: vrp.caFile,
  };
}

/** Where a client finds one target: the URL, the Authorization header it sends, and the domain whose offer it gets. */
export interface ClientEndpoint {
  url: string;
  authorization?: string;
  domain: string;
}

/** What the real-client tests (Inspector, Python SDK) run against: a node, a tenant, the proxy in front of the node. */
export interface ClientTargets {
  vrp: VrpTargets;
  /** vrpkit's hardened fetch reaching the node and the tenant (for the agent's verification). */
  fetch: HardenedFetch;
  endpoint(name: 'node' | 'tenant' | 'proxy'): ClientEndpoint;
  close(): Promise<void>;
}

export async function serveClientTargets(): Promise<ClientTargets> {
  const vrp = await serveVrpTargets();
  const proxy = await proxyInFrontOfNode(vrp);
  const fetch = createHardenedFetch({ connectTo: vrp.connectTo, ca: vrp.caPems });
  return {
    vrp,
    fetch,
    endpoint: (name) =>
      name === 'proxy'
        ? { url: proxy.url, authorization: `Bearer ${proxy.token}`, domain: vrp.node.domain }
        : { url: vrp[name].url, domain: vrp[name].domain },
    close: async () => {
      await fetch.close();
      await proxy.stop();
      await vrp.close();
    },
  };
}

/** The client targets of one test file: served before its tests, closed after them; `targets()` reads them inside a test. */
export function clientTargetsForFile(): () => ClientTargets {
  let targets: ClientTargets | undefined;
  beforeAll(async () => {
    targets = await serveClientTargets();
  }, 300_000);
  afterAll(async () => {
    await targets?.close();
  });
  return () => targets as ClientTargets;
}
