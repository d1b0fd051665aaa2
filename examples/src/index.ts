// The example host loops, as the tests drive them (the npm scripts run the loop files directly).
export type { CreateMessage } from './anthropic-loop.js';
export { ANTHROPIC_RECORDING, replayAnthropic, runAnthropicLoop } from './anthropic-loop.js';
export type { ExampleHost } from './host.js';
export { openExampleHost } from './host.js';
export type { CreateCompletion } from './openai-loop.js';
export { OPENAI_RECORDING, replayOpenAI, runOpenAILoop } from './openai-loop.js';
export type { ExampleWorld } from './tools.js';
export { newWorld } from './tools.js';
