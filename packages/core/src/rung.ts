/**
 * The one interface every rung implements, CPU or GPU. `prepare` does the one-time work (pipelines, buffers,
 * worker threads) so that benchmarks time only `run`.
 */
import type { Shape } from '@fa/io';
import type { RoundingModel } from './error-bound.js';
import type { GpuContext } from './gpu-context.js';
import type { AttentionKernel } from './gpu/attention-runner.js';
import type { KernelSource } from './gpu/pipeline.js';

export type RungKind = 'cpu' | 'gpu';

/** What a rung may use on this machine. */
export interface RunEnv {
  /** The GPU, when an adapter exists. */
  readonly gpu?: GpuContext;
  /** Why there is no GPU, when there is none (shown by --list). */
  readonly gpuUnavailableReason?: string;
  /** CPU threads a CPU rung may use. */
  readonly threads: number;
}

/** A rung as its package defines it; its ladder position comes from its place in the ladder table. */
export interface RungDefinition {
  /** CLI key: 'seq-attention', 'fused', ... */
  readonly id: string;
  readonly kind: RungKind;
  /** One line: what the rung is. */
  readonly title: string;
  /** One sentence: what changed from its `parent`, and why it should be faster. */
  readonly delta: string;
  /**
   * The id of the rung this one changes (null only for the first rung): the ladder is a tree, not a line. Rungs 1-15
   * are its trunk; rung 18 `row-split` changes rung 15 `prefetch`, past the two matrix-unit rungs, and starts the fp32
   * branch (18-22); rungs 16-17 and 23-24 are the matrix-unit branch. The teaching page diffs a rung's kernel against
   * its parent's.
   */
  readonly parent: string | null;
  /**
   * Set on the product's kernels (@fa/sdpa) run on hw4's layout: not lessons of the ladder but the kernels the lessons
   * led to, which hw4-cli runs by default where the bench shows them at least as fast as the best proven rung.
   */
  readonly product?: true;
  /** WebGPU features the rung needs. */
  readonly requires?: readonly GPUFeatureName[];
  /**
   * Set when the rung rounds its operands below float32 (e.g. to f16) and so may miss the 5e-3 contract on ordinary
   * data: the automatic choice never picks it, and the conformance suite holds it to a plain computation at that
   * precision instead of to the float32 baseline.
   */
  readonly reducedPrecision?: 'f16';
  /**
   * Set when the rung keeps its operands in a format of narrower range than float32 (f16: finite only up to 65504),
   * even where it reaches float32 accuracy: an input beyond that range overflows. The automatic choice picks it only
   * where the bench ranked it fastest and it is not `reducedPrecision`; hw4-cli then sends the chunks whose values may
   * leave the range to the fastest rung without this limit, and refuses such an input when the rung was named.
   */
  readonly reducedRange?: 'f16';
  /**
   * How the rung rounds when it runs `shape` here, for the proven float32 error bound (error-bound.ts): what lets
   * hw4-cli admit an input to the rung only where the bound meets the tolerance. Absent (or undefined) where no bound is
   * proven for the rung: then hw4-cli runs it only when asked by name with --allow-inaccurate.
   */
  rounding?(shape: Shape, env: RunEnv): RoundingModel | undefined;
  /** Whether the rung can run `shape` here: true, or the reason it cannot. */
  supports(shape: Shape, env: RunEnv): true | string;
  prepare(env: RunEnv, shape: Shape, options?: PrepareOptions): Promise<Runner>;
  /**
   * A GPU rung's kernel alone (pipelines compiled, no buffers), for encoding into the caller's own command encoder on
   * the caller's buffers: see `prepareEncoded`. Absent on CPU rungs.
   */
  prepareKernel?(env: RunEnv, shape: Shape): Promise<AttentionKernel>;
  /** The WGSL of a GPU rung's kernels (for the docs, the ladder's header checks and diffs between rungs). */
  readonly kernels?: readonly KernelSource[];
  /** The two sizes of its plan a GPU rung lets the tile study set (`hw4-cli sweep --over tiles`), where it has them. */
  readonly tiles?: RungTiles;
}

/** One tunable size of a rung's plan: an override constant of its kernel. */
export interface TileAxis {
  /** The override constant it sets: 'BR', 'BC', 'WG'. */
  readonly name: string;
  /** What it counts, for tables and charts: 'query rows per workgroup'. */
  readonly meaning: string;
  /** The values the study tries unless told others. */
  readonly values: readonly number[];
}

/** What one choice of tile sizes asks of the GPU: the figures that decide how many workgroups share a compute unit. */
export interface TileFootprint {
  /** Workgroup memory the kernel declares with these sizes (as Dawn counts it). */
  workgroupBytes: number;
  /** Invocations per workgroup. */
  invocations: number;
  /** Workgroups of one batch (of the main dispatch). */
  workgroupsPerBatch: number;
  /** The plan in one line. */
  summary: string;
}

/** A rung's tunable sizes, and the rung with other values of them than its plan's. */
export interface RungTiles {
  /** The rows and the columns of the study's grid. */
  readonly axes: readonly [TileAxis, TileAxis];
  /** The rung with `sizes` (a value for each axis, by name) in place of its plan's own; same id. */
  withTiles(sizes: Readonly<Record<string, number>>): RungDefinition;
  /** The footprint of `sizes` for `shape` here, or why they cannot run it. */
  footprint(shape: Shape, env: RunEnv, sizes: Readonly<Record<string, number>>): TileFootprint | string;
  /** The values of the axes the rung's own plan chooses for `shape` here, when it can run it. */
  planned(shape: Shape, env: RunEnv): Record<string, number> | undefined;
}

/** A rung on the ladder. */
export interface Rung extends RungDefinition {
  /** Position on the ladder (1 = slowest idea), from the ladder table. */
  readonly index: number;
}

export interface PrepareOptions {
  /**
   * The most batches the caller will pass to one `run` (e.g. the batches of one input chunk): GPU rungs size their
   * buffers to it instead of to the whole shape, so setup allocates for a chunk, not for the file.
   */
  maxBatchesPerRun?: number;
}

export interface RunStats {
  /** Time the GPU spent, from timestamp queries, when available. */
  gpuMs?: number;
  /** Host time spent copying the input into upload staging memory (GPU rungs). */
  uploadMs?: number;
  /** Host time spent copying the output out of mapped readback memory, not waiting for it (GPU rungs). */
  readbackMs?: number;
}

export interface Runner {
  /** Most batches one `run` call accepts (binding limits, memory); callers feed chunks of at most this many. */
  readonly maxBatchesPerRun: number;
  /** True when the runner works best on SharedArrayBuffer-backed input (worker threads read it without a copy). */
  readonly prefersSharedInput?: boolean;
  /**
   * How many `run` calls may be in flight at once (default 1). GPU runners take 2: the next chunk is uploaded while
   * the current one computes and the previous one is read back, each through its own staging and readback buffers.
   */
  readonly concurrentRuns?: number;
  /**
   * Computes O for `batches` consecutive batches. `input` holds Q, K, V per batch (batches·3·N·d floats),
   * `output` receives O per batch (batches·N·d floats).
   */
  run(input: Float32Array, batches: number, output: Float32Array): Promise<RunStats>;
  /**
   * GPU rungs: runs the kernel again on the input of the last `run` (`batches` batches), `warmups` times untimed and
   * then `repeats` times back to back, each timed on its own; returns the milliseconds of each timed repeat, or
   * undefined without timestamps. This is the steady-state kernel time (the GPU at its working clock), as PyTorch's
   * benchmarks measure it; `run` times one cold dispatch between uploads.
   */
  timeKernel?(batches: number, warmups: number, repeats: number): Promise<number[] | undefined>;
  /** Frees buffers, pipelines and threads. */
  dispose(): Promise<void>;
}

/** Why a rung cannot run here at all (no GPU, missing feature), or undefined when it can. */
export function unavailableReason(rung: RungDefinition, env: RunEnv): string | undefined {
  if (rung.kind === 'cpu') return undefined;
  if (!env.gpu) return env.gpuUnavailableReason ?? 'no GPU adapter';
  const missing = (rung.requires ?? []).filter((f) => !env.gpu?.device.features.has(f));
  if (missing.length > 0) return `the GPU lacks feature${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
  return undefined;
}

/** Availability of a rung for a shape: true, or the reason it cannot run it here. */
export function canRun(rung: RungDefinition, shape: Shape, env: RunEnv): true | string {
  return unavailableReason(rung, env) ?? rung.supports(shape, env);
}
