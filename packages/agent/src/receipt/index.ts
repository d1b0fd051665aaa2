export * from './mcp-binding.js';
export * from './resolve.js';
export * from './verify.js';
