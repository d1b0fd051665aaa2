/**
 * Driving `vrp gate proxy` in tests as users run it: the proxy is a real child process (`vrp`
 * from source), the agent is the official SDK `Client` over stdio or Streamable HTTP (or raw
 * JSON-RPC lines, for framing errors), and operator commands run in this process against the
 * proxy's store file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot, runVrpInProcess } from '@vrpkit/testkit/cli';
import { expect } from 'vitest';
import { vrpArgs } from './gate-proxy-args.js';

export const fakeServer = fileURLToPath(new URL('./fake-mcp-server.mjs', import.meta.url));
export const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const memoryServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const everythingServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export { vrpArgs } from './gate-proxy-args.js';
/** Starting `vrp` from source (tsx) takes seconds, and tens of seconds on a loaded machine. */
export const SPAWN = { timeout: 180_000 };

/** Temporary directories, removed by `removeTmpDirs` (call it in afterAll). */
const dirs: string[] = [];
export function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'vrp-gate-proxy-'));
  dirs.push(d);
  return d;
}
export function removeTmpDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface Agent {
  client: Client;
  /** The proxy's stderr so far. */
  logs(): string;
}

/** An agent connected to `vrp gate proxy ARGS` over stdio. */
export async function agentOverStdio(args: string[], env: Record<string, string> = {}): Promise<Agent> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...vrpArgs, 'gate', 'proxy', ...args],
    cwd: repoRoot,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let logs = '';
  transport.stderr?.on('data', (d) => {
    logs += d;
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport, SPAWN);
  return { client, logs: () => logs };
}

export interface ListeningProxy {
  url: string;
  token: string;
  proc: ChildProcess;
  logs(): string;
  /** A new SDK client over Streamable HTTP with the bearer token. */
  connect(): Promise<Client>;
  stop(): Promise<void>;
}

/** `vrp gate proxy --listen 127.0.0.1:0 ARGS`, once it printed its URL and token. */
export async function proxyOverHttp(args: string[], env: Record<string, string> = {}): Promise<ListeningProxy> {
  const proc = spawn(process.execPath, [...vrpArgs, 'gate', 'proxy', '--listen', '127.0.0.1:0', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let logs = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const { url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      logs += d;
      const line = logs.split('\n').find((l) => l.includes('"event":"listening"'));
      if (line) resolve(JSON.parse(line) as { url: string; token: string });
    });
    proc.once('exit', () => reject(new Error(`proxy exited: ${logs}`)));
  });
  const clients: Client[] = [];
  return {
    url,
    token,
    proc,
    logs: () => logs,
    connect: async () => {
      const client = new Client({ name: 'http-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      clients.push(client);
      return client;
    },
    stop: async () => {
      for (const c of clients) await c.close().catch(() => {});
      proc.kill();
      await exited;
    },
  };
}

/** `vrp gate proxy ARGS` spoken to in raw JSON-RPC lines over stdio: `send` a line, `next(n)` waits for the n-th reply. */
export async function rawStdioProxy(args: string[], env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, [...vrpArgs, 'gate', 'proxy', ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
  let logs = '';
  await new Promise<void>((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      logs += d;
      if (logs.includes('"event":"serving_stdio"')) resolve();
    });
    proc.once('exit', () => reject(new Error(`proxy exited: ${logs}`)));
  });
  const replies: Record<string, unknown>[] = [];
  let buf = '';
  proc.stdout!.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      replies.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      buf = buf.slice(i + 1);
    }
  });
  return {
    send: (line: string) => void proc.stdin!.write(`${line}\n`),
    next: async (n: number) => {
      for (let t = 0; replies.length < n && t < 600; t++) await new Promise((r) => setTimeout(r, 50));
      return replies[n - 1];
    },
    logs: () => logs,
    kill: () => proc.kill(),
  };
}

/** The host error object of a deny (or the proxy's tool error), from the first text block. */
export function errorOf(r: CallToolResult): { code: string; message: string; invoked: boolean } {
  expect(r.isError).toBe(true);
  const first = r.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block');
  return (JSON.parse(first.text) as { error: { code: string; message: string; invoked: boolean } }).error;
}

export function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** An operator command (`vrp gate tools|approve|journal|report`), run in this process against the proxy's store file. */
export async function vrpOk(args: string[]): Promise<string> {
  const r = await runVrpInProcess(args);
  expect(r.stderr + r.stdout).not.toMatch(/^error\[/m);
  expect(r.code).toBe(0);
  return r.stdout;
}
