/**
 * The direct answer to the common call on a stdio connection (issue 37 item 2): once the SDK has
 * pinned the connection's era and served a request on it, a lone, plain `tools/call` the agent
 * `Server` would hand straight to its `tools/call` handler is run through the same call pipeline
 * (pin check, act, the gate's enforce, the downstream call, the journal) without the SDK's
 * per-message schemas, dispatch and result validation, and a plain `CallToolResult` it comes back
 * with is written as the bytes the SDK writes for it. Anything else the call ends with — a thrown
 * error, an `InputRequiredResult`, a result in a shape the SDK would reorder or default — is handed
 * to the SDK with its outcome (`take`), so its wording and checks stay the SDK's; every other
 * message goes to the SDK as it came. test/proxy-stdio-call.test.ts holds the two paths equal,
 * byte for byte, on both revisions.
 *
 * Learnt from the HTTP side's direct path (direct-call.ts), which answers 2026-07-28 the same way.
 */
import type { CallToolResult, InputRequiredResult, JSONRPCMessage, RequestId, Server } from '@modelcontextprotocol/server';
import { isRecord } from '@vrpkit/core';
import {
  type AgentEra,
  type PlainLegacyCall,
  type PlainModernCall,
  plainAnswer,
  plainModernEnvelope,
  type StdioReplays,
} from './plain-call.js';
import type { GateProxy } from './proxy.js';

/**
 * The call, when `message` is `{jsonrpc:"2.0", id, method:"tools/call", params}` with exactly those
 * members, a string or safe-integer id, and params of exactly `name` (a string), `arguments` (an
 * object) and, on 2026-07-28, `_meta` holding the per-request envelope and nothing else (no
 * progress token, no `requestState` or `inputResponses`: those are the SDK's) that the SDK's own
 * `classifyInboundRequest` classifies `modern` on 2026-07-28 (it validates the envelope, as the
 * SDK's per-request check on a pinned stdio connection does); null for anything else.
 */
export function plainStdioCall(message: unknown, era: 'legacy'): PlainLegacyCall | null;
export function plainStdioCall(message: unknown, era: 'modern'): PlainModernCall | null;
export function plainStdioCall(message: unknown, era: AgentEra): PlainLegacyCall | PlainModernCall | null;
export function plainStdioCall(message: unknown, era: AgentEra): PlainLegacyCall | PlainModernCall | null {
  if (!isRecord(message) || Object.keys(message).length !== 4) return null;
  const { jsonrpc, id, method, params } = message;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isRecord(params)) return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  if (Object.keys(params).length !== (era === 'modern' ? 3 : 2)) return null;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || !isRecord(args)) return null;
  const call = { id: id as string | number, params };
  if (era === 'legacy') return call as PlainLegacyCall;
  return plainModernEnvelope(meta, name, message) ? (call as PlainModernCall) : null;
}

/** A call's outcome: what the pipeline returned, or what it threw. */
type Outcome = { result: CallToolResult | InputRequiredResult } | { error: unknown };

/**
 * One stdio connection's direct path. `offer` is given every message the agent sends, before the
 * SDK: it takes a plain `tools/call` once the connection's `Server` is serving (and no call of that
 * id is running here or waiting to be answered), and sees every cancellation, so a call it runs is
 * cancelled as the SDK cancels its own (its answer is never written). `send` writes one line to
 * the agent; `deliver` hands a message to the SDK.
 */
export class StdioDirect implements StdioReplays {
  private server: Server | undefined;
  private era: AgentEra = 'legacy';
  /** True once the SDK ran one of the proxy's handlers on `server` (the era is pinned, the `Server` connected). */
  private serving = false;
  private readonly running = new Map<RequestId, AbortController>();
  private readonly outcomes = new Map<RequestId, () => Promise<CallToolResult | InputRequiredResult>>();

  constructor(
    private readonly proxy: GateProxy,
    private readonly send: (line: string) => Promise<void>,
    private readonly deliver: (message: JSONRPCMessage) => void,
  ) {}

  /** The agent `Server` the SDK made for this connection (a probe may be replaced: only a serving one is used). */
  attach(server: Server, era: AgentEra): void {
    this.server = server;
    this.era = era;
    this.serving = false;
  }

  served(server: Server): void {
    if (server === this.server) this.serving = true;
  }

  take(id: RequestId): (() => Promise<CallToolResult | InputRequiredResult>) | undefined {
    const outcome = this.outcomes.get(id);
    if (outcome) this.outcomes.delete(id);
    return outcome;
  }

  /** True when the direct path took `message`; false: the SDK's (a cancellation is seen here and still goes to the SDK). */
  offer(message: unknown): boolean {
    const server = this.server;
    if (!this.serving || !server) return false;
    if (isRecord(message) && message.method === 'notifications/cancelled') {
      // The SDK aborts the request's signal with the notification's reason (basic/utilities/cancellation).
      const params = isRecord(message.params) ? message.params : {};
      const id = params.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.running.get(id)?.abort(params.reason);
      return false;
    }
    const call = plainStdioCall(message, this.era);
    if (!call || this.running.has(call.id) || this.outcomes.has(call.id)) return false;
    void this.run(server, this.era, call, message as JSONRPCMessage);
    return true;
  }

  /** The connection closed: calls still running stop, as the SDK aborts its handlers; none is answered. */
  close(): void {
    for (const controller of this.running.values()) controller.abort(new Error('Connection closed'));
    this.running.clear();
    this.outcomes.clear();
  }

  private async run(server: Server, era: AgentEra, call: PlainLegacyCall | PlainModernCall, message: JSONRPCMessage): Promise<void> {
    const controller = new AbortController();
    this.running.set(call.id, controller);
    let outcome: Outcome;
    try {
      const result =
        era === 'modern'
          ? await this.proxy.callPlainModern(call as PlainModernCall, controller.signal)
          : await this.proxy.callPlainLegacy(server, call, controller.signal);
      outcome = { result };
    } catch (error) {
      outcome = { error };
    } finally {
      if (this.running.get(call.id) === controller) this.running.delete(call.id);
    }
    // The SDK answers nothing to a request cancelled (or a connection closed) while it ran.
    if (controller.signal.aborted) return;
    if ('result' in outcome) {
      const line = plainAnswer(outcome.result, call.id, era, this.proxy.serverInfo);
      if (line !== null) return this.send(`${line}\n`);
    }
    this.outcomes.set(call.id, () => ('result' in outcome ? Promise.resolve(outcome.result) : Promise.reject(outcome.error)));
    this.deliver(message);
  }
}
