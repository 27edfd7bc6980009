/**
 * What subgroup matrices (Dawn's chromium-experimental-subgroup-matrix, f16 → f32, 16×16×16, and i8 → i32) deliver
 * in a FlashAttention-shaped loop (subgroup-matrix-kernels.ts), measured before a tensor-core rung is designed on them.
 * Needs a GPU with the feature (an H100 through Dawn with allow_unsafe_apis and vulkan_enable_f16_on_nvidia); prints
 * the adapter's subgroup-matrix configurations and TFLOP/s (2·16·16·16 flops per multiply-accumulate, best of 5).
 */
import { SUBGROUP_MATRIX_FEATURE, type SubgroupMatrixConfig } from '@fa/core';
import { UsageError } from './args.js';
import type { Experiment } from './experiment.js';
import { highPerformanceAdapter, requireFeatures, storage, timeDispatches, warmUp } from './harness.js';
import { designKernel, loopDesigns } from './subgroup-matrix-designs.js';
import { HEAD_KEYS, HEAD_SOURCE_BYTES, headDesignBytes, headDesignFlops, headDesignKernel, headDesigns } from './subgroup-matrix-heads.js';
import { subgroupMatrixRuns, TILES, WORKGROUPS, type SubgroupMatrixRun } from './subgroup-matrix-kernels.js';

/**
 * Row strides of the f16 workgroup tiles, in elements (default 64 72). At 64 f16 (128 bytes) every row of a 16×16
 * fragment starts in the same bank; 72 (144 bytes) moves each row 4 banks on, so 8 rows cover all 32.
 */
export function parseStrides(args: readonly string[]): number[] {
  if (args.length === 1 && args[0] === 'designs') return [];
  const strides = args.map(Number);
  const wrong = args.find((_, k) => !(Number.isInteger(strides[k]) && (strides[k] as number) >= 64 && (strides[k] as number) % 8 === 0));
  if (wrong !== undefined) throw new UsageError(`stride ${wrong}: a multiple of 8, at least 64`);
  return strides.length > 0 ? strides : [64, 72];
}

/** `heads [KEYS]`: the keys per query fragment, a multiple of 64 from 64 to 65536 (default HEAD_KEYS). */
export function parseKeys(args: readonly string[]): number {
  if (args.length === 0) return HEAD_KEYS;
  const keys = Number(args[0]);
  if (args.length > 1 || !(Number.isInteger(keys) && keys >= 64 && keys <= 65536 && keys % 64 === 0)) {
    throw new UsageError(`heads ${args.join(' ')}: KEYS is one multiple of 64 from 64 to 65536`);
  }
  return keys;
}

/** Each dispatch, after 500 ms of the GPU's time spent on it (warmUp): the first warms the caches, the other five are timed. */
const REPEATS = 6;

/** A run with its own count of FLOPs, a storage buffer to read K/V tiles from, and its workgroup memory. */
type Run = SubgroupMatrixRun & { flops?: number; source?: boolean; bytes?: number };

/** The runs `args` ask for. */
function runsFor(args: readonly string[]): Run[] {
  // `designs`: the loop designs past the round trip (subgroup-matrix-designs.ts), the same work as the runs below.
  if (args[0] === 'designs') return loopDesigns().map((design) => ({ label: design.label, code: designKernel(design), workgroups: design.workgroups }));
  // `heads`: attention-matrix's loop at d = 64-256 (subgroup-matrix-heads.ts).
  if (args[0] === 'heads') {
    const keys = parseKeys(args.slice(1));
    return headDesigns().map((design) => ({
      label: design.label,
      code: headDesignKernel(design, keys),
      workgroups: design.workgroups,
      flops: headDesignFlops(design, keys),
      source: design.stage,
      bytes: headDesignBytes(design),
    }));
  }
  return subgroupMatrixRuns(parseStrides(args));
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  const runs = runsFor(args);
  const adapter = await highPerformanceAdapter();
  const FEATURES: GPUFeatureName[] = ['shader-f16', 'subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE];
  requireFeatures(adapter, FEATURES);
  const configs = (adapter.info as GPUAdapterInfo & { subgroupMatrixConfigs?: readonly SubgroupMatrixConfig[] }).subgroupMatrixConfigs ?? [];
  const describe = (c: SubgroupMatrixConfig): string => `${c.componentType}→${c.resultComponentType} ${c.M}×${c.N}×${c.K}`;
  print(`adapter: ${adapter.info.vendor} ${adapter.info.device}; subgroup matrices: ${configs.map(describe).join(', ') || 'not listed'}`);
  const device = await adapter.requestDevice({
    requiredFeatures: FEATURES,
    requiredLimits: { maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize },
  });
  const out = storage(device, WORKGROUPS * 1024 * 4);
  const source = runs.some((r) => r.source) ? storage(device, HEAD_SOURCE_BYTES) : undefined;
  const perUnit = (bytes: number): number => Math.floor(adapter.limits.maxComputeWorkgroupStorageSize / bytes);
  for (const { label, code, workgroups, flops: runFlops, source: reads, bytes } of runs) {
    const module = device.createShaderModule({ code });
    const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
    if (error) {
      print(`${label}: does not compile, line ${error.lineNum}: ${error.message.split('\n')[0] ?? ''}`);
      continue;
    }
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    } catch (failure) {
      // e.g. the tiles over the workgroup memory limit
      print(`${label}: not run, ${(failure instanceof Error ? failure.message : String(failure)).split('\n')[0] ?? ''}`);
      continue;
    }
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: out } }];
    if (reads && source) entries.push({ binding: 1, resource: { buffer: source } });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    await warmUp(device, [[pipeline, group, workgroups]]);
    const ms = await timeDispatches(device, [[pipeline, group, workgroups]], REPEATS);
    const flops = runFlops ?? WORKGROUPS * TILES * 32 * 2 * 16 * 16 * 16; // i8: 16 of 16×16×32, the same count
    const best = Math.min(...ms);
    const memory = bytes === undefined ? '' : `, ${bytes} B of workgroup memory (${perUnit(bytes)} per compute unit by it)`;
    print(`${label}: ${ms.map((x) => x.toFixed(2)).join(' ')} ms, best ${(flops / best / 1e9).toFixed(1)} TFLOP/s${memory}`);
  }
  device.destroy();
}

export const subgroupMatrixBench: Experiment = {
  name: 'subgroup-matrix-bench',
  summary: 'what f16 and i8 subgroup matrices deliver in a FlashAttention-shaped loop',
  usage: '[STRIDE ... | designs | heads [KEYS]]',
  page: 'docs/subgroup-matrix-bench.md',
  details: [
    'STRIDE: row stride of the f16 tiles in elements, a multiple of 8 from 64 (default 64 72)',
    'designs: the f16 loop designs past the softmax round trip (more query rows per subgroup, pipelined S/P, the bound without barriers)',
    'heads: attention-matrix\'s f16 loop at d = 64-256 and designs around it at d = 128 (tiles staged or not, K and V side by side, 16-key tiles, part of O in workgroup memory, S_(j+1) before the softmax of tile j, bounds without the elementwise pass or the barriers) and at d = 64 (8 subgroups per workgroup, 32-key tiles, K and V side by side); KEYS per 16 query rows, a multiple of 64 (default 8192)',
  ],
  run,
};
