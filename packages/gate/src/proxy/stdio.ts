import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, ProtocolErrorCode, parseJSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import { asRecord } from '@vrpkit/core';
import type { GateProxy } from './proxy.js';
import { StdioDirect } from './stdio-call.js';

/** Default cap on one agent message (bytes of one line). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The agent side over stdio: newline-delimited JSON-RPC (MCP stdio transport). Unlike the SDK's
 * `StdioServerTransport`, which drops a line it cannot parse without a reply, this one answers
 * it as JSON-RPC 2.0 §5.1 says — `-32700` for text that is not JSON, `-32600` for JSON that is
 * not a JSON-RPC message or for a message over the size cap — so a client sees a clear error
 * instead of waiting for its timeout, and the proxy goes on reading the next line.
 */
export class AgentStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once when the transport closed (the agent's stdin ended, or `close()`), after `onclose`; not taken over by the SDK. */
  onended?: () => void;
  /** The connection's direct path (stdio-call.ts): offered every message before the SDK; not taken over by the SDK. */
  direct?: StdioDirect;
  private chunks: Buffer[] = [];
  private size = 0;
  /** True while skipping the rest of an oversized line. */
  private discarding = false;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onStreamError);
  }

  private readonly onData = (chunk: Buffer) => {
    let rest = chunk;
    for (let i = rest.indexOf(0x0a); i >= 0; i = rest.indexOf(0x0a)) {
      const tail = rest.subarray(0, i);
      rest = rest.subarray(i + 1);
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      // A whole line can arrive in one chunk: the cap applies to every line, not only to a partial one.
      if (this.size + tail.length > this.maxMessageBytes) {
        this.chunks = [];
        this.size = 0;
        this.tooLarge();
        continue;
      }
      // Most lines arrive whole: copied only when they came in pieces.
      const whole = this.chunks.length ? Buffer.concat([...this.chunks, tail]) : tail;
      this.chunks = [];
      this.size = 0;
      const end = whole.length && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length;
      const line = whole.toString('utf8', 0, end);
      if (line.trim()) this.handleLine(line);
    }
    if (this.discarding || !rest.length) return;
    this.chunks.push(rest);
    this.size += rest.length;
    if (this.size > this.maxMessageBytes) {
      this.chunks = [];
      this.size = 0;
      this.discarding = true;
      this.tooLarge();
    }
  };

  private tooLarge(): void {
    this.reply(null, ProtocolErrorCode.InvalidRequest, `message exceeds ${this.maxMessageBytes} bytes`);
  }

  private readonly onEnd = () => void this.close();
  private readonly onStreamError = (e: Error) => this.onerror?.(e);

  private handleLine(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, ProtocolErrorCode.ParseError, 'Parse error: the message is not JSON');
      return;
    }
    // A plain tools/call is a JSON-RPC request as it stands: the direct path needs no parse of it.
    if (this.direct?.offer(value)) return;
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      const id = asRecord(value)?.id;
      this.reply(
        typeof id === 'string' || typeof id === 'number' ? id : null,
        ProtocolErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message',
      );
      return;
    }
    this.onmessage?.(message);
  }

  private reply(id: string | number | null, code: number, message: string): void {
    // JSON-RPC 2.0 §5: the id is null when it could not be read; the SDK's message type has no null id.
    void this.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  /** Write `text` (whole lines) to the agent. */
  write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onStreamError);
    // A paused stdin no longer keeps the process alive.
    this.input.pause();
    this.direct?.close();
    this.onclose?.();
    this.onended?.();
  }
}

/**
 * Serve one agent over stdio, either revision (SDK v2 `serveStdio`): the connection's opening
 * message picks the era — `server/discover` or an enveloped request: 2026-07-28, `initialize`:
 * 2025-11-25 — and one agent `Server` is pinned to it for the connection's life; on 2026-07-28 the
 * SDK serves `subscriptions/listen` and routes the change notifications the proxy relays onto it.
 * `onClosed` runs when the agent's stdin ends.
 */
export function serveAgentStdio(proxy: GateProxy, transport: AgentStdioTransport, onClosed: () => void): StdioServerHandle {
  transport.onended = onClosed;
  // Handed over after the SDK took `onmessage`: a call the direct path cannot answer goes to the SDK with its outcome.
  const direct = new StdioDirect(
    proxy,
    (line) => transport.write(line),
    (message) => transport.onmessage?.(message),
  );
  transport.direct = direct;
  return serveStdio(
    ({ era }) => {
      const server = proxy.createAgentServer(era, true, undefined, direct);
      direct.attach(server, era);
      return server;
    },
    { transport },
  );
}
