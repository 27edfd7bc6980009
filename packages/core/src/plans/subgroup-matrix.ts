/**
 * What the matrix-unit kernels (the tensor rungs 16-17 and 23-25, and @fa/sdpa's attention-matrix) need of an adapter,
 * and the sizes every plan of theirs shares: the scratch rows of the f16 copies and the workgroup bytes of a kernel.
 */
import type { GpuContext } from '../gpu-context.js';
import type { KernelSource } from '../gpu/pipeline.js';
import { kernelWorkgroupBytes } from '../gpu/workgroup-memory.js';

/** The feature that exposes subgroup matrices in Dawn. */
export const SUBGROUP_MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix' as GPUFeatureName;

/** Keys per K/V tile of rungs 16-17 (BC in their kernels); the scratch buffer pads each matrix's rows to a multiple of it. */
const MATRIX_BC = 64;

/** How `main` of a matrix rung covers a shape. */
export interface MatrixPlan {
  /** Override constants of `main` besides D (its workgroup memory is the kernel's declarations with them). */
  overrides: Record<string, number>;
  /** Query rows per workgroup of `main`. */
  rowsPerWorkgroup: number;
  /** Rows of each matrix in the scratch buffer. */
  NP: number;
}

/** Rows of each matrix in the scratch buffer: N rounded up to a multiple of MATRIX_BC. */
export function scratchRows(N: number): number {
  return Math.ceil(N / MATRIX_BC) * MATRIX_BC;
}

/** Bytes of workgroup memory `kernel` declares at head size d with the overrides of `main`. */
export function matrixWorkgroupBytes(kernel: KernelSource, d: number, overrides: Readonly<Record<string, number>>): number {
  return kernelWorkgroupBytes(kernel.code, { D: d, ...overrides });
}

/** One configuration of Dawn's `adapter.info.subgroupMatrixConfigs`. */
export interface SubgroupMatrixConfig {
  componentType: string;
  resultComponentType: string;
  M: number;
  N: number;
  K: number;
}

/** Why this adapter cannot run the matrix-unit kernels at all (f16 16×16×16 subgroup matrices, subgroups of 32), or undefined when it can. */
export function matrixUnavailable(gpu: GpuContext): string | undefined {
  const features = gpu.device.features;
  if (!features.has(SUBGROUP_MATRIX_FEATURE)) return `the GPU has no subgroup matrices (feature ${SUBGROUP_MATRIX_FEATURE})`;
  if (!features.has('shader-f16')) return 'the GPU has no f16 in shaders (feature shader-f16)';
  if (!features.has('subgroups')) return 'the GPU has no subgroups (feature subgroups)';
  const configs = ((gpu.adapter.info as GPUAdapterInfo & { subgroupMatrixConfigs?: readonly SubgroupMatrixConfig[] }).subgroupMatrixConfigs ?? []);
  const fits = configs.some((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M === 16 && c.N === 16 && c.K === 16);
  if (!fits) return "the GPU's subgroup matrices have no f16 → f32 16×16×16 configuration";
  const { subgroupMinSize: min, subgroupMaxSize: max } = gpu.report;
  if (min !== 32 || max !== 32) return `the kernel needs subgroups of exactly 32 invocations (this GPU: ${min ?? '?'} to ${max ?? '?'})`;
  return undefined;
}
