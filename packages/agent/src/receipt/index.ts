export * from './mcp-binding.js';
export * from './mcp-receipt.js';
export * from './resolve.js';
export * from './verify.js';
