/**
 * A 2025-11-25 downstream's `tools/call` held open across a 2026-07-28 agent's retries (issue 32
 * item 5, the cross case): the downstream asks with `elicitation/create` in the middle of its call,
 * and the agent can only be asked with an `InputRequiredResult` and answer with a retry (MCP
 * 2026-07-28 basic/patterns/mrtr). The downstream call runs on — its request open, in this process —
 * while the agent answers; each event (another question, the result, a failure) is taken by the
 * agent's next request. A retry that reaches another proxy process finds no held call and is refused.
 */
import type { CallToolResult, ElicitRequestParams, ElicitResult, InputRequiredResult } from '@modelcontextprotocol/client';

export type HeldEvent =
  /** The downstream asks (already checked and marked): `answer` resolves its `elicitation/create`. */
  | { kind: 'elicit'; params: ElicitRequestParams; answer(r: ElicitResult): void }
  | { kind: 'done'; answer: CallToolResult | InputRequiredResult }
  | { kind: 'failed'; error: unknown };

export class HeldCall {
  private readonly queue: HeldEvent[] = [];
  private waiter: ((e: HeldEvent | undefined) => void) | undefined;
  /** Set once the agent was answered with a question: its first request is over, the call is held. */
  held = false;
  /** The downstream call's cancellation: the agent's request's until the call is held, then the proxy's stop only. */
  readonly abort = new AbortController();

  constructor(first: AbortSignal, stopped: AbortSignal) {
    first.addEventListener(
      'abort',
      () => {
        if (!this.held) this.abort.abort(first.reason);
      },
      { once: true },
    );
    stopped.addEventListener('abort', () => this.abort.abort(stopped.reason), { once: true });
  }

  push(e: HeldEvent): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(e);
    else this.queue.push(e);
  }

  /** The next event, or undefined when the agent's request waiting for it ends first (the event stays queued). */
  next(signal: AbortSignal): Promise<HeldEvent | undefined> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const gone = () => {
        if (this.waiter === resolve) this.waiter = undefined;
        resolve(undefined);
      };
      signal.addEventListener('abort', gone, { once: true });
      this.waiter = (e) => {
        signal.removeEventListener('abort', gone);
        resolve(e);
      };
    });
  }
}

/** The held calls of this process, by the id their sealed continuation carries; an unanswered one is cancelled at its expiry. */
export class HeldCalls {
  private readonly calls = new Map<string, { call: HeldCall; answer(r: ElicitResult): void; expires: number }>();

  hold(id: string, call: HeldCall, answer: (r: ElicitResult) => void, expires: number, now: number): void {
    for (const [k, e] of this.calls)
      if (e.expires <= now) {
        this.calls.delete(k);
        e.answer({ action: 'cancel' });
      }
    this.calls.set(id, { call, answer, expires });
  }

  /** The held call for a continuation, once: a second retry with the same state finds nothing. */
  take(id: string): { call: HeldCall; answer(r: ElicitResult): void } | undefined {
    const e = this.calls.get(id);
    this.calls.delete(id);
    return e;
  }
}
