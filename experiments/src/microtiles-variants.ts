/**
 * Times the fp32 microtile experiment (microtiles-experiment.wgsl: S and P̃ V as 8 × 8 register blocks, every operand
 * in workgroup memory; a kernel of this package, not a rung) and variants of it, one per process, on random ±3 data,
 * and checks the output against a float64 computation on sampled rows. Each variant is a set of the kernel's override
 * constants; a knock-out (✗) removes one part of the loop and gives wrong results: it only shows what that part costs.
 * Prints: B×N×d, the variant, the best of 3 timed runs after a warm-up (both dispatches), TFLOP/s (4·B·N²·d flops) and
 * the max abs error on 18 rows of the first and last batch.
 */
import { atMost, parseShape, shapeLabel, UsageError, type ShapeArg } from './args.js';
import type { Experiment } from './experiment.js';
import {
  assertCompiles,
  bindByName,
  deviceWithAdapterLimits,
  highPerformanceAdapter,
  maxErrorOnSampledRows,
  NotHereError,
  paramsBuffer,
  requireFeatures,
  resultLine,
  storage,
  timePasses,
  uploadRandomInput,
} from './harness.js';
import code from './microtiles-experiment.wgsl';
import { assertDeclaredOverrides, pipelineConstants } from './overrides.js';

export const MICROTILES_KERNEL = code;

/** Each variant's override constants besides D, BR and KS4. */
export const MICROTILE_VARIANTS: Readonly<Record<string, Readonly<Record<string, number | boolean>>>> = {
  kernel: {},
  // ✗ The next tiles are never written to workgroup memory: tile 0 serves every step.
  'no-stage': { STAGE: false },
  // ✗ P̃ᵀ and α are not written (P̃ V_j reads what is there).
  'no-P-store': { STORE_P: false },
  // ✗ No S products.
  'no-S': { DH: 0 },
  // ✗ No P̃V products.
  'no-PV': { PV_KEYS: 0 },
  // ✗ Neither product.
  'no-products': { DH: 0, PV_KEYS: 0 },
  // Kᵀ rows of 36 floats instead of 48: the two halves' reads of Kᵀ share banks.
  ks9: { KS4: 9 },
};

/** A layout: query rows per workgroup BR and the row stride of Kᵀ in vec4s KS4. */
export interface MicrotileLayout {
  BR: number;
  KS4: number;
}

/** The layouts to try, best first, as far as the adapter's workgroup memory allows (as the kernel's header says). */
export const MICROTILE_LAYOUTS: readonly MicrotileLayout[] = [{ BR: 64, KS4: 12 }, { BR: 64, KS4: 9 }, { BR: 32, KS4: 12 }, { BR: 32, KS4: 9 }];

/** Workgroup memory of `attend`: Qᵀ, Kᵀ, V_j, P̃ᵀ and the row scales. */
export const microtileWorkgroupBytes = (d: number, { BR, KS4 }: MicrotileLayout): number =>
  4 * (d * (BR + 4) + d * 4 * KS4 + 32 * d + 32 * (BR + 4) + BR);

export interface MicrotileArgs {
  variant: string;
  shape: ShapeArg;
}

export function parseMicrotileArgs(args: readonly string[]): MicrotileArgs {
  atMost(args, 2);
  const [variant = 'kernel', shapeArg = '100,2048,64'] = args;
  if (!(variant in MICROTILE_VARIANTS)) throw new UsageError(`no variant ${variant}; variants: ${Object.keys(MICROTILE_VARIANTS).join(', ')}`);
  const shape = parseShape(shapeArg);
  if (shape.d !== 32 && shape.d !== 64) throw new UsageError(`shape ${shapeArg}: d = 32 or 64`);
  return { variant, shape };
}

/** The variant's constants: D, the first layout that fits `workgroupLimit`, the variant's own. */
export function microtileConstants({ variant, shape }: MicrotileArgs, workgroupLimit: number): Record<string, number | boolean> & MicrotileLayout {
  const layout = MICROTILE_LAYOUTS.find((l) => microtileWorkgroupBytes(shape.d, l) <= workgroupLimit);
  if (!layout) throw new NotHereError(`no layout fits this GPU's ${workgroupLimit} bytes of workgroup memory`);
  return { D: shape.d, ...layout, ...MICROTILE_VARIANTS[variant] };
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  const parsed = parseMicrotileArgs(args);
  const { variant, shape } = parsed;
  const { B, N, d } = shape;
  const adapter = await highPerformanceAdapter();
  requireFeatures(adapter, ['subgroups', 'timestamp-query']);
  const device = await deviceWithAdapterLimits(adapter, ['subgroups', 'timestamp-query']);
  const constants = microtileConstants(parsed, adapter.limits.maxComputeWorkgroupStorageSize);
  assertDeclaredOverrides(variant, code, constants);
  const { BR, KS4 } = constants;

  const NP = Math.ceil(N / 32) * 32;
  const { qkv, at } = uploadRandomInput(device, shape);
  const O = storage(device, B * N * d * 4, GPUBufferUsage.COPY_SRC);
  const KT = storage(device, B * d * NP * 4);
  const params = paramsBuffer(device, code, { N, NP, batches: B, scaleLog2: Math.LOG2E / Math.sqrt(d) });
  const module = device.createShaderModule({ code });
  await assertCompiles(module, variant);
  const transpose = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants: pipelineConstants(constants) } });
  const attend = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'attend', constants: pipelineConstants(constants) } });
  const transposeGroup = bindByName(device, transpose, code, { qkv, params, KT });
  const attendGroup = bindByName(device, attend, code, { qkv, O, params, KT });
  const { best, out } = await timePasses(device, [
    [transpose, transposeGroup, Math.ceil((B * NP * d) / 4 / 256)],
    [attend, attendGroup, B * Math.ceil(N / BR)],
  ], O);
  const worst = maxErrorOnSampledRows(out, at, shape);
  print(`${shapeLabel(shape)} microtiles ${variant.padEnd(12)} (BR = ${BR}, KS4 = ${KS4}) ${resultLine(shape, best, worst)}`);
  device.destroy();
}

export const microtilesVariants: Experiment = {
  name: 'microtiles-variants',
  summary: 'the fp32 microtile kernel (not a rung) and knock-outs of it through its override constants',
  usage: 'VARIANT [B,N,d]',
  page: 'docs/workgroup-reads-bench.md',
  details: [`variants: ${Object.keys(MICROTILE_VARIANTS).join(', ')}`, 'default shape 100,2048,64 (d = 32 or 64); one variant per process'],
  run,
};
