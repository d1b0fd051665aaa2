// The runners' error codes (an input they cannot run).
export { CONFORMANCE_CODES, type ConformanceCode, ConformanceError } from './errors.js';
// Node conformance for any node (Core VRP v0.1, Node Tool Binding v0.1 §3–§6 and §10, the MCP
// composition profile's receipt binding): the checker, its rule ids and the report it returns.
export type { Evidence } from './evidence.js';
export { toJUnit } from './junit.js';
export type {
  NodeCheckOptions,
  NodeConformanceReport,
  RuleResult,
  SurfaceFinding,
  SurfaceSelection,
  ToolSurface,
} from './node-check.js';
export { checkNode, failedRules, TOOL_SURFACES } from './node-check.js';
// Node-surface vectors: recorded node reads with the expected verdict per rule, replayed offline.
export type { NodeVector, NodeVectorOutcome, RecordedExchange } from './node-vectors.js';
export {
  exchangeRecorder,
  NODE_VECTOR_KIND,
  recordNodeVector,
  replayFetch,
  replayNodeVector,
  replayNodeVectors,
  verdictsOf,
} from './node-vectors.js';
export type { RuleId } from './rules.js';
export { RULE_IDS, RULES } from './rules.js';
// Verifier conformance reports (VRP conformance-report-v0.1) over a vector corpus.
export type { ConformanceReport, CorpusRunOptions, Digest, VectorOutcome } from './vectors.js';
export { corpusDigest, engineDigest, runVectorCorpus } from './vectors.js';
export type { CheckStatus } from './verdict.js';
export { comparableOffer } from './verdict.js';
