/**
 * @vrpkit/gate: the Tool-Use Binding draft (draft-das-agentic-tool-binding-02) for host loops.
 * A model's tool block becomes a non-effective candidate act; the tool runs only after
 * enforce() has found and consumed a single-use authority bound to exactly its arguments.
 * Each group below is one subject of the draft (or of the drafts it builds on); `README.md`
 * says what each group proves and what it does not. The MCP sidecar is `@vrpkit/gate/proxy`.
 */
// biome-ignore-all assist/source/organizeImports: the list is grouped by the draft's subjects, not sorted by module path.

// The candidate act (Agent Candidate Act profile, candidate act schema; Tool-Use Binding draft, mapping).
export type {
  ActAgent,
  ActDestination,
  ActFreshness,
  ActPurpose,
  ActTool,
  ActType,
  AgentCandidateAct,
  ArgumentsDigest,
  ConsequenceClass,
  FinalitySink,
  InitiatingPrincipal,
  InstructionProvenance,
  LiveArguments,
  PolicyState,
  ProvenanceSource,
  SinkType,
  ToolProtocol,
} from './act.js';
export {
  ACT_TYPES,
  agentCandidateActSchema,
  CONSEQUENCE_CLASSES,
  PROVENANCE_SOURCES,
  SINK_TYPES,
  TOOL_PROTOCOLS,
  validateAct,
} from './act.js';

// The argument digest (Tool-Use Binding draft, OpenAI mapping: parse as I-JSON, then RFC 8785 + SHA-256);
// a `LiveArguments` snapshot carries its digest, so a call is digested once.
export { digestArguments, snapshotLiveArguments } from './act.js';
export { assertIJson, MAX_IJSON_DEPTH, parseIJson } from './ijson.js';

// Authority (Execution Handle draft: the handle object; Tool-Use Binding draft, MCP servers).
export type { AgentFinalityAuthority, VerifyAuthorityOptions, VerifyAuthorityResult } from './authority.js';
export { AUTHORITY_HEADER, AUTHORITY_JWS_TYPE, AUTHORITY_META_KEY, authoritySigner, signAuthority, verifyAuthority } from './authority.js';

// Cooperating sinks (Tool-Use Binding draft, MCP mapping): servers that check the forwarded authority themselves and spend it once.
export type { CooperatingSinkOptions, ForwardedAuthorityResult, ReplayGuard } from './cooperating-sink.js';
export { openSqliteReplayGuard, requireAuthority, verifyForwardedAuthority, verifyForwardedRequest } from './cooperating-sink.js';

// enforce() contract (Tool-Use Binding draft, enforce() contract MUSTs 1–5): the Gate and its decisions.
export type { EnforceDecision } from './errors.js';
export type { AuthorizeOutcome, DispatchOutcome, GateEvent, GateOptions } from './gate.js';
export type { DispatchGrant } from './dispatch.js';
export { Gate } from './gate.js';

// Dispatch journal (Tool-Use Binding draft, retries and T-G: consume before invoke, never a second invoke).
export type { JournalEntryView, JournalState, RetryOutcome } from './journal.js';
export { journalEntryView, retryOutcome } from './journal.js';

// Policy (Tool-Use Binding draft: consequence classes, pilot, out of scope).
export type { HotEnvelope, Policy, PolicyDecision, PolicyDocument, ProvenanceRule, ToolRule } from './policy.js';
export {
  DEFAULT_PROVENANCE_RULES,
  DEFAULT_TOOL_RULES,
  FAIL_CLOSED_CLASSES,
  loadPolicy,
  PolicyError,
  policyDocumentSchema,
} from './policy.js';

// Approvals inside the client (MCP 2026-07-28 client/elicitation, URL mode; basic/patterns/mrtr):
// single-use approval links to one act, and the sealed requestState of an escalated call.
export type { ApprovalLinkRow, ApprovalLinkState, ApprovalLinks, IssuedApprovalLink, LinkScope } from './approvals/links.js';
export {
  approvalLinkUrl,
  DEFAULT_APPROVAL_LINK_TTL_MS,
  isApprovalLinkToken,
  issueApprovalLink,
  readApprovalLink,
} from './approvals/links.js';
export type {
  ApprovalRequestState,
  ContinuationState,
  ExpectedContinuation,
  ExpectedRequestState,
  OpenedContinuation,
  OpenedRequestState,
  RequestStateSealer,
} from './approvals/request-state.js';
export { DEFAULT_REQUEST_STATE_TTL_MS, requestStateKey, requestStateSealer } from './approvals/request-state.js';

// Escalation: a person's approval binds to the digest the person reviewed.
export type { EscalationDecision, EscalationDecisionRequest, EscalationNotice, EscalationWait } from './escalation.js';
export {
  actBindingDigest,
  decideEscalation,
  ESCALATION_POLL_MS,
  escalationNotice,
  sendEscalationNotice,
  waitForEscalationDecision,
} from './escalation.js';

// Error registry and the host error object (Tool-Use Binding draft, error mapping; host error object).
export type { EfCode, HostErrorObject } from './errors.js';
export { EF_CODES, GATE_PROFILE, GateError, hostErrorObject, isEfCode } from './errors.js';

// Mappers, one per vendor (Tool-Use Binding draft, mapping): pure, they never authorize anything.
export type { ActContext, ActParts, ClassifyInput, MappedCall, ToolBinding } from './host/act-context.js';
export { bindTool, buildAct, candidateActId, DEFAULT_ACT_TTL_MS } from './host/act-context.js';
export type { ActIdSource } from './host/act-context.js';
export type { ToolUseBlockLike } from './vendors/anthropic/map.js';
export { mapToolUse, toolUseCall } from './vendors/anthropic/map.js';
export type {
  ComputerCallItemLike,
  ComputerUseBlock,
  ComputerUseLiveArgs,
  LiveBrowserState,
  LiveForm,
} from './vendors/computer-use/map.js';
export {
  computerCallLiveArgs,
  computerUseLiveArgs,
  mapComputerCall,
  mapComputerUseAction,
  OPENAI_COMPUTER_TOOL,
} from './vendors/computer-use/map.js';
export type { ResponsesFunctionCallLike, ToolCallLike } from './vendors/openai/map.js';
export { mapResponsesFunctionCall, mapToolCall } from './vendors/openai/map.js';
export type { McpMessageNotificationLike, McpServerIdentity, McpToolsCallParams } from './vendors/mcp/map.js';
export { mapMcpNotification, mapMcpToolsCall, mcpArguments, notificationToolCall } from './vendors/mcp/map.js';

// Host-loop adapters (Tool-Use Binding draft, informative pseudo-code: enforce, then invoke, else error),
// with each vendor's deny shape next to its adapter.
export type { DispatchGate, MapContext, ToolCallOutcome, ToolFunction, ToolTable } from './host/dispatch-mapped.js';
export { dispatchMapped, resolveActContext } from './host/dispatch-mapped.js';
export type { AnthropicHandleOptions, ToolResultBlock } from './vendors/anthropic/handle.js';
export { anthropicDenyResult, handleAnthropicMessage } from './vendors/anthropic/handle.js';
export type { FunctionCallOutputItem, ToolMessage } from './vendors/openai/handle.js';
export { handleOpenAIMessage, handleResponsesOutput, openAIDenyMessage, responsesDenyOutput } from './vendors/openai/handle.js';
export type { ComputerCallOutputItem, ComputerController, DenyMessageItem } from './vendors/computer-use/handle.js';
export { handleResponsesComputerCall } from './vendors/computer-use/handle.js';
export type { GatedMcpClient } from './vendors/mcp/handle.js';
export { dispatchMcpNotification, dispatchMcpToolsCall, gateMcpClient, mcpDenyResult } from './vendors/mcp/handle.js';

// Host-side calls that are not a vendor's tool block (Tool-Use Binding draft: hook before the tool call, or wrap
// the HTTP client; memory writes are MEMORY_WRITE; a PaymentCandidateAct is enforced before the PSP SDK).
export type { HostCall, HostCallResult } from './host/host-call.js';
export { dispatchHostCall, GateDenied, resultOrThrow } from './host/host-call.js';
export type { GatedFetchOptions, HttpRequestArgs } from './vendors/fetch/handle.js';
export { BOUND_HEADERS_EXCLUDED, gatedFetch, httpRequestArgs } from './vendors/fetch/handle.js';
export type {
  GatePaymentOptions,
  PaymentInstruction,
  PaymentIntentCreateLike,
  PaymentIntentsLike,
  PaymentLiveArgs,
} from './vendors/payments/handle.js';
export { gatePaymentIntents, paymentInstruction } from './vendors/payments/handle.js';
export type { AiSdkToolLike } from './vendors/ai-sdk/handle.js';
export { gateAiSdkTools } from './vendors/ai-sdk/handle.js';
export type { AgentsFunctionToolLike, AgentsMcpServerLike } from './vendors/openai-agents/handle.js';
export { gateAgentsFunctionTool, gateAgentsMcpServer } from './vendors/openai-agents/handle.js';
export type { ClaudePreToolUseInput, ClaudePreToolUseOutput } from './vendors/claude-agent/handle.js';
export { claudeAgentHooks, claudePreToolUseHook } from './vendors/claude-agent/handle.js';
export type { MemoryStoreLike, MemoryWrite } from './vendors/memory/handle.js';
export { gateMemoryWrite } from './vendors/memory/handle.js';

// Streaming (Tool-Use Binding draft, streaming: a partial block is not a block).
export type { AnthropicStreamEventLike, FinalizedToolUse } from './vendors/anthropic/stream.js';
export { ToolUseStreamAccumulator } from './vendors/anthropic/stream.js';
export type { ChatCompletionChunkLike } from './vendors/openai/stream.js';
export { ToolCallStreamAccumulator } from './vendors/openai/stream.js';

// The gate store (Execution Handle draft, atomic consumption; Finality-bound revocation draft, epochs):
// one object with each feature's port as a field, opened by `openGateStore(target)`.
export type {
  AuthorityRow,
  ConsumeOutcome,
  ConsumeRequest,
  DecisionRecord,
  DecisionResult,
  Epochs,
  EscalationRow,
  Escalations,
  EvidenceRow,
  Journal,
  JournalRow,
  Ledger,
  OutcomeRecord,
  StoreCallOptions,
} from './store/ports.js';
export type { AuthorityState, EscalationStatus, EvidenceDecision } from './store/ledger-schema.js';
export { EscalationBindingConflict, StoreConfigError, StoreTimeoutError } from './store/errors.js';
export type { GateStore } from './store/gate-store.js';
export { type GateStoreOptions, type GateStoreTarget, openGateStore, parseGateStoreTarget } from './store/open.js';
export type { SqliteStoreOptions } from './store/sqlite.js';
export { openSqliteStore } from './store/sqlite.js';
export type { PostgresStoreOptions } from './store/postgres.js';
export { openPostgresStore } from './store/postgres.js';

// The audit log: every decision hash-chained in the store, the head signed with the gate key.
export type { AuditCheckpoint, AuditEntry, AuditEvent, AuditKind, AuditSigner } from './audit/chain.js';
export { AUDIT_CHECKPOINT_EVERY, auditEntryHash } from './audit/chain.js';
export type { AuditProblem, AuditVerifyResult, ExportAuditOptions, VerifyAuditOptions } from './audit/log.js';
export { exportAudit, verifyAuditChain } from './audit/log.js';
export { AnchorError, type AnchorOutcome, anchorCheckpoints, parseAnchors, readAnchors } from './audit/anchor.js';
export type { AuditHead, AuditLog, AuditReadOptions } from './audit/port.js';

// The proxy's tables in the same store (tool pins and observations); the proxy itself is `@vrpkit/gate/proxy`.
export type { ProxyMode } from './proxy/schema.js';
export type { ObservationCount, PinOutcome, ProxyTables, SeenTool } from './proxy/tables.js';
// The arguments of escalated acts, for the approvals page (`@vrpkit/gate/ui`), purged after a retention period.
export type { PendingArgumentsTable } from './ui/pending-arguments-schema.js';
export { DEFAULT_ARGUMENTS_RETENTION_MS, type PendingArguments } from './ui/pending-arguments.js';

// Known approvers on the approvals page (issue 33 item 3): who may decide, no self-approval unless
// the policy allows it, and the passkeys enrolled through one-time links (the page itself is `@vrpkit/gate/ui`).
export {
  APPROVER_CODES,
  type ApproverIdentity,
  type ApproverRole,
  approverActor,
  holdsApproverRole,
  parseApproverClaim,
  type SelfApprovalRule,
  type SignInMethod,
  selfApprovalRule,
} from './approvers/identity.js';
export {
  type ApproverEnrollmentRow,
  type ApproverPasskeyRow,
  type ApproverPasskeys,
  DEFAULT_ENROLLMENT_TTL_MS,
  enrollmentUrl,
  issueApproverEnrollment,
} from './approvers/passkeys.js';
