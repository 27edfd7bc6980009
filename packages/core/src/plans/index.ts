// Plan code that the lessons (the fp32 and matrix-unit rung families) and the product (@fa/sdpa) both use: tile sizes,
// key splits, what the matrix units need. It lives below both, so the product imports no lesson package.
export * from './row-group.js';
export * from './key-splits.js';
export * from './subgroup-matrix.js';
export * from './subgroup-plan.js';
