// The tensor-core rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
export { f16Matrix } from './16-f16-matrix/f16-matrix.js';
export { compensatedMatrix } from './17-compensated-matrix/compensated-matrix.js';
export { stagedMatrix } from './23-staged-matrix/staged-matrix.js';
export { residentO } from './24-resident-o/resident-o.js';
export { SUBGROUP_MATRIX_FEATURE } from './matrix-rung.js';
