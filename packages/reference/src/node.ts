/** @fa/reference/node: everything of '@fa/reference' plus the `cpu` rung, which runs on Node's worker threads. */
export * from './index.js';
export { cpu } from './cpu.js';
