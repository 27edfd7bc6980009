/**
 * The host of the tensor-core rungs: two dispatches in one compute pass. `convert` writes Q·log2(e)/√d, K and V of
 * each batch into an f16 scratch buffer (`qkv16`, rows padded to a multiple of 64 with zeros, so every 16×16 fragment
 * load stays inside its batch); `main` runs the rung's plan: in rungs 16-17 one subgroup of 32 invocations per
 * workgroup on Br = 16·RQ query rows (`matrixPlan`), in rungs 23-24 NSG subgroups of 16 rows each.
 */
import { formatBytes, type Shape } from '@fa/io';
import {
  checkBindings,
  checked,
  checkUniforms,
  computePipelines,
  grid2d,
  kernelBindings,
  matrixUnavailable,
  matrixWorkgroupBytes,
  scratchRows,
  SUBGROUP_MATRIX_FEATURE,
  type MatrixPlan,
  packUniforms,
  prepareAttentionRunner,
  UnsupportedShapeError,
  type AttentionBuffers,
  type AttentionKernel,
  type GpuContext,
  type KernelEncoder,
  type KernelSource,
  type RungDefinition,
  type RunEnv,
} from '@fa/core';

/** Most Q (and O) fragments one subgroup keeps in registers (QO_MAX in the kernels). */
const QO_MAX = 8;
/** The largest head size: D/16 fragments across d must fit QO_MAX. */
const MATRIX_MAX_HEAD_SIZE = 128;

export interface MatrixRungSpec {
  id: string;
  title: string;
  delta: string;
  /** The id of the rung this one changes (see `RungDefinition.parent`). */
  parent: string;
  kernel: KernelSource;
  /** f16 copies of each of Q, K, V in the scratch buffer: 1 (rounded) or 2 (high and low parts). */
  parts: 1 | 2;
  reducedPrecision?: 'f16';
  /** How `main` covers a shape within `workgroupLimit` bytes of workgroup memory; rungs 16-17's `matrixPlan` if absent. */
  plan?: (shape: Shape, workgroupLimit: number) => MatrixPlan;
  /**
   * How `main` reads the scratch buffer: as `qkv16` (array<f16>, the matrix loads of rungs 16-17) or as `qkv16v`
   * (array<vec4<u32>>, read-only: the same buffer, 8 f16 per element, for the vector copies of rungs 23-24).
   */
  mainReads?: 'qkv16' | 'qkv16v';
}

/**
 * Query fragments per subgroup: as many as fit QO_MAX registers of Q and of O, at most 2 (32 rows), and a power of
 * two (the softmax gives each of the 32 invocations a whole number of rows, or each row a power-of-two group). The
 * kernel takes up to 4 (RQ_MAX), but 4 lost everywhere on the H100: at 4×32768×32, 92.5 ms against 38.0 with 2.
 */
function matrixRowFragments(d: number): number {
  const fit = Math.max(1, Math.min(2, Math.floor(QO_MAX / (d / 16))));
  return 2 ** Math.floor(Math.log2(fit));
}

/**
 * Where one query fragment per workgroup wins: long key loops (N at least ONE_FRAGMENT_MIN_N) over a grid of at least
 * ONE_FRAGMENT_WORKGROUPS workgroups. Measured on the H100 (f16-matrix, ms with 1 and 2 fragments): 500×2048×64 19.4
 * against 25.6, 4×32768×32 23.8 against 38.0, 26×32768×64 251 against 324; but 13600×128×32 7.5 against 3.4 (two key
 * tiles per workgroup: the fixed work per workgroup dominates) and 10×2048×64 0.78 against 0.66 (1280 workgroups).
 * Fewer rows per subgroup means less workgroup memory, more subgroups per SM, more of them waiting on loads at once.
 */
const ONE_FRAGMENT_MIN_N = 1024;
const ONE_FRAGMENT_WORKGROUPS = 2048;

/**
 * The plan for a shape: one query fragment per workgroup on long key loops over a large grid, otherwise the most
 * that the registers allow (`matrixRowFragments`); fewer where they do not fit `workgroupLimit` bytes of workgroup
 * memory (the H100's 48 KiB fits all).
 */
export function matrixPlan({ B, N, d }: Shape, kernel: KernelSource, workgroupLimit = Number.POSITIVE_INFINITY): MatrixPlan & { RQ: number } {
  const longLoops = N >= ONE_FRAGMENT_MIN_N && B * Math.ceil(N / 16) >= ONE_FRAGMENT_WORKGROUPS;
  let RQ = longLoops ? 1 : matrixRowFragments(d);
  while (RQ > 1 && matrixWorkgroupBytes(kernel, d, { RQ }) > workgroupLimit) RQ /= 2;
  return { RQ, overrides: { RQ }, rowsPerWorkgroup: 16 * RQ, NP: scratchRows(N) };
}

function planOf(spec: MatrixRungSpec, shape: Shape, workgroupLimit: number): MatrixPlan {
  return spec.plan ? spec.plan(shape, workgroupLimit) : matrixPlan(shape, spec.kernel, workgroupLimit);
}

/** Whether a tensor-core rung can run `shape` here: true, or why not. */
function matrixSupport(shape: Shape, env: RunEnv, spec: MatrixRungSpec): true | string {
  if (!env.gpu) return env.gpuUnavailableReason ?? 'needs a GPU';
  const unavailable = matrixUnavailable(env.gpu);
  if (unavailable) return unavailable;
  if (shape.d % 16 !== 0) return `d = ${shape.d} is not a multiple of 16 (the matrix fragments are 16 wide)`;
  if (shape.d > MATRIX_MAX_HEAD_SIZE) return `d = ${shape.d} is above this rung's maximum head size ${MATRIX_MAX_HEAD_SIZE}`;
  const limit = env.gpu.report.limits.maxComputeWorkgroupStorageSize;
  const workgroupBytes = matrixWorkgroupBytes(spec.kernel, shape.d, planOf(spec, shape, limit).overrides);
  if (workgroupBytes > limit) return `d = ${shape.d} needs ${formatBytes(workgroupBytes)} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
  return true;
}

/** A tensor-core kernel for a shape (compiled, ready to bind to buffers), without the adapter checks of `matrixSupport`. */
async function matrixKernel(spec: MatrixRungSpec, gpu: GpuContext, shape: Shape): Promise<AttentionKernel> {
  const { device } = gpu;
  const { N, d } = shape;
  const { overrides, rowsPerWorkgroup, NP } = planOf(spec, shape, gpu.report.limits.maxComputeWorkgroupStorageSize);
  const Tr = Math.ceil(N / rowsPerWorkgroup);
  const uniforms = (batches: number) => ({ N, NP, batches, scaleLog2: Math.LOG2E / Math.sqrt(d) });
  const fields = checkUniforms(spec.id, spec.kernel, uniforms(1));
  const mainReads = spec.mainReads ?? 'qkv16';
  checkBindings(spec.id, spec.kernel, ['qkv', 'O', 'params', 'qkv16', ...(mainReads === 'qkv16' ? [] : [mainReads])]);
  const described = Object.entries(overrides).map(([key, value]) => `${key} = ${value}, `).join('');
  const pipelines = await checked(gpu, `compiling ${spec.id} (${described}d = ${d})`, async () => ({
    ...(await computePipelines(gpu, spec.kernel, ['convert'], { D: d })),
    ...(await computePipelines(gpu, spec.kernel, ['main'], { D: d, ...overrides })),
  }));
  const bindings = kernelBindings(spec.kernel.code);
  const used = { convert: ['qkv', 'params', 'qkv16'], main: ['O', 'params', mainReads] } as const;
  return {
      scratchBytesPerBatch: { qkv16: 3 * spec.parts * NP * d * 2 },
      bind(buffers: AttentionBuffers): KernelEncoder {
        const params = device.createBuffer({
          label: `${spec.id} params`,
          size: Math.max(16, Math.ceil((fields.length * 4) / 16) * 16),
          usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        });
        // qkv16v is the scratch buffer again, as rungs 23-24's main reads it (vectors of 8 f16).
        const resources: Record<string, GPUBuffer | undefined> = { qkv: buffers.qkv, O: buffers.O, params, ...buffers.scratch, qkv16v: buffers.scratch.qkv16 };
        const groupOf = (entry: keyof typeof used) =>
          device.createBindGroup({
            label: `${spec.id} ${entry}`,
            layout: pipelines[entry].getBindGroupLayout(0),
            entries: bindings
              .filter(({ name }) => (used[entry] as readonly string[]).includes(name))
              .map(({ binding, name }) => ({ binding, resource: { buffer: resources[name] as GPUBuffer } })),
          });
        const groups = { convert: groupOf('convert'), main: groupOf('main') };
        let writtenFor = 0;
        return {
          encode(encoder, batches, timer) {
            if (writtenFor !== batches) {
              device.queue.writeBuffer(params, 0, packUniforms(fields, uniforms(batches)));
              writtenFor = batches;
            }
            const pass = encoder.beginComputePass({ label: spec.id, timestampWrites: timer.writes(true, true) });
            pass.setPipeline(pipelines.convert);
            pass.setBindGroup(0, groups.convert);
            const [cx, cy] = grid2d(gpu, Math.ceil((batches * 3 * NP * d) / 4 / 256));
            pass.dispatchWorkgroups(cx, cy);
            pass.setPipeline(pipelines.main);
            pass.setBindGroup(0, groups.main);
            const [x, y] = grid2d(gpu, batches * Tr);
            pass.dispatchWorkgroups(x, y);
            pass.end();
          },
          destroy() {
            params.destroy();
          },
        };
      },
    };
}

/** The GPU of `env` when the rung can run `shape` there; otherwise the reason, thrown. */
function gpuFor(spec: MatrixRungSpec, env: RunEnv, shape: Shape): GpuContext {
  const allowed = matrixSupport(shape, env, spec);
  if (allowed !== true || !env.gpu) throw new UnsupportedShapeError(`${spec.id}: ${allowed === true ? 'needs a GPU' : allowed}`);
  return env.gpu;
}

/** A tensor-core rung from its kernel and how many f16 parts it keeps of each operand. */
export function matrixRung(spec: MatrixRungSpec): RungDefinition {
  return {
    id: spec.id,
    kind: 'gpu',
    title: spec.title,
    delta: spec.delta,
    parent: spec.parent,
    requires: ['shader-f16', 'subgroups', SUBGROUP_MATRIX_FEATURE],
    ...(spec.reducedPrecision ? { reducedPrecision: spec.reducedPrecision } : {}),
    // Every operand is stored as f16 (high and low parts too): values past 65504 overflow.
    reducedRange: 'f16',
    kernels: [spec.kernel],
    supports: (shape, env) => matrixSupport(shape, env, spec),
    prepare: async (env, shape, options) => {
      const gpu = gpuFor(spec, env, shape);
      return prepareAttentionRunner(gpu, shape, spec.id, await matrixKernel(spec, gpu, shape), options);
    },
    prepareKernel: (env, shape) => matrixKernel(spec, gpuFor(spec, env, shape), shape),
  };
}
