/**
 * Rung 14, register-tiles: FlashAttention-2's register tiling (register-tiles.wgsl). Each invocation owns a 4-row
 * block of S and of O; row statistics are combined with subgroup shuffles, so the rung needs `subgroups`.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext, type SinglePassPlan } from '@fa/core';
import code from './register-tiles.wgsl';

export const REGISTER_TILES_KERNEL = { label: 'register-tiles.wgsl', code };

/** Tile sizes of register-tiles.wgsl: Br query rows per workgroup, Bc keys per tile, G invocations per row group. */
export interface RegisterTiles {
  BR: number;
  BC: number;
  G: number;
}

/** Bounds of the kernel's register arrays (TC_MAX, OC_MAX in the WGSL). */
const TC_MAX = 16;
const OC_MAX = 8;

/** Workgroup bytes: Q_iᵀ and P̃ᵀ (d and Bc rows of Br/4 + 1 vec4s), K_j padded by one vec4 per row, V_j. */
export function registerTilesBytes(d: number, { BR, BC }: RegisterTiles): number {
  const columnVec4 = BR / 4 + 1;
  return 16 * (d * columnVec4 + BC * (d / 4 + 1) + (BC * d) / 4 + BC * columnVec4);
}

/** The register bounds of a kernel of this family (its WGSL constants). */
export interface TileKernelShape {
  /** OC_MAX: most vec4 columns of O per invocation. */
  ocMax: number;
  /** LD_MAX: most vec4s of K_j one invocation prefetches per tile (rung 15), if it prefetches. */
  ldMax?: number;
}

export const REGISTER_TILES_SHAPE: TileKernelShape = { ocMax: OC_MAX };

/** Why `tiles` cannot work for head size d in `kernel`, or undefined when they can. */
export function registerTilesProblem(d: number, { BR, BC, G }: RegisterTiles, kernel: TileKernelShape = REGISTER_TILES_SHAPE): string | undefined {
  const { ocMax, ldMax } = kernel;
  if (BR % 4 !== 0) return `Br = ${BR} is not a multiple of 4`;
  if (BC % G !== 0 || BC / G > TC_MAX) return `Bc = ${BC} is not a multiple of G = ${G} up to ${TC_MAX}·G`;
  if (Math.ceil(d / 4 / G) > ocMax) return `d = ${d} needs more than ${ocMax} vec4 columns per invocation with G = ${G}`;
  const invocations = (BR / 4) * G;
  if (ldMax !== undefined && Math.ceil((BC * d) / 4 / invocations) > ldMax) return `a tile of ${BC} keys needs more than ${ldMax} vec4 loads per invocation`;
  return undefined;
}

/**
 * Invocations per row group: 16 when d ≥ 64 (twice the invocations per workgroup, which hides latency better: on an
 * H100 at d = 64, 24.3 against 21.7 TFLOP/s), else 8; never more than the subgroup size, since a row group must fit
 * in one subgroup.
 */
export function rowGroupSize(d: number, gpu: GpuContext): number {
  return Math.min(d >= 64 ? 16 : 8, gpu.report.subgroupMinSize ?? 8);
}

/** Tile candidates, best first (measured on an H100: Br = 128 pays at d = 32, Br = 64 at d = 64). */
const CANDIDATES: readonly (readonly [number, number])[] = [
  [128, 32],
  [64, 32],
  [64, 16],
  [32, 32],
  [32, 16],
  [16, 16],
];

/** The tiles this rung uses: the first candidate that is valid for d and whose workgroup memory fits the adapter. */
export function registerTilesFor(shape: Shape, gpu: GpuContext, kernel: TileKernelShape = REGISTER_TILES_SHAPE): RegisterTiles | string {
  const G = rowGroupSize(shape.d, gpu);
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  for (const [BR, BC] of CANDIDATES) {
    const tiles = { BR, BC, G };
    if (registerTilesProblem(shape.d, tiles, kernel) === undefined && registerTilesBytes(shape.d, tiles) <= limit) return tiles;
  }
  return `tiles for d = ${shape.d} need ${formatBytes(registerTilesBytes(shape.d, { BR: 16, BC: 16, G }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
}

export function registerTilesPlan({ N, d }: Shape, tiles: RegisterTiles): SinglePassPlan {
  const { BR, BC, G } = tiles;
  const Tr = Math.ceil(N / BR);
  return {
    constants: { D: d, BR, BC, G, WG: (BR / 4) * G },
    workgroupBytes: registerTilesBytes(d, tiles),
    workgroups: (batches) => batches * Tr,
    uniforms: (batches) => ({ N, batches, scaleLog2: Math.LOG2E / Math.sqrt(d) }),
    summary: `Br = ${BR}, Bc = ${BC}, G = ${G}`,
  };
}

/** The plan of a kernel of this family with register bounds `kernel`, for a shape on an adapter, or why not. */
export function registerTilesPlanFor(kernel: TileKernelShape) {
  return (shape: Shape, gpu: GpuContext): SinglePassPlan | string => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = registerTilesFor(shape, gpu, kernel);
    return typeof tiles === 'string' ? tiles : registerTilesPlan(shape, tiles);
  };
}

export const registerTiles = singlePassRung({
  id: 'register-tiles',
  parent: 'q-registers',
  title: 'GPU, FlashAttention-2 register tiling: 4 rows × Bc/G keys of S and 4 rows × d/G columns of O per invocation',
  delta: 'Each value read from workgroup memory feeds 16 multiply-adds instead of 4; row statistics through subgroup shuffles; exp2 with the scale folded into Q.',
  requires: ['subgroups'],
  kernel: REGISTER_TILES_KERNEL,
  plan: registerTilesPlanFor(REGISTER_TILES_SHAPE),
});
