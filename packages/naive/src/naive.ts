/**
 * Rung 4, naive: the per-step kernel set (naive.wgsl). The host runs Algorithm 1's outer loop: for each K/V tile j
 * it encodes six dispatches, one per step, each over every batch and query row of the run. All dispatches of a run
 * go into one compute pass of one command buffer, so even N = 32768 (512 tiles, 3072 dispatches) submits once.
 */
import {
  sequentialModel,
  cachedLayout,
  checked,
  computePipelines,
  gpuHeadSizeSupport,
  grid2d,
  prepareAttentionRunner,
  UnsupportedShapeError,
  type AttentionBuffers,
  type AttentionKernel,
  type GpuContext,
  type KernelEncoder,
  type RungDefinition,
} from '@fa/core';
import type { Shape } from '@fa/io';
import source from './naive.wgsl';

const NAIVE_KERNEL = { label: 'naive.wgsl', code: source };

/** K/V tile rows. */
export const NAIVE_BC = 64;
const WG = 256;
const STEPS = ['scores', 'row_max', 'exponentiate', 'row_sum', 'update_o', 'update_ml'] as const;
type Step = (typeof STEPS)[number];

/** The naive kernels for a shape: compiled, ready to bind to buffers. */
async function naiveKernel(gpu: GpuContext, shape: Shape): Promise<AttentionKernel> {
  const supported = gpuHeadSizeSupport(shape);
  if (supported !== true) throw new UnsupportedShapeError(`naive: ${supported}`);
  const { device } = gpu;
  const { N, d } = shape;
  const Tc = Math.ceil(N / NAIVE_BC);
  const align = device.limits.minUniformBufferOffsetAlignment;
  const { layout, pipelines } = await checked(gpu, 'compiling the naive kernels', async () => {
    const storage = (binding: number, type: GPUBufferBindingType): GPUBindGroupLayoutEntry => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type },
    });
    // The same layout objects for every shape, so that the pipelines of a d compiled before are reused.
    const { bindGroupLayout: layout, pipelineLayout } = cachedLayout(gpu, 'naive', [
      storage(0, 'read-only-storage'),
      ...[1, 2, 3, 4, 5, 6].map((b) => storage(b, 'storage')),
      { binding: 7, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: 20 } },
    ]);
    const pipelines = await computePipelines(gpu, NAIVE_KERNEL, STEPS, { D: d, BC: NAIVE_BC, WG }, pipelineLayout);
    return { layout, pipelines };
  });

  return {
    scratchBytesPerBatch: { S: N * NAIVE_BC * 4, 'm̃': N * 4, 'ℓ̃': N * 4, m: N * 4, 'ℓ': N * 4 },
    bind(buffers: AttentionBuffers): KernelEncoder {
      const tiles = device.createBuffer({ label: 'naive tiles', size: Tc * align, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      const s = buffers.scratch;
      const group = device.createBindGroup({
        label: 'naive',
        layout,
        entries: [
          ...[buffers.qkv, s.S!, s['m̃']!, s['ℓ̃']!, s.m!, s['ℓ']!, buffers.O].map((buffer, binding): GPUBindGroupEntry => ({ binding, resource: { buffer } })),
          { binding: 7, resource: { buffer: tiles, size: 20 } },
        ],
      });
      let writtenFor = 0;
      return {
        encode(encoder, batches, timer) {
          if (writtenFor !== batches) {
            device.queue.writeBuffer(tiles, 0, tileParams(N, d, batches, Tc, align));
            writtenFor = batches;
          }
          const threads: Record<Step, number> = {
            scores: batches * N * NAIVE_BC,
            row_max: batches * N,
            exponentiate: batches * N * NAIVE_BC,
            row_sum: batches * N,
            update_o: batches * N * d,
            update_ml: batches * N,
          };
          const pass = encoder.beginComputePass({ label: 'naive', timestampWrites: timer.writes(true, true) });
          for (let j = 0; j < Tc; j++) {
            for (const step of STEPS) {
              pass.setPipeline(pipelines[step]);
              pass.setBindGroup(0, group, [j * align]);
              const [x, y] = grid2d(gpu, Math.ceil(threads[step] / WG));
              pass.dispatchWorkgroups(x, y);
            }
          }
          pass.end();
        },
        destroy() {
          tiles.destroy();
        },
      };
    },
  };
}

/** One Tile struct per K/V tile, at the uniform offset alignment: N, batches, kv0, first, scale. */
function tileParams(N: number, d: number, batches: number, Tc: number, align: number): ArrayBuffer {
  const data = new ArrayBuffer(Tc * align);
  for (let j = 0; j < Tc; j++) {
    const view = new DataView(data, j * align, 20);
    view.setUint32(0, N, true);
    view.setUint32(4, batches, true);
    view.setUint32(8, j * NAIVE_BC, true);
    view.setUint32(12, j === 0 ? 1 : 0, true);
    view.setFloat32(16, 1 / Math.sqrt(d), true);
  }
  return data;
}

export const naive: RungDefinition = {
  id: 'naive',
  parent: 'seq-flash',
  kind: 'gpu',
  title: 'GPU, one dispatch per step of Algorithm 1, intermediates in GPU memory',
  delta: 'Moves to the GPU with one thread per element of each step: six dispatches per K/V tile, every step through GPU memory.',
  kernels: [NAIVE_KERNEL],
  rounding: (shape) => sequentialModel(shape, NAIVE_BC),
  supports: (shape) => gpuHeadSizeSupport(shape),
  prepare: async (env, shape, options) => {
    if (!env.gpu) throw new UnsupportedShapeError('naive needs a GPU');
    return prepareAttentionRunner(env.gpu, shape, 'naive', await naiveKernel(env.gpu, shape), options);
  },
  prepareKernel: (env, shape) => {
    if (!env.gpu) throw new UnsupportedShapeError('naive needs a GPU');
    return naiveKernel(env.gpu, shape);
  },
};

