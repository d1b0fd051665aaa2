export * from './constants.js';
export * from './dates.js';
export * from './mcp-profile.js';
export * from './offer-request.js';
export * from './schemas.js';
export * from './types.js';
