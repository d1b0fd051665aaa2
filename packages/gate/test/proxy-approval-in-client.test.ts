/**
 * Approvals inside the client, end to end (issue 32 item 4): `startProxy` serves the agent over
 * Streamable HTTP in front of the real `@modelcontextprotocol/server-filesystem`, with its approvals
 * page (`ui`), on a real SQLite store. The agents are an SDK v2 client pinned to 2026-07-28 and an
 * SDK v1 client on 2025-11-25 (sessionful), each declaring URL-mode elicitation; the person decides
 * on the page the elicited URL opens (real HTTP: sign in, then the link's own form). Approved → the
 * retried call runs exactly once downstream; rejected → EF_NOT_AUTHORIZED; the client answering
 * "accept" without a page decision runs nothing; a used link or a foreign requestState approves nothing.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type GateStore, loadPolicy, openSqliteStore } from '@vrpkit/gate';
import { hasChromium, launchChromium } from '@vrpkit/testkit/browser';
import { repoRoot } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProxy, startProxy } from '../src/proxy/index.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';

/** With Chromium the person approves in the browser; without it (skip note printed) over plain HTTP. */
const BROWSER = hasChromium('approvals inside the client');
const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const T = { timeout: 120_000 };
const dir = tmpDir('approval-in-client');
const root = join(dir, 'root');
const dbFile = join(dir, 'gate.db');
let proxy: RunningProxy;
let person: GateStore;
const logs: { event: string; fields: Record<string, unknown> }[] = [];

/** What the person does on the page the URL opens, or nothing (the client just says "accept"). */
type PageAction = 'approve' | 'reject' | 'nothing';
interface Elicited {
  mode: string;
  url: string;
  message: string;
}

/** The person on the approvals page, over real HTTP: sign in with the page token, open the link, press the button. */
async function onThePage(url: string, action: Exclude<PageAction, 'nothing'>): Promise<number> {
  const ui = proxy.ui!;
  const link = url.slice(url.lastIndexOf('/') + 1);
  const signin = await fetch(`${ui.url}signin`, {
    method: 'POST',
    body: new URLSearchParams({ token: ui.token!, link }),
    redirect: 'manual',
  });
  const cookie = (signin.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await fetch(url, { headers: { cookie } });
  if (page.status !== 200) return page.status;
  const html = await page.text();
  const form = html.split('<form').find((f) => f.includes(`class="${action}"`))!;
  const fields = Object.fromEntries([...form.matchAll(/name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  return (await fetch(`${ui.url}decide`, { method: 'POST', headers: { cookie }, body: new URLSearchParams(fields) })).status;
}

/** The person approves in Chromium: opens the elicited URL, signs in with the page token, presses Approve. */
async function approveInChromium(url: string): Promise<number> {
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    await tab.goto(url);
    await tab.locator('input[name="token"]').fill(proxy.ui!.token!);
    await tab.locator('form.signin button').click();
    await tab.waitForURL(url);
    await tab.locator('button.approve').click();
    return (await tab.locator('#decision').textContent())?.startsWith('Approved') ? 200 : 500;
  } finally {
    await browser.close();
  }
}

/** The URLs elicited so far, and what the person does with the next one. */
const elicited: Elicited[] = [];
let nextAction: PageAction = 'nothing';
async function elicit(params: Elicited): Promise<{ action: 'accept' }> {
  elicited.push(params);
  if (nextAction === 'approve' && BROWSER) expect(await approveInChromium(params.url)).toBe(200);
  else if (nextAction !== 'nothing') expect(await onThePage(params.url, nextAction)).toBe(200);
  return { action: 'accept' };
}

const auth = () => ({ requestInit: { headers: { authorization: `Bearer ${proxy.listener!.token}` } } });
const URL_ELICITATION = { elicitation: { url: {} } };

async function v2Client(maxRounds = 3): Promise<V2Client> {
  const c = new V2Client(
    { name: 'v2-agent', version: '1.0.0' },
    { capabilities: URL_ELICITATION, versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { maxRounds } },
  );
  c.setRequestHandler('elicitation/create', (req) => elicit(req.params as Elicited));
  await c.connect(new V2Transport(new URL(proxy.listener!.url), auth()));
  return c;
}

async function v1Client(): Promise<V1Client> {
  const c = new V1Client({ name: 'v1-agent', version: '1.0.0' }, { capabilities: URL_ELICITATION });
  c.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params as Elicited));
  await c.connect(new V1Transport(new URL(proxy.listener!.url), auth()));
  return c;
}

interface Agent {
  revision: string;
  call(args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

const AGENTS: Record<string, () => Promise<Agent>> = {
  '2026-07-28': async () => {
    const c = await v2Client();
    return {
      revision: '2026-07-28',
      call: (args) => c.callTool({ name: 'write_file', arguments: args }) as Promise<CallToolResult>,
      close: () => c.close(),
    };
  },
  '2025-11-25': async () => {
    const c = await v1Client();
    expect(c.getServerVersion()).toBeDefined();
    return {
      revision: '2025-11-25',
      call: (args) => c.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 100_000 }) as Promise<CallToolResult>,
      close: () => c.close(),
    };
  },
};

function codeOf(r: CallToolResult): string {
  const first = r.content[0];
  if (!r.isError || first?.type !== 'text') throw new Error(`expected a deny, got ${JSON.stringify(r)}`);
  return (JSON.parse(first.text) as { error: { code: string } }).error.code;
}

beforeAll(async () => {
  mkdirSync(root);
  proxy = await startProxy({
    policy: loadPolicy({
      version: 1,
      policy_id: 'approvals-in-client',
      informative_defaults: false,
      tools: [
        { tool: 'write_file', consequence_class: 'PERSISTENT_STATE_CHANGE' },
        { tool: 'read_text_file', consequence_class: 'INFORMATIONAL' },
      ],
    }),
    store: await openSqliteStore(dbFile),
    name: 'in-client',
    downstream: { kind: 'stdio', command: process.execPath, args: [filesystemServer, root] },
    listen: { host: '127.0.0.1', port: 0 },
    ui: { listen: { host: '127.0.0.1', port: 0 }, approver: 'alice' },
    approvalTimeoutMs: 1500,
    log: (event, fields = {}) => logs.push({ event, fields }),
  });
  person = await openSqliteStore(dbFile);
  const lister = await v2Client();
  await lister.listTools();
  await lister.close();
  await person.proxy.pin(proxy.serverId, 'write_file', { by: 'test', now: Date.now() });
}, T.timeout);

afterAll(async () => {
  await proxy?.stop();
  await person?.close();
  removeTmpDirs();
});

for (const revision of Object.keys(AGENTS)) {
  describe(`an escalated call from a client on ${revision} that declared URL elicitation`, T, () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = await AGENTS[revision]!();
    }, T.timeout);
    afterAll(async () => {
      await agent?.close();
    });

    it('approved on the page the URL opens: the retried call runs exactly once; again, it is a replay and the used link approves nothing', async () => {
      const path = join(root, `approved-${revision}.txt`);
      nextAction = 'approve';
      const before = elicited.length;
      const r = await agent.call({ path, content: `approved on ${revision}` });
      expect(r.isError).toBeFalsy();
      expect(readFileSync(path, 'utf8')).toBe(`approved on ${revision}`);
      expect(elicited.length).toBe(before + 1);
      const url = elicited.at(-1)!.url;
      expect(elicited.at(-1)).toMatchObject({
        mode: 'url',
        url: expect.stringMatching(new RegExp(`^${proxy.ui!.url}act/[A-Za-z0-9_-]{43}$`)),
      });
      // Exactly one downstream invocation, journaled once.
      const invoked = logs.filter((l) => l.event === 'tools/call' && l.fields.invoked === true && l.fields.tool === 'write_file');
      const act = invoked.at(-1)!.fields.candidate_act_id as string;
      expect(invoked.filter((l) => l.fields.candidate_act_id === act)).toHaveLength(1);
      await expect.poll(async () => (await person.journal.get(act))?.state).toBe('EFFECTUATED');
      // The identical call again is the same act, already run: a replay, nothing runs.
      nextAction = 'nothing';
      expect(codeOf(await agent.call({ path, content: `approved on ${revision}` }))).toBe('EF_005');
      // The link it was approved with decides nothing any more.
      nextAction = 'approve';
      expect(await onThePage(url, 'approve')).toBe(410);
    });

    it('rejected on the page: refused with EF_NOT_AUTHORIZED; nothing is written', async () => {
      const path = join(root, `rejected-${revision}.txt`);
      nextAction = 'reject';
      expect(codeOf(await agent.call({ path, content: 'no' }))).toBe('EF_NOT_AUTHORIZED');
      expect(existsSync(path)).toBe(false);
    });

    it('the client answers "accept" but no one decided on the page: nothing runs, the act stays pending', async () => {
      const path = join(root, `accepted-only-${revision}.txt`);
      nextAction = 'nothing';
      const outcome = await agent.call({ path, content: 'unapproved' }).then(
        (r) => codeOf(r),
        (e: Error) => e.message,
      );
      // 2026: the client runs out of rounds (input_required each time); 2025: today's answer after the wait.
      expect(outcome).toMatch(revision === '2026-07-28' ? /round/i : /^EF_APPROVAL_REQUIRED$/);
      expect(existsSync(path)).toBe(false);
      const pending = await person.escalations.list('PENDING');
      expect(pending.length).toBeGreaterThanOrEqual(1);
    });
  });
}

describe('a requestState that is not this call’s own', T, () => {
  it('tampered, or minted for another call: refused before anything runs (-32602), and the act is not decided', async () => {
    const c = await v2Client();
    try {
      const args = (name: string) => ({ path: join(root, `${name}.txt`), content: name });
      const first = (await c.callTool({ name: 'write_file', arguments: args('state-a') }, { allowInputRequired: true })) as unknown as {
        resultType: string;
        requestState: string;
      };
      expect(first.resultType).toBe('input_required');
      const retry = (name: string, requestState: string) =>
        c.callTool(
          { name: 'write_file', arguments: args(name), requestState, inputResponses: { vrp_gate_approval: { action: 'accept' } } } as never,
          { allowInputRequired: true },
        );
      // The state of call A echoed on call B (other arguments): foreign.
      await expect(retry('state-b', first.requestState)).rejects.toThrow(/requestState refused \(foreign\)/);
      const tampered = first.requestState.slice(0, -2) + (first.requestState.endsWith('AA') ? 'BB' : 'AA');
      await expect(retry('state-a', tampered)).rejects.toThrow(/requestState refused \(malformed\)/);
      expect(existsSync(join(root, 'state-a.txt'))).toBe(false);
      expect(existsSync(join(root, 'state-b.txt'))).toBe(false);
    } finally {
      await c.close();
    }
  });
});
