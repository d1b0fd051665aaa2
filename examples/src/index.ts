export * from './anthropic-loop.js';
export * from './host.js';
export * from './openai-loop.js';
export * from './report.js';
export * from './tools.js';
