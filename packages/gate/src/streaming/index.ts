export * from './anthropic.js';
export * from './openai.js';
