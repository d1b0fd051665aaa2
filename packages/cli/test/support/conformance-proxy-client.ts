/**
 * The client command of the official MCP conformance suite's CLIENT scenarios
 * (`conformance client --command '…' --scenario NAME`), where the client under test is
 * `vrp gate proxy`'s downstream client. The suite starts its scenario server and runs this with
 * the server's URL as the last argument (and `MCP_CONFORMANCE_SCENARIO`); this starts the proxy
 * in front of that URL (`--upstream`), as an operator does: a policy whose every tool is a read,
 * one listing, `vrp gate tools pin --all`, then an agent (the official SDK v2 client, declaring
 * form elicitation, answering it as a person accepting the form's defaults) lists the pinned tools
 * and calls each once with arguments made from its input schema. What the suite then judges is
 * what the proxy sent the scenario server.
 *
 * Run as `node --import tsx --conditions=vrpkit-source THIS URL` (interop-conformance-client.test.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { vrpArgs } from './gate-proxy-args.js';

// Not @vrpkit/testkit/cli's: it loads vitest, and this runs outside it.
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

const POLICY = [
  'version: 1',
  'policy_id: conformance-client',
  'informative_defaults: false',
  'tools:',
  "  - { tool: '*', consequence_class: INFORMATIONAL }",
  'hot_envelopes:',
  '  - { name: reads, consequence_classes: [INFORMATIONAL] }',
].join('\n');

/** The json-schema-2020-12-preservation scenario's echo tool. */
const ECHO_TOOL = 'json_schema_echo';

/** A value of a JSON Schema property's type, its default first (what a form shows prefilled). */
function sample(schema: Record<string, unknown> | undefined): unknown {
  if (schema && 'default' in schema) return schema.default;
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (schema?.type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'conformance';
  }
}

/** Arguments for a tool: every required property (and every property with a default) of its input schema. */
function argumentsFor(inputSchema: { properties?: Record<string, Record<string, unknown>>; required?: string[] }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(inputSchema.properties ?? {}))
    if (inputSchema.required?.includes(name) || 'default' in schema) out[name] = sample(schema);
  return out;
}

async function vrp(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, [...vrpArgs, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { code, stderr };
}

async function main(): Promise<void> {
  const url = process.argv.at(-1) as string;
  // The calls a scenario asks its client to make (MCP_CONFORMANCE_CONTEXT `toolCalls`: exact arguments, e.g. SEP-2243's header values).
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  };
  const planned = new Map((context.toolCalls ?? []).map((call) => [call.name, call.arguments]));
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-conformance-client-'));
  const policy = join(dir, 'policy.yaml');
  const store = join(dir, 'gate.db');
  writeFileSync(policy, POLICY);
  const proxy = spawn(
    process.execPath,
    [
      ...vrpArgs,
      'gate',
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--policy',
      policy,
      '--store',
      store,
      '--approval-timeout',
      '0',
      '--name',
      'conformance',
      '--upstream',
      url,
      '--insecure-http-upstream',
    ],
    { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let logs = '';
  const exited = new Promise<void>((resolve) => proxy.once('exit', () => resolve()));
  try {
    const listening = await new Promise<{ url: string; token: string }>((resolve, reject) => {
      proxy.stderr.on('data', (d) => {
        logs += d;
        const line = logs.split('\n').find((l) => l.includes('"event":"listening"'));
        if (line) resolve(JSON.parse(line) as { url: string; token: string });
      });
      proxy.once('exit', () => reject(new Error(`proxy exited: ${logs}`)));
    });
    const agent = new Client({ name: 'conformance-agent', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    // A person accepting the form as shown: every field at its default.
    agent.setRequestHandler('elicitation/create', (request) => {
      const schema = (request.params as { requestedSchema?: { properties?: Record<string, Record<string, unknown>> } }).requestedSchema;
      const content = Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, s]) => [k, sample(s)]));
      return { action: 'accept', content } as never;
    });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(listening.url), {
        requestInit: { headers: { authorization: `Bearer ${listening.token}` } },
      }),
    );
    // The operator's review: one listing records the definitions, then every one is pinned.
    await agent.listTools().catch(() => ({ tools: [] }));
    const pinned = await vrp(['gate', 'tools', 'pin', '--all', '--store', store], process.env);
    if (pinned.code !== 0) process.stderr.write(`pin failed: ${pinned.stderr}\n`);
    let tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
    for (let i = 0; i < 20 && tools.length === 0; i++) {
      tools = (await agent.listTools().catch(() => ({ tools: [] }))).tools;
      if (tools.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    for (const tool of tools) {
      // json-schema-2020-12-preservation: the echo tool takes the focal tool's input schema as the
      // agent received it through the proxy, verbatim (the scenario's instructions to its client).
      const focal = tools.find((t) => t.name !== ECHO_TOOL);
      const args =
        planned.get(tool.name) ??
        (tool.name === ECHO_TOOL && focal ? { schema: focal.inputSchema } : argumentsFor(tool.inputSchema as never));
      const result = await agent.callTool({ name: tool.name, arguments: args }).catch((e: Error) => ({ error: e.message }));
      process.stderr.write(`${tool.name}: ${JSON.stringify(result).slice(0, 300)}\n`);
    }
    await agent.close();
  } finally {
    proxy.kill();
    await exited;
    process.stderr.write(logs.slice(-2000));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
