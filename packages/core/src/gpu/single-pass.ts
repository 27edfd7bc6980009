/**
 * The host of every GPU rung whose work is one compute pass of one kernel. A rung describes itself (its kernel, the
 * override constants and workgroup count for a shape and adapter, the values of its `Params` uniform, the features it
 * requires, and any entry points dispatched after `main` in the same pass) and this module does the rest: checks the
 * description against the kernel (bindings by name, uniform fields, the workgroup memory it declares), compiles the
 * pipelines, binds the buffers by name, and dispatches each run through the shared attention runner (staging upload,
 * readback, timestamps, error scopes).
 */
import { formatBytes, type Shape } from '@fa/io';
import { sequentialModel, type RoundingModel } from '../error-bound.js';
import { UnsupportedShapeError } from '../errors.js';
import type { GpuContext } from '../gpu-context.js';
import type { RunEnv, RungDefinition, RungTiles, TileAxis } from '../rung.js';
import { prepareAttentionRunner, type AttentionBuffers, type AttentionKernel } from './attention-runner.js';
import { checked } from './errors.js';
import { cachedLayout, computePipelines, type KernelSource } from './pipeline.js';
import { grid2d } from './plan.js';
import { computeEntryPoints, kernelBindings, packUniforms, structFields, type KernelBinding, type UniformField } from './wgsl-reflect.js';
import { kernelWorkgroupBytes } from './workgroup-memory.js';

/** How a rung runs one shape on one adapter. */
export interface SinglePassPlan {
  /** Values of the kernel's `override` constants. */
  constants: Readonly<Record<string, number>>;
  /** Workgroups of a run of `batches` batches. */
  workgroups(batches: number): number;
  /** Values of the kernel's `struct Params` fields for a run of `batches` batches. */
  uniforms(batches: number): Readonly<Record<string, number>>;
  /** Per-batch GPU buffers the kernel binds besides qkv, O and params, by binding name. */
  scratchBytesPerBatch?: Readonly<Record<string, number>>;
  /** One line for messages, e.g. `Br = 64, Bc = 32`. */
  summary: string;
  /**
   * Entry points of the same kernel dispatched after `main`, in order, in the same compute pass (each sees what the
   * one before wrote), e.g. a pass that combines partial results. All entry points share one bind group.
   */
  followedBy?: readonly FollowingDispatch[];
}

/** A dispatch of another entry point of the rung's kernel after `main`. */
export interface FollowingDispatch {
  entryPoint: string;
  /** Workgroups of a run of `batches` batches. */
  workgroups: (batches: number) => number;
}

export interface SinglePassRung extends Omit<RungDefinition, 'kind' | 'supports' | 'prepare' | 'kernels' | 'rounding' | 'tiles'> {
  readonly kernel: KernelSource;
  /** The plan for `shape` on this adapter, or the reason the rung cannot run it. */
  plan(shape: Shape, gpu: GpuContext): SinglePassPlan | string;
  /**
   * How the kernel rounds with this plan, when it is not `keyRangeModel`'s (keys added one by one to a running sum,
   * in tiles of the plan's BC keys, over `keyRanges(plan)` ranges).
   */
  rounding?(shape: Shape, plan: SinglePassPlan): RoundingModel;
  /** The sizes of the plan the tile study may set, and the plan with them. */
  readonly tiles?: TileStudy;
}

/** The two sizes of a single-pass rung's plan the tile study may set, and the plan with given values of them. */
export interface TileStudy {
  readonly axes: readonly [TileAxis, TileAxis];
  /** The plan for `shape` with `sizes` (a value for each axis, by name) in place of the rung's own, or why not. */
  plan(shape: Shape, gpu: GpuContext, sizes: Readonly<Record<string, number>>): SinglePassPlan | string;
}

/**
 * The lag of a kernel's lazy rescale: the value of its `const TAU` (base 2; O and ℓ are rescaled only when a score
 * passes the running maximum by more than TAU), 0 without one.
 */
export function lazyRescaleLag(kernel: KernelSource): number {
  const match = /const\s+TAU\s*:\s*f32\s*=\s*([0-9.]+)/.exec(kernel.code);
  return match ? Number(match[1]) : 0;
}

/** The key ranges of a plan: its uniform `splits` (the kernels that split the keys), 1 without one. */
export function keyRanges(plan: SinglePassPlan): number {
  return plan.uniforms(1).splits ?? 1;
}

/** The rounding model of a float32 kernel that adds keys one by one into its running sums (see sequentialModel). */
function keyRangeModel(shape: Shape, plan: SinglePassPlan, kernel: KernelSource): RoundingModel {
  return sequentialModel(shape, plan.constants.BC ?? 1, keyRanges(plan), lazyRescaleLag(kernel));
}

/** The resources every kernel may bind by these names: the run's input, its output and the uniform. */
const STANDARD_BINDINGS = ['qkv', 'O', 'params'] as const;

/** A rung definition (all but its ladder position) from a single-pass description. */
/**
 * The plan `planOf` gives for a shape here, checked against this adapter: the workgroup memory the kernel declares with
 * the plan's constants, and its invocations per workgroup (WG). The reason when it cannot run.
 */
function checkedPlan(kernel: KernelSource, planOf: SinglePassRung['plan'], shape: Shape, env: RunEnv): SinglePassPlan | string {
  if (!env.gpu) return 'needs a GPU';
  const plan = planOf(shape, env.gpu);
  if (typeof plan === 'string') return plan;
  const { maxComputeWorkgroupStorageSize: limit, maxComputeInvocationsPerWorkgroup: mostInvocations } = env.gpu.report.limits;
  const workgroupBytes = kernelWorkgroupBytes(kernel.code, plan.constants);
  if (workgroupBytes > limit) {
    return `${plan.summary} needs ${formatBytes(workgroupBytes)} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
  }
  const invocations = plan.constants.WG;
  if (invocations !== undefined && invocations > mostInvocations) {
    return `${plan.summary} needs ${invocations} invocations per workgroup, over this GPU's ${mostInvocations}`;
  }
  return plan;
}

export function singlePassRung(rung: SinglePassRung): RungDefinition {
  const planFor = (shape: Shape, env: RunEnv): SinglePassPlan | string => checkedPlan(rung.kernel, (s, gpu) => rung.plan(s, gpu), shape, env);
  /** The GPU and the plan for a shape, or the reason there is none, thrown. */
  const planned = (env: RunEnv, shape: Shape): { gpu: GpuContext; plan: SinglePassPlan } => {
    const plan = planFor(shape, env);
    if (typeof plan === 'string' || !env.gpu) throw new UnsupportedShapeError(`${rung.id}: ${typeof plan === 'string' ? plan : 'needs a GPU'}`);
    return { gpu: env.gpu, plan };
  };
  return {
    id: rung.id,
    kind: 'gpu',
    title: rung.title,
    delta: rung.delta,
    parent: rung.parent,
    ...(rung.requires ? { requires: rung.requires } : {}),
    kernels: [rung.kernel],
    supports: (shape, env) => {
      const plan = planFor(shape, env);
      return typeof plan === 'string' ? plan : true;
    },
    rounding: (shape, env) => {
      const plan = planFor(shape, env);
      if (typeof plan === 'string') return undefined;
      return rung.rounding ? rung.rounding(shape, plan) : keyRangeModel(shape, plan, rung.kernel);
    },
    prepare: async (env, shape, options) => {
      const { gpu, plan } = planned(env, shape);
      return prepareAttentionRunner(gpu, shape, rung.id, await singlePassKernel(rung, gpu, shape, plan), options);
    },
    prepareKernel: (env, shape) => {
      const { gpu, plan } = planned(env, shape);
      return singlePassKernel(rung, gpu, shape, plan);
    },
    ...(rung.tiles ? { tiles: rungTiles(rung, rung.tiles) } : {}),
  };
}

/** The tile study's view of a rung: the rung with other sizes (its plan from `study`), and their footprint. */
function rungTiles(rung: SinglePassRung, study: TileStudy): RungTiles {
  /** The study's plan with `sizes`, after checking that it names a value for each axis. */
  const planWith = (sizes: Readonly<Record<string, number>>): SinglePassRung['plan'] => {
    const missing = study.axes.filter((axis) => sizes[axis.name] === undefined).map((axis) => axis.name);
    if (missing.length > 0) throw new Error(`${rung.id}: the tile study needs a value for ${missing.join(' and ')}`);
    return (shape, gpu) => study.plan(shape, gpu, sizes);
  };
  return {
    axes: study.axes,
    withTiles: (sizes) => singlePassRung({ ...rung, tiles: undefined, plan: planWith(sizes) }),
    footprint: (shape, env, sizes) => {
      const plan = checkedPlan(rung.kernel, planWith(sizes), shape, env);
      if (typeof plan === 'string') return plan;
      return {
        workgroupBytes: kernelWorkgroupBytes(rung.kernel.code, plan.constants),
        invocations: plan.constants.WG ?? 1,
        workgroupsPerBatch: plan.workgroups(1),
        summary: plan.summary,
      };
    },
    planned: (shape, env) => {
      const plan = env.gpu ? rung.plan(shape, env.gpu) : 'needs a GPU';
      if (typeof plan === 'string') return undefined;
      const values = study.axes.map((axis) => [axis.name, plan.constants[axis.name]] as const);
      return values.every(([, v]) => v !== undefined) ? Object.fromEntries(values as (readonly [string, number])[]) : undefined;
    },
  };
}

/** Checks that the kernel binds exactly the resources the host provides, by name. */
export function checkBindings(rung: string, kernel: KernelSource, provided: readonly string[]): void {
  const declared = kernelBindings(kernel.code).map((b) => b.name);
  const unbound = declared.filter((name) => !provided.includes(name));
  const unused = provided.filter((name) => !declared.includes(name));
  if (unbound.length > 0 || unused.length > 0) {
    const parts = [
      unbound.length > 0 ? `${kernel.label} binds ${unbound.join(', ')}, which the host does not provide` : '',
      unused.length > 0 ? `the host provides ${unused.join(', ')}, which ${kernel.label} does not bind` : '',
    ].filter((p) => p.length > 0);
    throw new Error(`${rung}: ${parts.join('; ')}`);
  }
}

/** The kernel's uniform fields, checked against the values the plan gives. */
export function checkUniforms(rung: string, kernel: KernelSource, values: Readonly<Record<string, number>>): UniformField[] {
  const fields = structFields(kernel.code, 'Params') ?? [];
  const missing = fields.filter((f) => values[f.name] === undefined).map((f) => f.name);
  const extra = Object.keys(values).filter((name) => !fields.some((f) => f.name === name));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `${rung}: uniforms disagree with struct Params of ${kernel.label}` +
        (missing.length > 0 ? `; no value for ${missing.join(', ')}` : '') +
        (extra.length > 0 ? `; no field for ${extra.join(', ')}` : ''),
    );
  }
  return fields;
}

/** The rung's kernel for a shape: checked against its description, compiled, ready to bind to buffers. */
async function singlePassKernel(rung: SinglePassRung, gpu: GpuContext, shape: Shape, plan: SinglePassPlan): Promise<AttentionKernel> {
  const { device } = gpu;
  const scratchNames = Object.keys(plan.scratchBytesPerBatch ?? {});
  const fields = checkUniforms(rung.id, rung.kernel, plan.uniforms(1));
  const provided = [...STANDARD_BINDINGS.filter((name) => name !== 'params' || fields.length > 0), ...scratchNames];
  checkBindings(rung.id, rung.kernel, provided);
  const bindings = kernelBindings(rung.kernel.code);
  const dispatches: FollowingDispatch[] = [{ entryPoint: 'main', workgroups: (batches) => plan.workgroups(batches) }, ...(plan.followedBy ?? [])];
  // A kernel of one entry point: the layout WebGPU derives from it. Of several: one explicit layout of every binding,
  // so that a single bind group serves all of them (a derived layout holds only the bindings its entry point uses),
  // also for a plan that dispatches `main` alone, so that its pipeline is the one the plans with `followedBy` compile.
  const layout = computeEntryPoints(rung.kernel.code).length === 1 ? 'auto' : sharedLayout(gpu, rung.id, bindings);
  const pipelines = await checked(gpu, `compiling ${rung.id} (${plan.summary}, d = ${shape.d})`, () =>
    computePipelines(gpu, rung.kernel, dispatches.map((x) => x.entryPoint), { ...plan.constants }, layout),
  );
  const pipeline = pipelines.main as GPUComputePipeline;
  return {
    scratchBytesPerBatch: plan.scratchBytesPerBatch ?? {},
    bind(buffers: AttentionBuffers) {
      const params = device.createBuffer({
        label: `${rung.id} params`,
        size: Math.max(16, Math.ceil((fields.length * 4) / 16) * 16),
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      });
      const resources: Record<string, GPUBuffer> = { qkv: buffers.qkv, O: buffers.O, params, ...buffers.scratch };
      const group = device.createBindGroup({
        label: rung.id,
        layout: pipeline.getBindGroupLayout(0),
        entries: bindings.map(({ binding, name }) => ({ binding, resource: { buffer: resources[name] as GPUBuffer } })),
      });
      let writtenFor = 0;
      return {
        encode(encoder, batches, timer) {
          if (writtenFor !== batches) {
            device.queue.writeBuffer(params, 0, packUniforms(fields, plan.uniforms(batches)));
            writtenFor = batches;
          }
          const pass = encoder.beginComputePass({ label: rung.id, timestampWrites: timer.writes(true, true) });
          pass.setBindGroup(0, group);
          for (const { entryPoint, workgroups } of dispatches) {
            pass.setPipeline(pipelines[entryPoint] as GPUComputePipeline);
            const [x, y] = grid2d(gpu, workgroups(batches));
            pass.dispatchWorkgroups(x, y);
          }
          pass.end();
        },
        destroy() {
          params.destroy();
        },
      };
    },
  };
}

/**
 * A pipeline layout with every binding of the kernel (storage read-only, storage, or uniform), for compute: the same
 * object for the same bindings, so that the pipelines compiled with it are reused (`computePipelines`).
 */
function sharedLayout(gpu: GpuContext, label: string, bindings: readonly KernelBinding[]): GPUPipelineLayout {
  const typeOf = (declared: string): GPUBufferBindingType => {
    const space = declared.replace(/\s*,\s*/g, ', ');
    if (space === 'uniform') return 'uniform';
    if (space === 'storage, read_write') return 'storage';
    if (space === 'storage, read' || space === 'storage') return 'read-only-storage';
    throw new Error(`${label}: binding in address space ${space} is not supported`);
  };
  const entries = bindings.map(({ binding, space }) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: typeOf(space) } }));
  return cachedLayout(gpu, label, entries).pipelineLayout;
}
