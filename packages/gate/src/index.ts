export * from './act.js';
export * from './adapters/index.js';
export * from './authority.js';
export { denyDecision } from './enforce.js';
export * from './errors.js';
export {
  actBindingDigest,
  decideEscalation,
  type EscalationDecision,
  type EscalationDecisionRequest,
} from './escalation.js';
export * from './gate.js';
export * from './ijson.js';
export * from './journal.js';
export * from './mappers/index.js';
export * from './policy.js';
export * from './store/index.js';
export * from './streaming/index.js';
