/**
 * The tile plan of the register-tiling rungs 14-15 (FlashAttention-2's register tiling): Br query rows per workgroup
 * in row groups of 4 rows × G invocations, Bc keys per tile; the tiles are the first of a measured list that the
 * kernel's register bounds allow and whose workgroup memory (the kernel's own declarations) fits the adapter.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, kernelWorkgroupBytes, type GpuContext, type KernelSource, type SinglePassPlan } from '@fa/core';

/** Tile sizes of the register-tiling kernels: Br query rows per workgroup, Bc keys per tile, G invocations per row group. */
interface RegisterTiles {
  BR: number;
  BC: number;
  G: number;
}

/** Most keys per invocation in a tile (TC_MAX in the kernels). */
const TC_MAX = 16;

/** The register bounds of a kernel of this family (its WGSL constants). */
interface TileKernelShape {
  /** OC_MAX: most vec4 columns of O per invocation. */
  ocMax: number;
  /** LD_MAX: most vec4s of K_j one invocation prefetches per tile (rung 15), if it prefetches. */
  ldMax?: number;
}

/** Why `tiles` cannot work for head size d in a kernel with register bounds `bounds`, or undefined when they can. */
function registerTilesProblem(d: number, { BR, BC, G }: RegisterTiles, { ocMax, ldMax }: TileKernelShape): string | undefined {
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
function rowGroupSize(d: number, gpu: GpuContext): number {
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

/** The override constants of a register-tiling kernel with `tiles` at head size d. */
const constantsOf = (d: number, { BR, BC, G }: RegisterTiles) => ({ D: d, BR, BC, G, WG: (BR / 4) * G });

/** The tiles of `kernel`: the first candidate that is valid for d and whose workgroup memory fits the adapter. */
function registerTilesFor(shape: Shape, gpu: GpuContext, kernel: KernelSource, bounds: TileKernelShape): RegisterTiles | string {
  const G = rowGroupSize(shape.d, gpu);
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  const bytes = (tiles: RegisterTiles) => kernelWorkgroupBytes(kernel.code, constantsOf(shape.d, tiles));
  for (const [BR, BC] of CANDIDATES) {
    const tiles = { BR, BC, G };
    if (registerTilesProblem(shape.d, tiles, bounds) === undefined && bytes(tiles) <= limit) return tiles;
  }
  return `tiles for d = ${shape.d} need ${formatBytes(bytes({ BR: 16, BC: 16, G }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
}

function registerTilesPlan({ N, d }: Shape, tiles: RegisterTiles): SinglePassPlan {
  const { BR, BC, G } = tiles;
  const Tr = Math.ceil(N / BR);
  return {
    constants: constantsOf(d, tiles),
    workgroups: (batches) => batches * Tr,
    uniforms: (batches) => ({ N, batches, scaleLog2: Math.LOG2E / Math.sqrt(d) }),
    summary: `Br = ${BR}, Bc = ${BC}, G = ${G}`,
  };
}

/** The plan of `kernel`, a kernel of this family with register bounds `bounds`, for a shape on an adapter, or why not. */
export function registerTilesPlanFor(kernel: KernelSource, bounds: TileKernelShape) {
  return (shape: Shape, gpu: GpuContext): SinglePassPlan | string => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = registerTilesFor(shape, gpu, kernel, bounds);
    return typeof tiles === 'string' ? tiles : registerTilesPlan(shape, tiles);
  };
}
