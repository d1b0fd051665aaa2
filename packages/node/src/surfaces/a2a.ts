/**
 * A2A surface (Node Tool Binding v0.1 §3–§6) with `@a2a-js/sdk` 1.3 (A2A protocol 1.0) and the 0.3
 * legacy binding. The SDK ships Express handlers only; this mirrors what its `jsonRpcHandler`
 * and `agentCardHandler` do (dist/server/express) on the node's Hono app, with the SDK's own
 * `JsonRpcTransportHandler` / `LegacyJsonRpcTransportHandler` doing the JSON-RPC work.
 *
 * The card names exactly one skill, `get_verified_stay_offer` (§3: the skill `id` is the bound
 * field), and every interface URL is on the canonical origin (§6). A message whose single data
 * part is `{check_in, check_out, guests}` gets the signed envelope back, unmodified, as the
 * data part of the reply (§5); anything else is a failed task with the reason (never a guess).
 */
import { randomUUID } from 'node:crypto';
import {
  A2A_VERSION_HEADER,
  type AgentCard,
  Extensions,
  HTTP_EXTENSION_HEADER,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type Part,
  Role,
  type Task,
  TaskState,
} from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  type ExecutionEventBus,
  JsonRpcTransportHandler,
  type RequestContext,
  type ServerCallContext,
  type TaskStore,
  UnauthenticatedUser,
  validateVersion,
} from '@a2a-js/sdk/server';
import { isRecord } from '@vrpkit/core';
import { AGENT_CARD_PATH } from '@vrpkit/protocol';
import type { Context, Hono } from 'hono';
import type { OfferService } from '../service.js';
import { jsonRpcErrorResponse, jsonTooDeepResponse, readJsonBody } from './body.js';
import { perService } from './per-service.js';
import { OFFER_TOOL_NAME, OFFER_TOOL_TITLE, offerToolDescription } from './tool.js';

/** The JSON-RPC endpoint both protocol versions share (the card lists it twice, §6). */
export const A2A_JSONRPC_PATH = '/a2a/jsonrpc';
export const A2A_MAX_BODY_BYTES = 64 * 1024;
const JSON_RPC_PARSE_ERROR = -32700;

/** The A2A 1.0 agent card: one skill, interfaces on the canonical origin. */
export function buildAgentCard(service: OfferService): AgentCard {
  const property = service.property() as { name?: unknown };
  const name = typeof property.name === 'string' && property.name ? property.name : service.canonicalDomain;
  const url = `${service.origin}${A2A_JSONRPC_PATH}`;
  return {
    name,
    description: `VRP node of ${service.canonicalDomain}: returns its signed verified stay offer.`,
    version: '0.1.0',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      // The SDK's legacyCompat serves 0.3 `message/send` only to a card that lists a 0.3 interface.
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_LEGACY_PROTOCOL_VERSION },
    ],
    provider: { organization: name, url: service.origin },
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: OFFER_TOOL_NAME,
        name: OFFER_TOOL_TITLE,
        description: offerToolDescription(service),
        tags: ['vacation-rental', 'verified-stay-offer', 'vrp'],
        examples: ['{"check_in":"YYYY-MM-DD","check_out":"YYYY-MM-DD","guests":2}'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/**
 * The 0.3 shape of the same card, as the SDK's legacy card router emits it
 * (`toCompatAgentCard(card, { embedV1Interfaces: true })`, not exported by the SDK): served
 * to a client that sends no `A2A-Version` or `0.3`.
 */
export function toLegacyAgentCard(card: AgentCard): Record<string, unknown> {
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion === A2A_LEGACY_PROTOCOL_VERSION);
  if (!legacy) throw new Error('the agent card lists no 0.3 interface');
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    url: legacy.url,
    preferredTransport: legacy.protocolBinding,
    protocolVersion: A2A_LEGACY_PROTOCOL_VERSION,
    capabilities: { streaming: card.capabilities?.streaming, pushNotifications: card.capabilities?.pushNotifications },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: s.tags,
      examples: s.examples,
      inputModes: s.inputModes,
      outputModes: s.outputModes,
    })),
    provider: card.provider ? { url: card.provider.url, organization: card.provider.organization } : undefined,
    supportedInterfaces: structuredClone(card.supportedInterfaces),
  };
}

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

class OfferExecutor implements AgentExecutor {
  constructor(private readonly service: OfferService) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const parsed = offerArguments(ctx.userMessage);
    const outcome = parsed.ok
      ? await this.service.getServedOffer(parsed.args)
      : ({ ok: false, error: { code: 'invalid_arguments', message: parsed.message } } as const);
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
class RequestScopedTaskStore implements TaskStore {
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

function isLegacyRequest(version: string | undefined): boolean {
  // The SDK's rule: an absent header means 0.3.
  return (version || A2A_LEGACY_PROTOCOL_VERSION) === A2A_LEGACY_PROTOCOL_VERSION;
}

/** The card and the SDK's request handlers of one offer service. */
function a2aAgent(service: OfferService) {
  const card = buildAgentCard(service);
  const requestHandler = new DefaultRequestHandler(card, new RequestScopedTaskStore(), new OfferExecutor(service));
  return {
    card,
    cardJson: JSON.stringify(card),
    legacyCardJson: JSON.stringify(toLegacyAgentCard(card)),
    v1: new JsonRpcTransportHandler(requestHandler),
    legacy: new LegacyJsonRpcTransportHandler(requestHandler),
  };
}

export function mountA2a(app: Hono, serviceOf: (c: Context) => OfferService): void {
  const agentOf = perService(a2aAgent);

  app.get(AGENT_CARD_PATH, (c) => {
    const { cardJson, legacyCardJson } = agentOf(serviceOf(c));
    const body = isLegacyRequest(c.req.header(A2A_VERSION_HEADER)) ? legacyCardJson : cardJson;
    return c.body(body, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', vary: A2A_VERSION_HEADER });
  });

  app.post(A2A_JSONRPC_PATH, async (c) => {
    const requestedVersion = c.req.header(A2A_VERSION_HEADER) || undefined;
    const useLegacy = isLegacyRequest(requestedVersion);
    const mapToError = useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
    const mediaType = (c.req.header('content-type') ?? 'application/json').split(';', 1)[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json')
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'expected application/json' } }, 415);
    const read = await readJsonBody(c, A2A_MAX_BODY_BYTES);
    if (!read.ok) {
      if (read.refusal === 'body_too_large')
        return jsonRpcErrorResponse(null, { code: -32000, message: `request body exceeds ${A2A_MAX_BODY_BYTES} bytes` }, 413);
      if (read.refusal === 'json_too_deep') return jsonTooDeepResponse(read.value, 200);
      return jsonRpcErrorResponse(null, { code: JSON_RPC_PARSE_ERROR, message: 'Invalid JSON payload.' });
    }
    const body = read.value;
    if (!isRecord(body)) return jsonRpcErrorResponse(null, { code: JSON_RPC_PARSE_ERROR, message: 'Invalid JSON payload.' });
    const { card, v1, legacy } = agentOf(serviceOf(c));
    try {
      const context: ServerCallContext = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(c.req.header(HTTP_EXTENSION_HEADER)),
        user: new UnauthenticatedUser(),
        headers: c.req.header(),
        requestedVersion,
      });
      validateVersion(context.requestedVersion, card, 'JSONRPC');
      const result = await (useLegacy ? legacy : v1).handle(body, context);
      // The card declares streaming: false, so a stream is never the answer here.
      if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
        await (result as AsyncGenerator).return(undefined);
        return jsonRpcErrorResponse(body.id, { code: -32004, message: 'streaming is not supported by this agent' });
      }
      return c.json(result);
    } catch (error) {
      return jsonRpcErrorResponse(body.id, mapToError(error));
    }
  });
}
