export * from './errors.js';
export * from './postgres.js';
export * from './proxy-schema.js';
export * from './proxy-tables.js';
export * from './schema.js';
export * from './sqlite.js';
export * from './types.js';
