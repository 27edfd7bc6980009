// The tensor-core rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
export { f16Matrix, F16_MATRIX_KERNEL } from './16-f16-matrix/f16-matrix.js';
export { compensatedMatrix, COMPENSATED_MATRIX_KERNEL } from './17-compensated-matrix/compensated-matrix.js';
export { stagedMatrix, stagedPlan, stagedWorkgroupBytes, STAGED_MATRIX_KERNEL } from './23-staged-matrix/staged-matrix.js';
export { residentO, residentPlan, residentWorkgroupBytes, RESIDENT_O_KERNEL } from './24-resident-o/resident-o.js';
export { matrixPlan, matrixRowFragments, matrixWorkgroupBytes, matrixSupport, matrixUnavailable, MATRIX_BC, MATRIX_MAX_HEAD_SIZE, SUBGROUP_MATRIX_FEATURE } from './matrix-rung.js';
