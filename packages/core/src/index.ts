export * from './base64url.js';
export * from './canonical.js';
export * from './clock.js';
export * from './digest.js';
export * from './errors.js';
export * from './jws.js';
export * from './stream.js';
