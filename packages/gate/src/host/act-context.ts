import type {
  ActAgent,
  ActDestination,
  ActPurpose,
  ActTool,
  ActType,
  AgentCandidateAct,
  ArgumentsDigest,
  ConsequenceClass,
  InitiatingPrincipal,
  InstructionProvenance,
  LiveArguments,
  PolicyState,
  SinkType,
  ToolProtocol,
} from '../act.js';
import { randomId } from '../random-id.js';

/** How the host runs one tool, known before the model names it (Tool-Use Binding draft, consequence classes: assign before enforce). */
export interface ToolBinding {
  /** Defaults to the vendor protocol of the block (ANTHROPIC_TOOL_USE, OPENAI_TOOL_CALL, MCP). */
  tool_protocol?: ToolProtocol;
  tool_endpoint?: string;
  destination?: ActDestination;
  /** e.g. API_REQUEST for a GPT Action, MEMORY_WRITE for a memory store, COMPUTER_USE for a computer tool. */
  act_type?: ActType;
  /** A Custom GPT Action's operationId MAY populate function_id when the name is generic. */
  function_id?: string;
}

/** What the classifier sees. `function_id` lets a policy tell computer-use actions apart. */
export interface ClassifyInput {
  tool_id: string;
  function_id?: string;
  tool_protocol?: ToolProtocol;
  tool_endpoint?: string;
}

/**
 * Everything a mapper needs, already resolved, so mappers are pure functions of (block, context):
 * the adapters fill `policy_state`, `sink_id` and `classify` from the Gate once per model message.
 */
export interface ActContext {
  /** Host session id → freshness.session_id, and part of every candidate_act_id. */
  session_id: string;
  /** Workspace org or user → initiating_principal. */
  principal: InitiatingPrincipal;
  /** The model name from the request → agent.model_id. */
  agent: ActAgent;
  purpose: ActPurpose;
  instruction_provenance?: InstructionProvenance;
  policy_state: PolicyState;
  /** The enforcer's own sink id (never the caller's). */
  sink_id: string;
  classify(tool: ClassifyInput): ConsequenceClass;
  /** Epoch milliseconds. */
  now: number;
  /** Lifetime of a candidate act (default 10 minutes: long enough for a person to approve an escalation). */
  act_ttl_ms?: number;
  tools?: Readonly<Record<string, ToolBinding>>;
  /** Freshness nonce source (default: 8 random bytes, hex). */
  nonce?: () => string;
}

export const DEFAULT_ACT_TTL_MS = 10 * 60 * 1000;

/**
 * Where a call's id comes from: a vendor's block, or a host-side call the gate wraps (a framework's
 * tool execution, an HTTP request, a payment, a memory write). Part of every candidate act id.
 */
export type ActIdSource =
  | 'anthropic'
  | 'openai'
  | 'responses'
  | 'mcp'
  | 'computer'
  | 'computer-call'
  | 'ai-sdk'
  | 'openai-agents'
  | 'claude-agent'
  | 'http'
  | 'payment'
  | 'memory';

/**
 * The candidate act id incorporates the vendor block id (Tool-Use Binding draft, Anthropic mapping: "id → incorporated into
 * candidate_act_id") and the session. Components are URI-encoded so no two (vendor, session,
 * id) triples can produce the same string. The vendor keeps an Anthropic id from colliding
 * with an OpenAI or MCP one.
 */
export function candidateActId(vendor: ActIdSource, sessionId: string, blockId: string): string {
  return `act:${vendor}:${encodeURIComponent(sessionId)}:${encodeURIComponent(blockId)}`;
}

export interface ActParts {
  candidate_act_id: string;
  act_type: ActType;
  tool: ActTool;
  arguments_digest: ArgumentsDigest;
  sink_type: SinkType;
  destination?: ActDestination;
  /** Defaults to ctx.classify(tool). */
  consequence_class?: ConsequenceClass;
}

/** Assemble the fifteen required fields (+ destination, provenance) from the mapped parts and the context. */
export function buildAct(parts: ActParts, ctx: ActContext): AgentCandidateAct {
  const act: AgentCandidateAct = {
    version: '1.0',
    object_type: 'agent_candidate_act',
    candidate_act_id: parts.candidate_act_id,
    act_type: parts.act_type,
    created_at: new Date(ctx.now).toISOString(),
    expires_at: new Date(ctx.now + (ctx.act_ttl_ms ?? DEFAULT_ACT_TTL_MS)).toISOString(),
    initiating_principal: ctx.principal,
    agent: ctx.agent,
    tool: parts.tool,
    purpose: ctx.purpose,
    arguments_digest: parts.arguments_digest,
    consequence_class: parts.consequence_class ?? ctx.classify(parts.tool),
    policy_state: ctx.policy_state,
    freshness: { nonce: ctx.nonce ? ctx.nonce() : randomId(8, 'hex').toUpperCase(), session_id: ctx.session_id },
    finality_sink: { sink_id: ctx.sink_id, sink_type: parts.sink_type },
  };
  if (parts.destination) act.destination = parts.destination;
  if (ctx.instruction_provenance) act.instruction_provenance = ctx.instruction_provenance;
  return act;
}

/**
 * The entry a model-chosen name selects in a host table: own properties only, so `constructor`,
 * `toString` or `__proto__` never select a value inherited from `Object.prototype`.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  return table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
}

/** The tool description for a named tool: the host's binding, with the vendor protocol as default. */
export function bindTool(name: string, protocol: ToolProtocol, ctx: ActContext): { tool: ActTool; binding: ToolBinding } {
  const binding = ownEntry(ctx.tools, name) ?? {};
  const tool: ActTool = { tool_id: name, function_id: binding.function_id ?? name, tool_protocol: binding.tool_protocol ?? protocol };
  if (binding.tool_endpoint) tool.tool_endpoint = binding.tool_endpoint;
  return { tool, binding };
}

/**
 * A vendor's map step (its `map.ts`): the act, and the snapshot of the live arguments whose digest
 * the act carries. dispatch takes the snapshot as it is: the arguments are digested once per call.
 */
export interface MappedCall<A> {
  act: AgentCandidateAct;
  live: LiveArguments<A>;
}
