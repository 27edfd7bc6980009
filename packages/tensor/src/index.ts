// The tensor-core rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
export { f16Matrix } from './16-f16-matrix/f16-matrix.js';
export { compensatedMatrix } from './17-compensated-matrix/compensated-matrix.js';
export { stagedMatrix, STAGED_MATRIX_KERNEL } from './23-staged-matrix/staged-matrix.js';
export { residentO, residentOPlan, RESIDENT_O_KERNEL } from './24-resident-o/resident-o.js';
export { f16Resident, F16_RESIDENT_KERNEL } from './25-f16-resident/f16-resident.js';
