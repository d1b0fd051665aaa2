/**
 * The A2A surface keeps no task past the request that produced it: the offer capability is one
 * call and one answer (Node Tool Binding v0.1 §5) and the surface has no caller identity, so a kept
 * task would be readable by every other caller. Driven with the official A2A SDK client over
 * real https (dev CA, https://{domain} reached on 127.0.0.1).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type AgentCard, type Message, Role, TaskState } from '@a2a-js/sdk';
import { Client, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createHardenedFetch, type HardenedFetch } from '@vrpkit/agent';
import { systemClock } from '@vrpkit/core';
import { AGENT_CARD_PATH } from '@vrpkit/protocol';
import { closeTestNode, type NodeClient, serveTestNode, tempDir } from '@vrpkit/testkit/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'a2a-tasks.example';
const tmp = tempDir('a2a-tasks');
let served: { node?: Awaited<ReturnType<typeof serveTestNode>>['node']; client?: NodeClient } = {};
let fetchA: HardenedFetch;
let fetchB: HardenedFetch;

/** One SDK client per caller, each with its own connection pool. */
async function a2aClient(fetchImpl: HardenedFetch): Promise<Client> {
  const card: AgentCard = await new DefaultAgentCardResolver({ fetchImpl: fetchImpl as typeof fetch }).resolve(
    `https://${DOMAIN}${AGENT_CARD_PATH}`,
    '',
  );
  const endpoint = card.supportedInterfaces.find((i) => i.protocolVersion === '1.0')!;
  return new Client(await new JsonRpcTransportFactory({ fetchImpl: fetchImpl as typeof fetch }).create(endpoint.url, card), card);
}

function dataMessage(value: Record<string, unknown>): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

beforeAll(async () => {
  served = await serveTestNode(DOMAIN, join(tmp.dir, 'node'), systemClock);
  const connect = { connectTo: [`${DOMAIN}:443:127.0.0.1:${served.node!.port}`], ca: served.node!.caPem as string };
  fetchA = createHardenedFetch(connect);
  fetchB = createHardenedFetch(connect);
});

afterAll(async () => {
  await fetchA?.close();
  await fetchB?.close();
  await closeTestNode(served, tmp);
});

describe('A2A ListTasks discloses other callers tasks (regression)', () => {
  it("another caller's failed task is neither listed nor readable: ListTasks is empty, GetTask is not-found", async () => {
    const alice = await a2aClient(fetchA);
    const secret = `alice-private-${randomUUID()}`;
    const result = await alice.sendMessage({
      tenant: '',
      message: dataMessage({ check_in: 'not-a-date', check_out: secret, guests: 2 }),
      configuration: undefined,
      metadata: undefined,
    });
    // The caller gets its failed task inline, with the reason: that is the whole answer.
    const task = 'messageId' in result ? undefined : result;
    expect(task?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task!.id).not.toBe('');

    const mallory = await a2aClient(fetchB);
    const listed = await mallory.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks).toEqual([]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    await expect(mallory.getTask({ tenant: '', id: task!.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    // Not kept for anyone: the same answer to the caller that made it.
    await expect(alice.getTask({ tenant: '', id: task!.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});
