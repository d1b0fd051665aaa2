export * from './anthropic.js';
export * from './computer.js';
export * from './context.js';
export * from './mcp.js';
export * from './openai.js';
