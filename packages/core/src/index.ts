export * from './rung.js';
export * from './error-bound.js';
export * from './errors.js';
export * from './gpu-context.js';
export * from './run-all.js';
export * from './stream.js';
export * from './gpu/index.js';
export * from './sdpa/problem.js';
