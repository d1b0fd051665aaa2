export * from './node-binding.js';
