export * from './errors.js';
export * from './plan.js';
export * from './timing.js';
export * from './transfer.js';
export * from './pipeline.js';
export * from './attention-runner.js';
export * from './single-pass.js';
export * from './wgsl-reflect.js';
