// VRP receipt envelope v1: verification as the reference receipt verifier does it.

// MCP Composition Profile, binding the assertion to an observed call.
export type { CheckMcpCallReceiptParams, McpReceiptBindingCode, McpReceiptCheck, McpReceiptLayerReport } from './mcp-binding.js';
export { checkMcpCallReceipt, receiptFromCallResult } from './mcp-binding.js';
// MCP Composition Profile: vrpkit's verdict on the signed content of an MCP receipt.
export type { McpReceiptCode, McpReceiptLayer, McpReceiptVerification, ResolveSignerJwks, VerifyMcpReceiptOptions } from './mcp-receipt.js';
export { locateLayer, unverifiedJwsPayload, verifyMcpReceipt } from './mcp-receipt.js';
// Key resolution: only from the issuer's (or signer's) own domain, through the agent's JWKS cache.
export type { ReceiptJwksResolverOptions } from './resolve.js';
export {
  createReceiptJwksResolver,
  createSignerJwksResolver,
  isReceiptSourceOnIssuerDomain,
  receiptIssuerDomain,
  signerJwksOf,
} from './resolve.js';
export type {
  AttestationResult,
  AttestationStatus,
  ReceiptErrorCode,
  ReceiptVerificationResult,
  ResolveReceiptJwks,
  VerifyReceiptOptions,
} from './verify.js';
export { verifyReceipt } from './verify.js';
