/**
 * A2A surface client. The agent card is read from the target's host; the bound field is the
 * skill `id` (Node Tool Binding v0.1 §3). The arguments go as the message's single data part (§4)
 * and the envelope comes back as a data part (§5). Two wire paths:
 * - A2A 1.0 through the SDK (`DefaultAgentCardResolver` + `JsonRpcTransportFactory` → `Client`),
 *   both given the agent's hardened fetch;
 * - a raw 0.3 `message/send` (JSON-RPC, no `A2A-Version` header) to the 0.3 card's `url`, the
 *   wire older agents speak.
 * Every host the capability was served from — the card's and the interface URL's — is
 * reported for the origin check (§6).
 */
import { randomUUID } from 'node:crypto';
import { type AgentCard, type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import { Client, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { asRecord } from '@vrpkit/core';
import { AGENT_CARD_PATH } from '@vrpkit/protocol';
import { AgentError } from '../errors.js';
import { boundToolName, errorOf, surfaceUrl, unreachableSurface } from './shared.js';
import type { ListedTool, OfferArgs, SurfaceContext, SurfaceError, SurfaceFetch } from './types.js';

type Outcome = { envelope: unknown; error: null } | { envelope: null; error: SurfaceError };

function oneData(values: unknown[], where: string): Outcome {
  if (values.length !== 1)
    return { envelope: null, error: { code: 'no_envelope', message: `expected one data part in the ${where}, got ${values.length}` } };
  return { envelope: values[0], error: null };
}

/** 1.0 result: a Message with the envelope data part, or a Task (completed → artifact data; anything else → failure). */
function outcomeOfV1(result: Message | Task): Outcome {
  const dataOf = (parts: Part[] | undefined) => (parts ?? []).flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []));
  if ('messageId' in result) return oneData(dataOf(result.parts), 'reply message');
  const state = result.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED) {
    const text = (result.status?.message?.parts ?? []).flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
    // §5: a failed task is an unverified outcome.
    return {
      envelope: null,
      error: { code: 'task_not_completed', message: `task ${TaskState[state ?? 0] ?? state}: ${text}`.slice(0, 500) },
    };
  }
  return oneData([...result.artifacts.flatMap((a) => dataOf(a.parts)), ...dataOf(result.status?.message?.parts)], 'completed task');
}

/** 0.3 result (JSON Schema shapes: `kind`, lowercase states). */
function outcomeOfV03(body: unknown): Outcome {
  const b = asRecord(body);
  if (b?.error !== undefined) {
    const e = asRecord(b?.error);
    return {
      envelope: null,
      error: { code: 'a2a_error', message: `JSON-RPC error ${String(e?.code)}: ${String(e?.message)}`.slice(0, 500) },
    };
  }
  const result = asRecord(b?.result);
  const dataOf = (parts: unknown) =>
    (Array.isArray(parts) ? parts : []).flatMap((p) => (asRecord(p)?.kind === 'data' ? [asRecord(p)?.data] : []));
  if (result?.kind === 'message') return oneData(dataOf(result.parts), 'reply message');
  if (result?.kind === 'task') {
    const status = asRecord(result.status);
    if (status?.state !== 'completed') {
      const parts = asRecord(status?.message)?.parts;
      const text = (Array.isArray(parts) ? parts : [])
        .flatMap((p) => {
          const t = asRecord(p)?.text;
          return typeof t === 'string' ? [t] : [];
        })
        .join(' ');
      return { envelope: null, error: { code: 'task_not_completed', message: `task ${String(status?.state)}: ${text}`.slice(0, 500) } };
    }
    const artifacts = Array.isArray(result.artifacts) ? result.artifacts : [];
    return oneData([...artifacts.flatMap((a) => dataOf(asRecord(a)?.parts)), ...dataOf(asRecord(status.message)?.parts)], 'completed task');
  }
  return { envelope: null, error: { code: 'a2a_protocol_error', message: 'the response is neither a message nor a task' } };
}

function skillsOf(card: unknown): ListedTool[] {
  const skills = asRecord(card)?.skills;
  return (Array.isArray(skills) ? skills : []).map((s) => ({ name: String(asRecord(s)?.id), input_schema: null }));
}

/** The card was read but names no A2A interface the client can call: reached, nothing called. */
function noInterface(
  base: Pick<SurfaceFetch, 'surface_url' | 'reached' | 'tools' | 'tool_name'>,
  cardUrl: URL,
  message: string,
): SurfaceFetch {
  return { ...base, served_from: [cardUrl.hostname], envelope: null, error: { code: 'a2a_no_interface', message } };
}

async function viaSdk(cardUrl: URL, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const fetchImpl = ctx.fetch as typeof fetch;
  let card: AgentCard;
  try {
    card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(cardUrl.href, '');
  } catch (e) {
    return unreachableSurface(cardUrl, e, 'a2a_unreachable');
  }
  const tools = skillsOf(card);
  const name = boundToolName(tools);
  const endpoint = (card.supportedInterfaces ?? []).find(
    (i) => i.protocolBinding.toUpperCase() === 'JSONRPC' && i.protocolVersion === '1.0',
  );
  const base = { surface_url: endpoint?.url ?? cardUrl.href, reached: true, tools, tool_name: name };
  if (!name) return { ...base, served_from: [cardUrl.hostname], envelope: null, error: null };
  if (!endpoint) return noInterface(base, cardUrl, 'the card lists no A2A 1.0 JSON-RPC interface');
  let servedFrom: string[];
  try {
    servedFrom = [cardUrl.hostname, new URL(endpoint.url).hostname];
  } catch {
    return noInterface(base, cardUrl, 'the interface URL is not a URL');
  }
  try {
    // The transport is built for exactly the interface checked above, not one the factory picks.
    const transport = await new JsonRpcTransportFactory({ fetchImpl }).create(endpoint.url, card);
    const client = new Client(transport, card);
    const message: Message = {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'data', value: { ...args } }, metadata: undefined, filename: '', mediaType: 'application/json' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const result = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
    const { envelope, error } = outcomeOfV1(result);
    return { ...base, served_from: servedFrom, envelope, error };
  } catch (e) {
    return { ...base, served_from: servedFrom, envelope: null, error: errorOf(e, 'a2a_call_failed') };
  }
}

async function viaLegacy(cardUrl: URL, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const unreachable = (e: unknown) => unreachableSurface(cardUrl, e, 'a2a_unreachable');
  let card: Record<string, unknown>;
  try {
    // No A2A-Version header: a 0.3 reader gets the 0.3 card.
    const res = await ctx.fetch(cardUrl.href, { headers: { accept: 'application/json' } });
    if (!res.ok) return unreachable(new AgentError('a2a_unreachable', { status: res.status }));
    card = asRecord(await res.json()) ?? {};
  } catch (e) {
    return unreachable(e);
  }
  const tools = skillsOf(card);
  const name = boundToolName(tools);
  const endpoint =
    typeof card.url === 'string' && String(card.preferredTransport ?? 'JSONRPC').toUpperCase() === 'JSONRPC' ? card.url : null;
  const base = { surface_url: endpoint ?? cardUrl.href, reached: true, tools, tool_name: name };
  if (!name) return { ...base, served_from: [cardUrl.hostname], envelope: null, error: null };
  let url: URL;
  try {
    url = new URL(endpoint ?? '');
  } catch {
    return noInterface(base, cardUrl, 'the 0.3 card has no JSON-RPC url');
  }
  const servedFrom = [cardUrl.hostname, url.hostname];
  const request = {
    jsonrpc: '2.0',
    id: randomUUID(),
    method: 'message/send',
    params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data: { ...args } }] } },
  };
  try {
    const res = await ctx.fetch(url.href, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(request),
    });
    const body: unknown = await res.json();
    const { envelope, error } = outcomeOfV03(body);
    return { ...base, served_from: servedFrom, envelope, error };
  } catch (e) {
    return { ...base, served_from: servedFrom, envelope: null, error: errorOf(e, 'a2a_call_failed') };
  }
}

export function fetchViaA2a(target: string, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const cardUrl = surfaceUrl(target, AGENT_CARD_PATH);
  return ctx.options.a2aProtocol === '0.3' ? viaLegacy(cardUrl, args, ctx) : viaSdk(cardUrl, args, ctx);
}
