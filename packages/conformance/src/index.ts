// Node Tool Binding v0.1 §10: the node conformance checker and the report it returns.
export type {
  CheckResult,
  CheckStatus,
  NodeBindingCheckOptions,
  NodeBindingReport,
  SurfaceConformance,
  ToolSurface,
} from './node-binding.js';
export { checkNodeToolBinding, comparableOffer, TOOL_SURFACES } from './node-binding.js';
