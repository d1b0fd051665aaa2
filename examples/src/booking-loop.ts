/**
 * The gated direct-booking loop, for Anthropic Messages and OpenAI Responses: the model finds a
 * host's verified offer over MCP, quotes it, and asks to book it; the booking runs only with a
 * person's approval bound to that verified offer (docs/booking.md). Without an API key it
 * replays recorded model responses; with ANTHROPIC_API_KEY / OPENAI_API_KEY it runs live.
 *
 *   npx tsx --conditions=vrpkit-source examples/src/booking-loop.ts anthropic|responses [--yes]
 *
 * It starts a fresh local node for villa-booking.example (dev CA, clock at RECORDED_AT) and books
 * through it; `--yes` is the person approving the booking the approval view shows.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Message, MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { BOOKING_TOOL_SPECS, BookingHost, type BookingPerson, createHardenedFetch } from '@vrpkit/agent';
import { fixedClock, generateEd25519Jwk } from '@vrpkit/core';
import { Gate, loadPolicy, openSqliteStore, type ToolCallOutcome } from '@vrpkit/gate';
import { confirmOnGuestPage, initNode, serveNode, startDevMailbox } from '@vrpkit/node';
import type { FunctionTool, Response, ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses';

export const BOOKING_POLICY_FILE = fileURLToPath(new URL('../booking-policy.yaml', import.meta.url));
export const ANTHROPIC_BOOKING_RECORDING = fileURLToPath(new URL('../recordings/booking-anthropic-messages.json', import.meta.url));
export const RESPONSES_BOOKING_RECORDING = fileURLToPath(new URL('../recordings/booking-openai-responses.json', import.meta.url));

/** The stay the recordings ask for, and the instant they were recorded at (a node on this clock signs offers for it). */
export const RECORDED_AT = '2027-03-01T09:00:00Z';
export const BOOKING_PROMPT =
  'Find the verified direct offer for 2 guests from 2027-04-10 to 2027-04-13 at villa-booking.example and book it for me if it is safe to quote.';

/** The person the host books for (UCP `booker`): from the user's profile, never from the model. */
export const DEMO_BOOKER: BookingPerson = { first_name: 'Alice', last_name: 'Example', email: 'alice@example.com' };

export type CreateMessage = (params: MessageCreateParamsNonStreaming) => Promise<Message>;
export type CreateResponse = (params: ResponseCreateParamsNonStreaming) => Promise<Response>;

export const ANTHROPIC_BOOKING_TOOLS: Tool[] = BOOKING_TOOL_SPECS.map((t) => ({
  name: t.name,
  description: t.description,
  input_schema: t.schema,
}));
export const RESPONSES_BOOKING_TOOLS: FunctionTool[] = BOOKING_TOOL_SPECS.map((t) => ({
  type: 'function',
  name: t.name,
  description: t.description,
  parameters: t.schema,
  strict: false,
}));

export interface BookingRun {
  outcomes: ToolCallOutcome[];
  final: string;
}

/** Anthropic Messages: every `tool_use` block goes through the booking host (and so through the gate). */
export async function runAnthropicBookingLoop(opts: {
  createMessage: CreateMessage;
  host: BookingHost;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<BookingRun> {
  const messages: MessageParam[] = [{ role: 'user', content: opts.prompt ?? BOOKING_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createMessage({ model: opts.model, max_tokens: 1024, tools: ANTHROPIC_BOOKING_TOOLS, messages });
    messages.push({ role: 'assistant', content: res.content });
    if (res.stop_reason !== 'tool_use')
      return { outcomes, final: res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n') };
    const blocks = res.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    // Parallel blocks are dispatched in parallel: one approval never covers two of them.
    const handled = await Promise.all(blocks.map((b) => opts.host.handle('anthropic', b)));
    outcomes.push(...handled.map((h) => h.outcome));
    messages.push({
      role: 'user',
      content: handled.map((h, i) => ({
        type: 'tool_result' as const,
        tool_use_id: blocks[i]!.id,
        content: h.text,
        ...(h.isError ? { is_error: true } : {}),
      })),
    });
  }
  return { outcomes, final: '' };
}

/** OpenAI Responses: every `function_call` item goes through the booking host. */
export async function runResponsesBookingLoop(opts: {
  createResponse: CreateResponse;
  host: BookingHost;
  model: string;
  prompt?: string;
  maxTurns?: number;
}): Promise<BookingRun> {
  const input: ResponseInputItem[] = [{ role: 'user', content: opts.prompt ?? BOOKING_PROMPT }];
  const outcomes: ToolCallOutcome[] = [];
  for (let turn = 0; turn < (opts.maxTurns ?? 6); turn++) {
    const res = await opts.createResponse({ model: opts.model, tools: RESPONSES_BOOKING_TOOLS, input });
    input.push(...(res.output as ResponseInputItem[]));
    const calls = res.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
    // The raw API object (a recording) has no SDK `output_text` convenience: read the message items.
    if (!calls.length)
      return {
        outcomes,
        final: res.output
          .flatMap((o) => (o.type === 'message' ? o.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : []))
          .join('\n'),
      };
    const handled = await Promise.all(
      calls.map((c) => {
        let args: unknown;
        try {
          args = JSON.parse(c.arguments);
        } catch {
          args = c.arguments; // not JSON: the host's schema check refuses it
        }
        return opts.host.handle('responses', { id: c.call_id, name: c.name, input: args });
      }),
    );
    outcomes.push(...handled.map((h) => h.outcome));
    input.push(...handled.map((h, i) => ({ type: 'function_call_output' as const, call_id: calls[i]!.call_id, output: h.text })));
  }
  return { outcomes, final: '' };
}

/** Recorded Messages API responses in order; like the API, a turn that leaves a tool_use unanswered is refused. */
export function replayAnthropicBooking(recording: Message[]): CreateMessage {
  let i = 0;
  return async (params) => {
    const previous = recording[i - 1];
    const last = params.messages.at(-1);
    const answered = new Set(
      Array.isArray(last?.content) ? last.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : [],
    );
    for (const b of previous?.content ?? [])
      if (b.type === 'tool_use' && !answered.has(b.id)) throw new Error(`tool_use ${b.id} has no tool_result`);
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

/** Recorded Responses API responses in order; like the API, a function_call without its output is refused. */
export function replayResponsesBooking(recording: Response[]): CreateResponse {
  let i = 0;
  return async (params) => {
    const items = Array.isArray(params.input) ? params.input : [];
    const answered = new Set(items.flatMap((m) => ('type' in m && m.type === 'function_call_output' ? [m.call_id] : [])));
    for (const o of recording[i - 1]?.output ?? [])
      if (o.type === 'function_call' && !answered.has(o.call_id)) throw new Error(`function_call ${o.call_id} has no output`);
    const next = recording[i++];
    if (!next) throw new Error('the recording has no more responses');
    return structuredClone(next);
  };
}

export function readRecording<T>(file: string): T[] {
  return JSON.parse(readFileSync(file, 'utf8')) as T[];
}

async function main(): Promise<void> {
  const vendor = process.argv[2] === 'responses' ? 'responses' : 'anthropic';
  const yes = process.argv.includes('--yes');
  // The model: live with a key, else the recorded responses.
  let model: string;
  let run: (host: BookingHost) => Promise<BookingRun>;
  if (vendor === 'anthropic') {
    let createMessage: CreateMessage;
    model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5';
    if (process.env.ANTHROPIC_API_KEY) {
      const { default: Anthropic } = await import('@anthropic-ai/sdk');
      const client = new Anthropic();
      createMessage = (params) => client.messages.create(params);
    } else {
      const recording = readRecording<Message>(ANTHROPIC_BOOKING_RECORDING);
      model = recording[0]!.model;
      createMessage = replayAnthropicBooking(recording);
      process.stdout.write('ANTHROPIC_API_KEY is not set: replaying recorded responses.\n');
    }
    run = (host) => runAnthropicBookingLoop({ createMessage, host, model });
  } else {
    let createResponse: CreateResponse;
    model = process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';
    if (process.env.OPENAI_API_KEY) {
      const { default: OpenAI } = await import('openai');
      const client = new OpenAI();
      createResponse = (params) => client.responses.create(params);
    } else {
      const recording = readRecording<Response>(RESPONSES_BOOKING_RECORDING);
      model = recording[0]!.model;
      createResponse = replayResponsesBooking(recording);
      process.stdout.write('OPENAI_API_KEY is not set: replaying recorded responses.\n');
    }
    run = (host) => runResponsesBookingLoop({ createResponse, host, model });
  }
  const dir = mkdtempSync(join(tmpdir(), 'vrpkit-booking-example-'));
  const clock = fixedClock(RECORDED_AT);
  const dataDir = join(dir, 'node');
  await initNode({ domain: 'villa-booking.example', dataDir, clock });
  // The guest's one-time code goes by real SMTP to a local server: with --yes the example confirms as the guest.
  const mailbox = await startDevMailbox();
  const node = await serveNode({ dataDir, dev: true, port: 0, clock, guestMail: { url: mailbox.url } });
  const fetch = createHardenedFetch({ connectTo: [`villa-booking.example:443:127.0.0.1:${node.port}`], ca: [node.caPem!] });
  const { privateJwk } = await generateEd25519Jwk();
  let host: BookingHost | undefined;
  const gate = new Gate({
    store: await openSqliteStore(join(dir, 'gate.sqlite')),
    policy: loadPolicy(BOOKING_POLICY_FILE),
    sinkId: 'example-booking-host',
    signingKey: { privateJwk, kid: 'example-booking-gate' },
    clock,
    approve: async (act) => {
      const view = host?.approvalFor(act.candidate_act_id)?.view;
      process.stdout.write(
        `approval: ${view?.summary ?? act.candidate_act_id} → ${yes ? 'approved (--yes)' : 'not approved (run with --yes)'}\n`,
      );
      return yes && view !== undefined;
    },
  });
  host = new BookingHost({
    gate,
    nodeUrl: 'https://villa-booking.example',
    booker: DEMO_BOOKER,
    fetch,
    // This example agent's UCP profile URL (`UCP-Agent`): named, never fetched by the node (docs/booking.md).
    agentProfile: 'https://example-agent.vrpkit.example/.well-known/ucp',
    session_id: `example-${vendor}`,
    model,
    clock,
    handOff: (h) =>
      yes
        ? confirmOnGuestPage(fetch, mailbox, h.continue_url, DEMO_BOOKER.email, (line) => process.stdout.write(`${line}\n`))
        : Promise.resolve(),
    guestWait: { timeoutMs: 10_000, pollMs: 100 },
  });
  try {
    const r = await run(host);
    for (const step of host.steps) process.stdout.write(`${JSON.stringify(step)}\n`);
    for (const o of r.outcomes)
      process.stdout.write(`${o.name}: ${o.decision.allow ? 'allowed' : `denied ${o.decision.code}`}${o.invoked ? ', ran' : ''}\n`);
    process.stdout.write(`model: ${r.final}\n`);
  } finally {
    await gate.close();
    await fetch.close();
    await node.close();
    await mailbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
