/** Every experiment of the package, in the order of experiments/README.md. */
import { dispatchFloor } from './dispatch-floor.js';
import type { Experiment } from './experiment.js';
import { fp32TilesSweep } from './fp32-tiles-sweep.js';
import { ldsPatternBench } from './lds-pattern-bench.js';
import { matrixVariants } from './matrix-variants.js';
import { microtilesVariants } from './microtiles-variants.js';
import { readBandwidth } from './read-bandwidth.js';
import { residentWorkgroupsExperiment } from './resident-workgroups.js';
import { subgroupMatrixBench } from './subgroup-matrix-bench.js';

export const EXPERIMENTS: readonly Experiment[] = [subgroupMatrixBench, ldsPatternBench, microtilesVariants, fp32TilesSweep, matrixVariants, readBandwidth, dispatchFloor, residentWorkgroupsExperiment];
