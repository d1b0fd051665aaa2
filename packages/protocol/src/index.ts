export * from './constants.js';
export * from './mcp-profile.js';
export * from './schemas.js';
export * from './types.js';
