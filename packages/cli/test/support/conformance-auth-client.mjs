/**
 * The client under test for the official MCP conformance suite's client `auth/*` scenarios: the
 * proxy's downstream client. The suite runs `node conformance-auth-client.mjs SERVER_URL` with
 * MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT: a pre-registered client's id and secret);
 * this starts `vrp gate proxy --upstream SERVER_URL --downstream-oauth service` (the flags an
 * operator gives; the gateway's own credential, so no team-mode authorization server is needed),
 * opens the authorization link the proxy prints as a person would (the suite's authorization server
 * redirects at once to the proxy's /oauth/callback), then makes one call through the proxy with the
 * official SDK client: list the tools and call the first. A step-up (403 insufficient_scope) ends
 * the call with downstream_authorization_required and a new printed link: it is opened and the
 * call made again, once (the suite counts authorization attempts: at most three). Plain JavaScript: the suite's Node (>= 22) runs it without tsx;
 * the proxy runs under the repository's Node through tsx.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const dir = mkdtempSync(join(tmpdir(), 'vrp-conformance-auth-'));
writeFileSync(join(dir, 'policy.json'), JSON.stringify({ version: 1, policy_id: 'conformance-auth' }));

/** The proxy's flags for this scenario (docs/conformance.md lists them). */
const flags = [
  'gate',
  'proxy',
  '--policy',
  join(dir, 'policy.json'),
  '--store',
  join(dir, 'gate.db'),
  '--name',
  'conformance-auth',
  '--upstream',
  serverUrl,
  '--insecure-http-upstream',
  '--listen',
  '127.0.0.1:0',
  '--mode',
  'observe',
  '--pin-on-first-use',
  '--downstream-oauth',
  'service',
  // The CIMD URL the suite's authorization server expects where it advertises CIMD (auth/basic-cimd).
  '--downstream-client-metadata-url',
  'https://conformance-test.local/client-metadata.json',
  ...(context.client_id ? ['--downstream-client-id', context.client_id] : []),
  ...(scenario.startsWith('auth/client-credentials') ? ['--downstream-grant', 'client_credentials'] : []),
];
const env = {
  ...process.env,
  VRPKIT_MASTER_KEY: randomBytes(32).toString('hex'),
  ...(context.client_secret ? { VRPKIT_DOWNSTREAM_CLIENT_SECRET: context.client_secret } : {}),
};
// VRPKIT_CONFORMANCE_VRP=dist runs the built bin (faster to start on a loaded machine; build first).
const vrp =
  process.env.VRPKIT_CONFORMANCE_VRP === 'dist'
    ? [join(repo, 'packages/cli/dist/bin.js')]
    : ['--import', 'tsx', '--conditions=vrpkit-source', join(repo, 'packages/cli/src/bin.ts')];
const proxy = spawn('node', [...vrp, ...flags], {
  cwd: repo,
  env,
  stdio: ['ignore', 'inherit', 'pipe'],
});

/** Every log line of the proxy, echoed to this process's stderr (the suite keeps it). */
const events = [];
const waiters = new Set();
createInterface({ input: proxy.stderr }).on('line', (line) => {
  process.stderr.write(`${line}\n`);
  let e;
  try {
    e = JSON.parse(line);
  } catch {
    return;
  }
  events.push(e);
  for (const w of [...waiters]) w(e);
});

function next(match, ms = 60_000) {
  const seen = events.find(match);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(w);
      reject(new Error('timed out waiting for the proxy'));
    }, ms);
    const w = (e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      waiters.delete(w);
      resolve(e);
    };
    waiters.add(w);
  });
}

const eventName = (e) => e.event ?? e.msg ?? e.type;

/** A person opens the printed link: the suite's authorization server redirects to the proxy's callback at once. */
async function openLink(url) {
  let at = new URL(url);
  for (let hop = 0; hop < 5; hop++) {
    const r = await fetch(at, { redirect: 'manual' });
    const location = r.headers.get('location');
    if (!location) return;
    at = new URL(location, at);
  }
}

/** Open every link the proxy prints from here on (initial authorization and step-ups). */
let opened = 0;
waiters.add((e) => {
  if (eventName(e) === 'downstream_authorization_required' && e.open) {
    opened++;
    void openLink(e.open).catch((err) => process.stderr.write(`opening the link failed: ${err.message}\n`));
  }
});
for (const e of events) if (eventName(e) === 'downstream_authorization_required' && e.open) void openLink(e.open);

let code = 0;
try {
  const listening = await next((e) => eventName(e) === 'listening');
  await next((e) => ['downstream_connected', 'downstream_authorized', 'downstream_authorization_failed'].includes(eventName(e)));
  const agent = new Client({ name: 'conformance-agent', version: '1.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(listening.url), { requestInit: { headers: { authorization: `Bearer ${listening.token}` } } }),
  );
  for (let round = 0; round < 2; round++) {
    const before = opened;
    try {
      const { tools } = await agent.listTools();
      const tool = tools[0];
      const result = tool ? await agent.callTool({ name: tool.name, arguments: {} }) : undefined;
      const text = JSON.stringify(result?.content ?? []);
      process.stderr.write(`call ${tool?.name ?? '(no tool)'}: ${text.slice(0, 300)}\n`);
      if (!text.includes('downstream_authorization_required')) break;
    } catch (err) {
      process.stderr.write(`call failed: ${err.message}\n`);
      if (!String(err.message).includes('authorization')) break;
    }
    // A step-up or a lost credential: wait for the new link's redemption, then call again.
    if (opened === before) await next((e) => eventName(e) === 'downstream_authorization_required' && e.open, 5_000).catch(() => {});
    await next((e) => eventName(e) === 'downstream_authorized' && events.indexOf(e) > 0, 5_000).catch(() => {});
  }
  await agent.close();
} catch (err) {
  process.stderr.write(`conformance-auth-client: ${err.message}\n`);
  code = 1;
} finally {
  proxy.kill('SIGTERM');
  await new Promise((r) => proxy.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
