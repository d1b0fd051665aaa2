/**
 * The A2A agent behind the card: a message whose single data part is `{check_in, check_out, guests}`
 * gets the signed envelope back, unmodified, as the data part of the reply (Node Tool Binding v0.1
 * §4–§5); anything else is a failed task with the reason (never a guess). Tasks live only as long
 * as the request that produced them.
 */
import { randomUUID } from 'node:crypto';
import { type ListTasksRequest, type ListTasksResponse, type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { isRecord } from '@vrpkit/core';
import { type OfferOutcome, type OfferService, offerFor } from '../../service/index.js';

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function agentMessage(ctx: RequestContext, parts: Part[]): Message {
  return {
    messageId: randomUUID(),
    contextId: ctx.contextId,
    taskId: '',
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** §4: the arguments are the message's single data part, a JSON object. */
function offerArguments(message: Message): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
  const data = message.parts.filter((p) => p.content?.$case === 'data');
  if (data.length !== 1) {
    return { ok: false, message: `expected exactly one data part {check_in, check_out, guests}, got ${data.length}` };
  }
  const value = data[0]?.content?.$case === 'data' ? data[0].content.value : undefined;
  if (!isRecord(value)) {
    return { ok: false, message: 'the data part must be a JSON object {check_in, check_out, guests}' };
  }
  return { ok: true, args: value };
}

export class OfferExecutor implements AgentExecutor {
  constructor(private readonly service: OfferService) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const parsed = offerArguments(ctx.userMessage);
    const outcome: OfferOutcome = parsed.ok
      ? await offerFor(this.service, parsed.args)
      : { ok: false, error: { code: 'invalid_arguments', message: parsed.message } };
    if (outcome.ok) {
      // §5: the envelope, unmodified, as the reply's data part.
      const part: Part = {
        content: { $case: 'data', value: outcome.envelope as unknown as Record<string, unknown> },
        metadata: undefined,
        filename: '',
        mediaType: 'application/json',
      };
      bus.publish(AgentEvent.message(agentMessage(ctx, [part])));
    } else {
      // §5: a failed task is an unverified outcome; it carries the reason and no offer.
      const task: Task = {
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: {
          state: TaskState.TASK_STATE_FAILED,
          message: agentMessage(ctx, [textPart(`error[${outcome.error.code}]: ${outcome.error.message}`)]),
          timestamp: new Date(this.service.now()).toISOString(),
        },
        artifacts: [],
        history: [],
        metadata: { error_code: outcome.error.code },
      };
      bus.publish(AgentEvent.task(task));
    }
    bus.finished();
  }

  async cancelTask(): Promise<void> {
    // Offers are computed in one step; there is nothing running to cancel.
  }
}

/**
 * Tasks live only as long as the request that produced them. The offer capability is one call
 * and one answer (Node Tool Binding v0.1 §5: the reply, or a failed task with the reason, comes back
 * inline) and this surface has no caller identity, so a task kept past its request would be
 * readable by every other caller through `GetTask` / `ListTasks`. Keyed by the request's
 * `ServerCallContext` (one per HTTP request): the SDK's result manager can merge a task's events
 * within the request; afterwards nothing is found and nothing is listed.
 */
export class RequestScopedTaskStore implements TaskStore {
  private readonly byRequest = new WeakMap<ServerCallContext, Map<string, Task>>();

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const tasks = this.byRequest.get(context) ?? new Map<string, Task>();
    tasks.set(task.id, structuredClone(task));
    this.byRequest.set(context, tasks);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = this.byRequest.get(context)?.get(taskId);
    return task ? structuredClone(task) : undefined;
  }

  /** No task outlives its request, so no request can list one. */
  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    return { tasks: [], nextPageToken: '', pageSize: params.pageSize ?? 0, totalSize: 0 };
  }
}
