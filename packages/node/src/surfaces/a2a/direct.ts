/**
 * The direct answer to the common A2A call: a lone `SendMessage` (A2A 1.0) or `message/send` (the
 * 0.3 binding) whose message is one data part of arguments, which the SDK would hand straight to
 * the offer executor (executor.ts) and answer with the reply message, is answered from the signed
 * offer's exact bytes (Node Tool Binding v0.1 §5: the envelope, unmodified, as the reply's data
 * part), byte for byte what the SDK writes for it — `Message.toJSON` / the 0.3 `toCompatMessage`,
 * members in their order — instead of cloning the ~7 KB reply twice (its result manager's
 * `structuredClone`s), converting it and serialising the envelope again. A differential test
 * (test/a2a-direct.test.ts) holds the two equal.
 *
 * Only a call whose outcome the SDK path would have the executor publish as a message takes this
 * path: a refused stay (a failed task, with its own ids and timestamp), a request of any other
 * shape and any failure are the SDK's.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from '@vrpkit/core';
import type { OfferOutcome, OfferService } from '../../service/index.js';
import { argumentsOfferFor } from '../offer-parses.js';

/** The A2A binding a direct call was made on: 1.0 (`SendMessage`) or the 0.3 legacy binding (`message/send`). */
export type A2aEra = 'v1' | 'legacy';

/** A call answered directly: its JSON-RPC id, the data part's arguments as sent, the context it continues, and the binding. */
export interface DirectSendMessage {
  id: string | number;
  args: Record<string, unknown>;
  /** The message's `contextId` when it names one; the SDK makes a new one otherwise (`_createRequestContext`). */
  contextId: string | undefined;
  era: A2aEra;
}

/**
 * Per binding, the plain request's shape: the JSON-RPC method, the message members allowed
 * (required ones first, `contextId` optional), the member values the SDK requires, and the one
 * data part's members.
 */
const SHAPES = {
  // A2A 1.0 JSON binding (`Message`, `Part`): the role as its enum name; `mediaType` optional, and
  // only the card's input mode, which the SDK's `_validateInputModes` accepts.
  v1: { method: 'SendMessage', fixed: { role: 'ROLE_USER' }, part: { mediaType: 'application/json' } },
  // 0.3 (`Message` with `kind: "message"`, `DataPart` with `kind: "data"`): `toCoreMessage` accepts the role `user`.
  legacy: { method: 'message/send', fixed: { kind: 'message', role: 'user' }, part: { kind: 'data' } },
} as const;

/**
 * The id, arguments and context of a body the SDK would run straight into the offer executor
 * with one data part of arguments, on the binding `era` the caller chose by the `A2A-Version`
 * header (the SDK's own rule); null for anything else, which the SDK then answers itself. The
 * shape is the plainest: `{jsonrpc:"2.0", id, method, params:{message}}` with exactly those
 * members, a string or safe-integer id, a non-empty `messageId`, the user role, an optional
 * non-empty `contextId` and exactly one part holding a JSON object as `data`. Anything more (a
 * tenant, a configuration, metadata, a task id, extensions, another part) is left to the SDK.
 */
export function directSendMessage(body: unknown, era: A2aEra): DirectSendMessage | null {
  const shape = SHAPES[era];
  if (!isRecord(body) || Object.keys(body).length !== 4) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== shape.method || (typeof id !== 'string' && !Number.isSafeInteger(id))) return null;
  if (!isRecord(params) || Object.keys(params).length !== 1 || !isRecord(params.message)) return null;
  const { message } = params;
  const { messageId, contextId, parts } = message;
  if (typeof messageId !== 'string' || messageId === '' || !Array.isArray(parts) || parts.length !== 1) return null;
  if (contextId !== undefined && (typeof contextId !== 'string' || contextId === '')) return null;
  const fixed: Record<string, string> = shape.fixed;
  const expected = 2 + Object.keys(fixed).length + (contextId === undefined ? 0 : 1);
  if (Object.keys(message).length !== expected || !Object.entries(fixed).every(([k, v]) => message[k] === v)) return null;
  const args = dataPartArguments(parts[0], shape.part);
  return args ? { id: id as string | number, args, contextId, era } : null;
}

/** The part's `data` when it is a JSON object and the part has no member but `data` and the binding's `extra` ones with their values. */
function dataPartArguments(part: unknown, extra: Readonly<Record<string, string>>): Record<string, unknown> | null {
  if (!isRecord(part) || !isRecord(part.data)) return null;
  for (const key of Object.keys(part)) if (key !== 'data' && part[key] !== extra[key]) return null;
  // 0.3 requires `kind`; on 1.0 `mediaType` may be left out.
  if (Object.hasOwn(extra, 'kind') && part.kind !== 'data') return null;
  return part.data;
}

/**
 * The reply of the SDK's path to a direct call, as the bytes before and after the envelope:
 * 1.0 `{"jsonrpc","id","result":{"message":{messageId, contextId, role, parts:[{data, mediaType}]}}}`;
 * 0.3 `{"jsonrpc","id","result":{kind, messageId, role, parts:[{kind, data}], contextId}}`.
 * The message id is new per reply, as the executor's (`agentMessage`).
 */
function replyJoints(call: DirectSendMessage): [string, string] {
  const id = JSON.stringify(call.id);
  const messageId = JSON.stringify(randomUUID());
  const contextId = JSON.stringify(call.contextId ?? randomUUID());
  if (call.era === 'v1') {
    return [
      `{"jsonrpc":"2.0","id":${id},"result":{"message":{"messageId":${messageId},"contextId":${contextId},"role":"ROLE_AGENT","parts":[{"data":`,
      ',"mediaType":"application/json"}]}}}',
    ];
  }
  return [
    `{"jsonrpc":"2.0","id":${id},"result":{"kind":"message","messageId":${messageId},"role":"agent","parts":[{"kind":"data","data":`,
    `}],"contextId":${contextId}}}`,
  ];
}

/** `offerFor` with the offer tool's accepted argument parses on A2A remembered (offer-parses.ts). */
const offerForArguments = argumentsOfferFor();

/**
 * The direct answer's pieces (the envelope's bytes shared, not copied), or null when the offer is
 * refused: the SDK's path then answers the failed task (§5) itself. In the same turn, without a
 * promise, when the offer is answered without a store wait (`OfferService.offer`).
 */
export function sendMessageAnswer(
  service: OfferService,
  call: DirectSendMessage,
): Uint8Array<ArrayBuffer>[] | null | Promise<Uint8Array<ArrayBuffer>[] | null> {
  const outcome = offerForArguments(service, call.args);
  return outcome instanceof Promise ? outcome.then((o) => replyTo(call, o)) : replyTo(call, outcome);
}

function replyTo(call: DirectSendMessage, outcome: OfferOutcome): Uint8Array<ArrayBuffer>[] | null {
  if (!outcome.ok) return null;
  const [head, tail] = replyJoints(call);
  return [Buffer.from(head), outcome.body, Buffer.from(tail)];
}
