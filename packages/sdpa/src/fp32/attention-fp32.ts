/**
 * The float32 attention kernel (attention-fp32.wgsl, lean-loop's loop with heads, groups, bands and masks): its plan for
 * a problem on an adapter, and the compiled kernel bound to buffers.
 */
import {
  checked,
  checkUniforms,
  computePipelines,
  gpuHeadSizeSupport,
  grid2d,
  kernelBindings,
  packUniforms,
  type GpuContext,
  type SdpaProblem,
} from '@fa/core';
import { ROW_SPLIT_LAYOUT, rowGroupTilesFor, rowSplitBytes, rowSplitTiles, type RowGroupLayout } from '@fa/optimized';
import code from './attention-fp32.wgsl';

export const ATTENTION_FP32_KERNEL = { label: 'attention-fp32.wgsl', code };

/** lean-loop's rows and register bounds: a step scores up to 16 keys, so Bc is a multiple of 16. */
const LAYOUT: RowGroupLayout = { ...ROW_SPLIT_LAYOUT, keysPerStep: 16 };

/** A band as a signed 32-bit number: unbounded is a distance no shape reaches. */
const UNBOUNDED = 0x3fffffff;

export interface Fp32Plan {
  readonly constants: Readonly<Record<string, number>>;
  /** Query rows per workgroup. */
  readonly BR: number;
  readonly workgroupBytes: number;
  readonly summary: string;
}

/** The kernel's plan for `problem` on this adapter, or why it cannot run it. */
export function fp32Plan(problem: SdpaProblem, gpu: GpuContext, lse: boolean): Fp32Plan | string {
  const { d } = problem.dims;
  if (!gpu.device.features.has('subgroups')) return 'the GPU lacks feature subgroups';
  const head = gpuHeadSizeSupport({ B: 1, N: 1, d });
  if (head !== true) return head;
  const tiles = rowGroupTilesFor({ B: 1, N: problem.dims.Lq, d }, gpu, LAYOUT, rowSplitTiles);
  if (typeof tiles === 'string') return tiles;
  const { H, BC, WG } = tiles;
  const blocks = problem.blockMask;
  const BR = (WG / H) * 2;
  const blockTiles = blocks !== undefined && blocks.rows % BR === 0 && blocks.keys % BC === 0;
  return {
    constants: {
      D: d,
      H,
      BC,
      KEYS: H === 1 ? 16 : 8,
      WG,
      PREFETCH: tiles.prefetch && blocks === undefined ? 1 : 0,
      MASK: problem.mask ? 1 : 0,
      BLOCKS: blocks ? 1 : 0,
      BLOCK_TILES: blockTiles ? 1 : 0,
      LSE: lse ? 1 : 0,
    },
    BR,
    workgroupBytes: rowSplitBytes(d, tiles),
    summary: `H = ${H}, Bc = ${BC}, ${WG} invocations`,
  };
}

/** The caller's tensors for one run of `batches` batches from `batch0` (STORAGE buffers, float32). */
export interface Fp32Buffers {
  readonly q: GPUBuffer;
  readonly k: GPUBuffer;
  readonly v: GPUBuffer;
  readonly O: GPUBuffer;
  /** B·Hq·Lq float32, when the kernel writes log-sum-exps. */
  readonly lse?: GPUBuffer;
}

export interface Fp32Kernel {
  readonly plan: Fp32Plan;
  /** Records one dispatch for batches batch0 … batch0 + batches − 1 (the buffers hold those batches only). */
  encode(encoder: GPUCommandEncoder, buffers: Fp32Buffers, batch0: number, batches: number): void;
  destroy(): void;
}

/** Per-tensor strides in vec4s: batch, head, row. */
function strides(layout: SdpaProblem['layout'], heads: number, rows: number, d4: number): [number, number, number] {
  return layout === 'bhsd' ? [heads * rows * d4, rows * d4, d4] : [rows * heads * d4, d4, heads * d4];
}

/** The kernel compiled for `problem`, with its masks uploaded; buffers are bound per encode. */
export async function prepareFp32Kernel(gpu: GpuContext, problem: SdpaProblem, plan: Fp32Plan): Promise<Fp32Kernel> {
  const { device } = gpu;
  const { Hq, Lq, d } = problem.dims;
  const fields = checkUniforms('attention-fp32', ATTENTION_FP32_KERNEL, uniformsOf(problem, 0, 1));
  const pipelines = await checked(gpu, `compiling attention-fp32 (${plan.summary}, d = ${d})`, () =>
    computePipelines(gpu, ATTENTION_FP32_KERNEL, ['main'], { ...plan.constants }, 'auto'),
  );
  const pipeline = pipelines.main;
  const owned: GPUBuffer[] = [];
  const upload = (label: string, data: ArrayBufferView | undefined): GPUBuffer => {
    const bytes = data ? Math.max(16, Math.ceil(data.byteLength / 4) * 4) : 16;
    const buffer = device.createBuffer({ label, size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    if (data) device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    owned.push(buffer);
    return buffer;
  };
  const mask = upload('attention-fp32 mask', problem.mask ? kernelMask(problem.mask) : undefined);
  const blockFlags = upload('attention-fp32 block flags', problem.blockMask ? Uint32Array.from(problem.blockMask.data) : undefined);
  const noLse = upload('attention-fp32 no lse', undefined);
  const params = device.createBuffer({ label: 'attention-fp32 params', size: Math.ceil((fields.length * 4) / 16) * 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  owned.push(params);
  const bindings = kernelBindings(ATTENTION_FP32_KERNEL.code);
  let written = '';
  return {
    plan,
    encode(encoder, buffers, batch0, batches) {
      const key = `${batch0},${batches}`;
      if (key !== written) {
        device.queue.writeBuffer(params, 0, packUniforms(fields, uniformsOf(problem, batch0, batches)));
        written = key;
      }
      const resources: Record<string, GPUBuffer> = { ...buffers, lse: buffers.lse ?? noLse, params, mask, blockFlags };
      const group = device.createBindGroup({
        label: 'attention-fp32',
        layout: pipeline.getBindGroupLayout(0),
        entries: bindings.map(({ binding, name }) => ({ binding, resource: { buffer: resources[name] as GPUBuffer } })),
      });
      const pass = encoder.beginComputePass({ label: 'attention-fp32' });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      const [x, y] = grid2d(gpu, batches * Hq * Math.ceil(Lq / plan.BR));
      pass.dispatchWorkgroups(x, y);
      pass.end();
    },
    destroy() {
      for (const buffer of owned) buffer.destroy();
    },
  };
}

/** The element mask as the kernel reads it: additive float32, −3.4e38 (EXCLUDED) for −∞ and for false. */
function kernelMask(mask: NonNullable<SdpaProblem['mask']>): Float32Array {
  const EXCLUDED = -3.4e38;
  if (mask.kind === 'bool') return Float32Array.from(mask.data, (x) => (x === 0 ? EXCLUDED : 0));
  return Float32Array.from(mask.data, (x) => Math.max(x, EXCLUDED));
}

/** The uniform's values for a run of `batches` batches from `batch0`. */
function uniformsOf(problem: SdpaProblem, batch0: number, batches: number): Record<string, number> {
  const { Hq, Hkv, Lq, Lk, d } = problem.dims;
  const d4 = d / 4;
  const [qBatch, qHead, qRow] = strides(problem.layout, Hq, Lq, d4);
  const [kvBatch, kvHead, kvRow] = strides(problem.layout, Hkv, Lk, d4);
  const m = problem.mask?.strides ?? { b: 0, h: 0, i: 0, j: 0 };
  const bm = problem.blockMask;
  const bs = bm?.strides ?? { b: 0, h: 0, i: 0, j: 0 };
  return {
    Lq,
    Lk,
    Hq,
    GROUP: Hq / Hkv,
    bh: batches * Hq,
    batch0,
    qBatch,
    qHead,
    qRow,
    kvBatch,
    kvHead,
    kvRow,
    scaleLog2: problem.scale * Math.LOG2E,
    left: Number.isFinite(problem.left) ? Math.min(problem.left, UNBOUNDED) : UNBOUNDED,
    right: Number.isFinite(problem.right) ? Math.min(problem.right, UNBOUNDED) : UNBOUNDED,
    maskB: m.b,
    maskH: m.h,
    maskI: m.i,
    maskJ: m.j,
    blockRows: bm?.rows ?? 1,
    blockKeys: bm?.keys ?? 1,
    blocksB: bs.b,
    blocksH: bs.h,
    blocksI: bs.i,
    blocksJ: bs.j,
    minusInfinity: 0xff800000,
  };
}
