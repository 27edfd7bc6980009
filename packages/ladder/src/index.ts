export * from './ladder.js';
export * from './cases.js';
export * from './conformance.js';
