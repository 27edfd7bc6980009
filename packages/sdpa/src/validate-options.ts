/**
 * Run-time checks of @fa/sdpa's options, for the callers the types do not reach (JavaScript, casts): PrepareOptions
 * (planAttention, prepareAttention, chooseKernel, gpuUnsupportedReason), AttentionOptions (attention, with or without
 * a plan), the options of a prepared attention's `run`, and CacheAppendOptions (prepareCacheAppend). Each checks its
 * own keys and values and leaves those of SdpaOptions to @fa/core's checkSdpaOptions; a refusal is one
 * SdpaArgumentError line naming the option, what was given and what to give. Nothing here touches the GPU, so a wrong
 * option is refused before anything compiles.
 */
import { checkOptionKeys, checkSdpaOptions, describeValue, SdpaArgumentError, sdpaOptionsOf, type GpuContext, type SdpaOptions } from '@fa/core';
import type { AttentionOptions } from './attention.js';
import type { CacheAppendOptions } from './cache/append-cache.js';
import { TUNING_KEYS } from './decode/attention-decode.js';
import type { TensorType } from './kernel-support.js';
import type { GpuKernelId, PrepareOptions } from './prepare.js';

const KERNELS: readonly GpuKernelId[] = ['attention-fp32', 'attention-matrix', 'attention-decode'];
const DTYPES: readonly TensorType[] = ['f32', 'f16'];
const LAYOUTS: readonly string[] = ['bhsd', 'bshd'];

/** The keys PrepareOptions adds to SdpaOptions. */
const PREPARE_KEYS = ['lse', 'dtype', 'kernel', 'maxBindingBytes', 'tuning'] as const satisfies readonly (keyof PrepareOptions)[];
/** The keys AttentionOptions adds to SdpaOptions. */
const ATTENTION_KEYS = ['gpu', 'returnLse', 'kernel', 'plan'] as const satisfies readonly (keyof AttentionOptions)[];
/** The keys AttentionOptions takes beside a plan (which holds the rest). */
const PLANNED_ATTENTION_KEYS = ['plan', 'gpu'] as const satisfies readonly (keyof AttentionOptions)[];
const APPEND_KEYS = ['layout', 'dtype'] as const satisfies readonly (keyof CacheAppendOptions)[];

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

function checkBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw new SdpaArgumentError(`${name} is ${describeValue(value)}; give true or false`);
}

function checkKernel(value: unknown): void {
  if (value !== undefined && !KERNELS.includes(value as GpuKernelId)) throw new SdpaArgumentError(`kernel is ${describeValue(value)}; give ${quoted(KERNELS)}, or leave it out for the one that fits`);
}

function checkDtype(value: unknown): void {
  if (value !== undefined && !DTYPES.includes(value as TensorType)) throw new SdpaArgumentError(`dtype is ${describeValue(value)}; give 'f32' (Float32Array tensors) or 'f16' (f16 bits in Uint16Array tensors)`);
}

const isPositiveInteger = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

/** The GPU argument: a GpuContext (@fa/core/node's acquireNodeGpu, or gpuContextFromDevice in a browser). */
export function checkGpu(gpu: unknown, name = 'gpu'): asserts gpu is GpuContext {
  const context = gpu as { device?: unknown; report?: { limits?: unknown } } | null | undefined;
  const like = typeof gpu === 'object' && gpu !== null && typeof context?.device === 'object' && context.device !== null && typeof context.report === 'object' && typeof context.report.limits === 'object' && context.report.limits !== null;
  if (!like) throw new SdpaArgumentError(`${name} is ${describeValue(gpu)}; give a GpuContext (acquireNodeGpu from @fa/core/node, or gpuContextFromDevice in a browser)`);
}

/** PrepareOptions: SdpaOptions and lse, dtype, kernel, maxBindingBytes, tuning. */
export function checkPrepareOptions(options: unknown): asserts options is PrepareOptions | undefined {
  checkSdpaOptions(options, PREPARE_KEYS);
  if (options === undefined) return;
  const { lse, dtype, kernel, maxBindingBytes, tuning } = options as Readonly<Record<string, unknown>>;
  checkBoolean('lse', lse);
  checkDtype(dtype);
  checkKernel(kernel);
  if (maxBindingBytes !== undefined && !isPositiveInteger(maxBindingBytes)) throw new SdpaArgumentError(`maxBindingBytes is ${describeValue(maxBindingBytes)}; give a positive integer, or leave it out for the GPU's limit`);
  if (tuning !== undefined) {
    if (typeof tuning !== 'object' || tuning === null || Array.isArray(tuning)) throw new SdpaArgumentError(`tuning is ${describeValue(tuning)}; give an object of positive integers ${TUNING_KEYS.join(', ')}`);
    checkOptionKeys(tuning, TUNING_KEYS, 'tuning', 'tuning key');
    for (const key of TUNING_KEYS) {
      const value = tuning[key];
      // matrixQAhead is a switch (0 or 1); matrixFlush takes 0 (O rescaled in place); the rest are sizes.
      const allowed = value === undefined || (key === 'matrixQAhead' ? value === 0 || value === 1 : isPositiveInteger(value) || (key === 'matrixFlush' && value === 0));
      const wanted = key === 'matrixQAhead' ? '0 or 1' : key === 'matrixFlush' ? 'an integer ≥ 0' : 'a positive integer';
      if (!allowed) throw new SdpaArgumentError(`tuning.${key} is ${describeValue(value)}; give ${wanted}, or leave it out for the plan's`);
    }
  }
}

/** AttentionOptions: SdpaOptions and gpu, returnLse, kernel (and plan, which `checkPlannedAttentionOptions` checks). */
export function checkAttentionOptions(options: unknown): asserts options is AttentionOptions | undefined {
  checkSdpaOptions(options, ATTENTION_KEYS);
  if (options === undefined) return;
  const { gpu, returnLse, kernel } = options as Readonly<Record<string, unknown>>;
  if (gpu !== undefined) checkGpu(gpu);
  checkBoolean('returnLse', returnLse);
  checkKernel(kernel);
}

/**
 * AttentionOptions with a plan: the plan and, optionally, the GPU; any other option is refused, since the plan holds
 * them (whether the plan is one planAttention made, attention checks).
 */
export function checkPlannedAttentionOptions(options: object): asserts options is AttentionOptions {
  const extra = Object.keys(options).find((key) => !(PLANNED_ATTENTION_KEYS as readonly string[]).includes(key));
  if (extra !== undefined) throw new SdpaArgumentError(`${extra} is given beside plan, which holds the options; give them to planAttention instead`);
  const { gpu } = options as Readonly<Record<string, unknown>>;
  if (gpu !== undefined) checkGpu(gpu);
}

/** The options of a prepared attention's run: cacheLengths, only where it was prepared with cache lengths. */
export function checkRunOptions(options: unknown, preparedWithCacheLengths: boolean): asserts options is { readonly cacheLengths?: ArrayLike<number> } | undefined {
  checkOptionKeys(options, ['cacheLengths'], 'the options of run');
  if (options?.cacheLengths !== undefined && !preparedWithCacheLengths) {
    throw new SdpaArgumentError('run was given cacheLengths, but the attention was prepared without them; prepare with cacheLengths (the first run\'s) to give each run its own');
  }
}

/** CacheAppendOptions: layout and dtype. */
export function checkCacheAppendOptions(options: unknown): asserts options is CacheAppendOptions | undefined {
  checkOptionKeys(options, APPEND_KEYS);
  if (options === undefined) return;
  const { layout, dtype } = options;
  if (layout !== undefined && (typeof layout !== 'string' || !LAYOUTS.includes(layout))) throw new SdpaArgumentError(`layout is ${describeValue(layout)}; give 'bhsd' ([B, H, L, d]) or 'bshd' ([B, L, H, d])`);
  checkDtype(dtype);
}


/** attention()'s options, checked: the SdpaOptions sdpaProblem takes, and those with the kernel prepareAttention takes. */
export function attentionOptionsOf(options: unknown): { readonly sdpa: SdpaOptions; readonly prepare: PrepareOptions } {
  checkAttentionOptions(options);
  const sdpa = sdpaOptionsOf(options ?? {});
  return { sdpa, prepare: { ...sdpa, ...(options?.kernel !== undefined ? { kernel: options.kernel } : {}) } };
}
