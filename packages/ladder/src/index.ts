export * from './ladder.js';
export * from './cases.js';
