/**
 * Rungs 5-7, the fused family. Host side shared by the three: one pipeline from a WGSL kernel with the tile sizes as
 * override constants, one uniform (N, batches, scale), one dispatch per run. What differs is the kernel (fused.wgsl
 * or fused-split-q.wgsl), how tiles are sized, and how many workgroups a run launches.
 */
import {
  bindBuffers,
  checked,
  computePipelines,
  gpuHeadSizeSupport,
  grid2d,
  prepareAttentionRunner,
  UnsupportedShapeError,
  type GpuContext,
  type RunEnv,
  type Rung,
} from '@fa/core';
import { formatBytes, type Shape } from '@fa/io';
import fusedSource from './fused.wgsl';
import splitQSource from './fused-split-q.wgsl';
import { FIXED_TILES, FUSED_WG, fusedStorageBytes, largestTiles, splitQStorageBytes, type Tiles } from './tiles.js';

interface FusedVariant {
  rung: string;
  source: { label: string; code: string };
  /** Workgroup memory the kernel needs for tiles of head size d. */
  storageBytes: (d: number, tiles: Tiles) => number;
  /** The tiles for this adapter, or undefined when none fit. */
  tiles: (limit: number, shape: Shape) => Tiles | undefined;
  /** Whether O's running statistics ℓ and m live in GPU memory (rungs 5-6) or on chip (rung 7). */
  statisticsInMemory: boolean;
  /** Workgroups per run of `batches` batches. */
  workgroups: (batches: number, N: number, tiles: Tiles) => number;
}

const fusedKernel = { label: 'fused.wgsl', code: fusedSource };

const FUSED: FusedVariant = {
  rung: 'fused',
  source: fusedKernel,
  storageBytes: fusedStorageBytes,
  tiles: (limit, { d }) => (fusedStorageBytes(d, FIXED_TILES) <= limit ? FIXED_TILES : undefined),
  statisticsInMemory: true,
  workgroups: (batches) => batches,
};

const FUSED_MAXSMEM: FusedVariant = {
  ...FUSED,
  rung: 'fused-maxsmem',
  tiles: (limit, { N, d }) => largestTiles(limit, d, N, fusedStorageBytes),
};

const FUSED_SPLIT_Q: FusedVariant = {
  rung: 'fused-split-q',
  source: { label: 'fused-split-q.wgsl', code: splitQSource },
  storageBytes: splitQStorageBytes,
  tiles: (limit, { N, d }) => largestTiles(limit, d, N, splitQStorageBytes),
  statisticsInMemory: false,
  workgroups: (batches, N, { BR }) => batches * Math.ceil(N / BR),
};

/** The tiles this variant would use here, or the reason it cannot run the shape. */
export function fusedTilesFor(variant: FusedVariant, shape: Shape, env: RunEnv): Tiles | string {
  const head = gpuHeadSizeSupport(shape);
  if (head !== true) return head;
  if (!env.gpu) return 'needs a GPU';
  const limit = env.gpu.report.limits.maxComputeWorkgroupStorageSize;
  const tiles = variant.tiles(limit, shape);
  if (!tiles) {
    const smallest = variant.storageBytes(shape.d, variant === FUSED ? FIXED_TILES : { BR: 1, BC: 1 });
    return `tiles for d = ${shape.d} need ${formatBytes(smallest)} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
  }
  return tiles;
}

async function prepareFused(variant: FusedVariant, gpu: GpuContext, shape: Shape, tiles: Tiles) {
  const { device } = gpu;
  const { N, d } = shape;
  const constants = { D: d, BR: tiles.BR, BC: tiles.BC, WG: FUSED_WG };
  const { main } = await checked(gpu, `compiling ${variant.rung} (Br = ${tiles.BR}, Bc = ${tiles.BC}, d = ${d})`, () =>
    computePipelines(gpu, variant.source, ['main'], constants),
  );
  const pipeline = main;
  const scratch: Record<string, number> = variant.statisticsInMemory ? { 'ℓ': N * 4, m: N * 4 } : {};
  return prepareAttentionRunner(gpu, shape, variant.rung, {
    scratchBytesPerBatch: scratch,
    bind(buffers) {
      const params = device.createBuffer({ label: `${variant.rung} params`, size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      const bound = variant.statisticsInMemory ? [buffers.qkv, buffers.O, buffers.scratch['ℓ']!, buffers.scratch.m!, params] : [buffers.qkv, buffers.O, params];
      const group = bindBuffers(gpu, pipeline, bound, variant.rung);
      let writtenFor = 0;
      return {
        encode(encoder, batches, timer) {
          if (writtenFor !== batches) {
            const data = new ArrayBuffer(16);
            new Uint32Array(data, 0, 2).set([N, batches]);
            new Float32Array(data, 8, 1)[0] = 1 / Math.sqrt(d);
            device.queue.writeBuffer(params, 0, data);
            writtenFor = batches;
          }
          const pass = encoder.beginComputePass({ label: variant.rung, timestampWrites: timer.writes(true, true) });
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          const [x, y] = grid2d(gpu, variant.workgroups(batches, N, tiles));
          pass.dispatchWorkgroups(x, y);
          pass.end();
        },
        destroy() {
          params.destroy();
        },
      };
    },
  });
}

function fusedRung(variant: FusedVariant, index: number, title: string, delta: string): Rung {
  return {
    id: variant.rung,
    index,
    kind: 'gpu',
    title,
    delta,
    supports: (shape, env) => {
      const tiles = fusedTilesFor(variant, shape, env);
      return typeof tiles === 'string' ? tiles : true;
    },
    prepare: (env, shape) => {
      const tiles = fusedTilesFor(variant, shape, env);
      if (typeof tiles === 'string' || !env.gpu) throw new UnsupportedShapeError(`${variant.rung}: ${typeof tiles === 'string' ? tiles : 'needs a GPU'}`);
      return prepareFused(variant, env.gpu, shape, tiles);
    },
  };
}

export const fused = fusedRung(
  FUSED,
  5,
  'GPU, Algorithm 1 fused into one kernel: K/V tile outer, Q tile inner, one workgroup per batch',
  'Fuses the six steps into one kernel with tiles in workgroup memory; S and P never touch GPU memory.',
);

export const fusedMaxsmem = fusedRung(
  FUSED_MAXSMEM,
  6,
  'GPU, the fused kernel with the largest tiles the adapter\'s workgroup memory holds',
  'Sizes Br = Bc from maxComputeWorkgroupStorageSize instead of 16, so O, ℓ, m make fewer round trips to memory.',
);

export const fusedSplitQ = fusedRung(
  FUSED_SPLIT_Q,
  7,
  'GPU, one workgroup per (batch, Q tile), loops swapped: O, ℓ, m stay on chip',
  'Launches B·Tr workgroups instead of B and keeps O_i, ℓ_i, m_i in workgroup memory, written once at the end.',
);
