/**
 * Times the kernel of a tensor-core rung from rung 23 on (its convert and main passes in one compute pass) and
 * variants of it, one variant per process, on random ±3 data, and checks the output against a float64 computation on
 * sampled rows. A variant is the rung's plan for the shape (its override constants) with some of them set otherwise
 * (resident-o's FLUSH, BC and NSG; f16-resident's NSG, BC, OW, SO, KS, PH, FLUSH and the padding's PAD), of a kernel whose text is
 * the rung's or an edit of it (matrix-kernel-edits.ts): a design (resident-o-one-key, f16-resident-in-place, ...) or a
 * bound that leaves part of the work out or in (f16-resident-unstaged, f16-resident-triple). Older knock-outs the rungs' pages record are no
 * longer built (experiments/README.md).
 * Needs a GPU with f16 subgroup matrices (an H100 through Dawn with allow_unsafe_apis and vulkan_enable_f16_on_nvidia).
 * Prints: B×N×d, the rung and variant, the best of 3 timed runs after a warm-up, TFLOP/s (4·B·N²·d flops) and the max
 * abs error on 18 rows of the first and last batch. The data repeat every 2^20 values, so where N·d is a multiple of
 * 2^20 (2×32768×64) every query row equals a key row: a peaked softmax, where errors run higher than on the bench's.
 * Dawn sometimes crashed when a second shape was run in the same process, hence one variant and shape per process.
 */
import type { Shape } from '@fa/io';
import { SUBGROUP_MATRIX_FEATURE, subgroupPlan } from '@fa/core';
import { F16_RESIDENT_KERNEL, RESIDENT_O_KERNEL, residentOPlan, STAGED_MATRIX_KERNEL } from '@fa/tensor';
import { atMost, parseShape, shapeLabel, UsageError, type ShapeArg } from './args.js';
import type { Experiment } from './experiment.js';
import {
  assertCompiles,
  bindByName,
  deviceWithAdapterLimits,
  highPerformanceAdapter,
  maxErrorOnSampledRows,
  paramsBuffer,
  requireFeatures,
  resultLine,
  storage,
  timePasses,
  uploadRandomInput,
} from './harness.js';
import {
  directFragments,
  halfExponential,
  rotatedStart,
  tripleProducts,
  inPlaceRescale,
  leanSoftmax,
  oneKeySoftmax,
  outputAsAccumulator,
  pInKeyTile,
  plainF16,
  withoutStaging,
  withPadding,
} from './matrix-kernel-edits.js';
import { assertDeclaredOverrides } from './overrides.js';

/** How a tensor-core rung covers a shape: override constants of `main` besides D, rows per workgroup, scratch rows. */
interface MatrixPlanLike {
  overrides: Record<string, number>;
  rowsPerWorkgroup: number;
  NP: number;
}

export interface MatrixRungVariants {
  code: string;
  plan: (shape: Shape, workgroupLimit: number) => MatrixPlanLike;
  /** How `main` reads the scratch buffer (the name of its binding): `qkv16v` unless given. */
  mainReads?: 'qkv16' | 'qkv16v';
  /** Each variant's override constants over the plan's (`kernel`: none, the rung as it runs). */
  variants: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/**
 * f16-resident's tile shapes and flushes: 8 or 2 subgroups per workgroup instead of 4 (NSG), tiles of 64 keys instead
 * of 32 (BC), o passed through S tiles d columns wide in one round instead of BC-wide tiles in d / BC rounds (OW), S
 * rows of 40, 44 or 52 floats instead of 36 (SO), K/V rows of 88 or 104 f16 instead of 72 (KS), none or one of each
 * invocation's K and V vectors read a tile ahead instead of two (PH), and o added to O every 8 or 32 tiles as well as
 * when a row's m_i moves (FLUSH).
 */
const F16_RESIDENT_VARIANTS = {
  kernel: {},
  'one-round': { OW: 64 },
  'flush-8': { FLUSH: 8 },
  'flush-32': { FLUSH: 32 },
  'nsg-8': { NSG: 8 },
  'nsg-2': { NSG: 2 },
  'bc-64': { BC: 64 },
  'so-40': { SO: 40 },
  'so-44': { SO: 44 },
  'so-52': { SO: 52 },
  'ks-88': { KS: 88 },
  'ks-104': { KS: 104 },
  'ph-0': { PH: 0 },
  'ph-1': { PH: 1 },
  'bc-16': { BC: 16 },
};

/** Workgroup memory added by `withPadding`: 1, 2, 3, 4, 8 and 21 KiB (to 24, 25, 26, 27, 31 and 44 KiB at d = 64). */
const PADDINGS = Object.fromEntries([0, 1, 2, 3, 4, 8, 21].map((kib) => [`pad-${kib}k`, { PAD: Math.max(4, 256 * kib) }]));

const f16ResidentPlan = subgroupPlan(F16_RESIDENT_KERNEL);

/** o added to O in f32 registers every tile, every 2, 4 or 16 tiles, or never (the rung: every 256 keys, 8 tiles of 32). */
const FLUSHES = { 'flush-1': { FLUSH: 1 }, 'flush-2': { FLUSH: 2 }, 'flush-4': { FLUSH: 4 }, 'flush-16': { FLUSH: 16 }, 'never-flush': { FLUSH: 0x40000000 } };

/** resident-o's tiles of 32 or 16 keys with 2 or 4 subgroups (its plan: 16 keys where 32 fit fewer subgroups). */
const RESIDENT_O_TILES = { 'bc-32-nsg-2': { BC: 32, NSG: 2 }, 'bc-16-nsg-2': { BC: 16, NSG: 2 }, 'bc-16-nsg-4': { BC: 16, NSG: 4 } };

export const MATRIX_RUNGS: Readonly<Record<string, MatrixRungVariants>> = {
  'staged-matrix': { code: STAGED_MATRIX_KERNEL.code, plan: subgroupPlan(STAGED_MATRIX_KERNEL), variants: { kernel: {} } },
  'resident-o': { code: RESIDENT_O_KERNEL.code, plan: residentOPlan, variants: { kernel: {}, ...FLUSHES, ...RESIDENT_O_TILES } },
  'resident-o-one-key': { code: oneKeySoftmax(RESIDENT_O_KERNEL.code), plan: residentOPlan, variants: { kernel: {} } },
  'resident-o-f16': { code: plainF16(RESIDENT_O_KERNEL.code), plan: residentOPlan, variants: { kernel: {} } },
  'resident-o-o-global': { code: outputAsAccumulator(RESIDENT_O_KERNEL.code, 'resident-o.wgsl'), plan: residentOPlan, variants: { kernel: {}, ...FLUSHES } },
  'f16-resident': { code: F16_RESIDENT_KERNEL.code, plan: f16ResidentPlan, variants: F16_RESIDENT_VARIANTS },
  'f16-resident-in-place': { code: inPlaceRescale(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {}, 'nsg-8': { NSG: 8 }, 'bc-64': { BC: 64 } } },
  'f16-resident-direct': { code: directFragments(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: F16_RESIDENT_VARIANTS, mainReads: 'qkv16' },
  'f16-resident-o-global': { code: outputAsAccumulator(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: F16_RESIDENT_VARIANTS },
  'f16-resident-lean-softmax': { code: leanSoftmax(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {} } },
  'f16-resident-unstaged': { code: withoutStaging(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: F16_RESIDENT_VARIANTS },
  'f16-resident-padded': { code: withPadding(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: PADDINGS },
  'f16-resident-half-exp': { code: halfExponential(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {} } },
  'f16-resident-rotated': { code: rotatedStart(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {}, 'rotate-0': { ROTATE: 0 }, 'rotate-7': { ROTATE: 7 } } },
  'f16-resident-triple': { code: tripleProducts(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {} } },
  'f16-resident-p-in-k': { code: pInKeyTile(F16_RESIDENT_KERNEL.code), plan: f16ResidentPlan, variants: { kernel: {}, 'ph-0': { PH: 0 }, 'ph-1': { PH: 1 }, 'nsg-5': { NSG: 5 }, 'nsg-6': { NSG: 6 } } },
};


export interface MatrixVariantArgs {
  rung: string;
  variant: string;
  shape: ShapeArg;
}

const variantLists = (): string =>
  Object.entries(MATRIX_RUNGS).map(([id, { variants }]) => `${id}: ${Object.keys(variants).join(', ')}`).join('; ');

export function parseMatrixVariantArgs(args: readonly string[]): MatrixVariantArgs {
  atMost(args, 3);
  const [rung = '', variant = '', shapeArg = '100,2048,64'] = args;
  const variants = MATRIX_RUNGS[rung]?.variants;
  if (!variants || !(variant in variants)) throw new UsageError(`no variant ${rung} ${variant}; ${variantLists()}`);
  const shape = parseShape(shapeArg);
  if (shape.d % 16 !== 0 || shape.d > 128) throw new UsageError(`shape ${shapeArg}: d a multiple of 16 up to 128`);
  return { rung, variant, shape };
}

/** The constants of `main` for a variant: D, the rung's plan for the shape within `workgroupLimit`, the variant's. */
export function matrixVariantConstants({ rung, variant, shape }: MatrixVariantArgs, workgroupLimit: number): { constants: Record<string, number>; plan: MatrixPlanLike } {
  const spec = MATRIX_RUNGS[rung];
  const overrides = spec?.variants[variant];
  if (!spec || !overrides) throw new UsageError(`no variant ${rung} ${variant}`);
  const planned = spec.plan(shape, workgroupLimit);
  // A variant that sets the subgroups per workgroup (NSG, 16 query rows each) sets the rows per workgroup.
  const plan = overrides.NSG === undefined ? planned : { ...planned, rowsPerWorkgroup: 16 * overrides.NSG };
  return { constants: { D: shape.d, ...planned.overrides, ...overrides }, plan };
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  const parsed = parseMatrixVariantArgs(args);
  const { rung, variant, shape } = parsed;
  const { B, N, d } = shape;
  const code = (MATRIX_RUNGS[rung] as MatrixRungVariants).code;
  const adapter = await highPerformanceAdapter();
  const FEATURES: GPUFeatureName[] = ['shader-f16', 'subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE];
  requireFeatures(adapter, FEATURES);
  const device = await deviceWithAdapterLimits(adapter, FEATURES);
  const { constants, plan } = matrixVariantConstants(parsed, adapter.limits.maxComputeWorkgroupStorageSize);
  assertDeclaredOverrides(`${rung} ${variant}`, code, constants);

  const { NP } = plan;
  const { qkv, at } = uploadRandomInput(device, shape);
  const O = storage(device, B * N * d * 4, GPUBufferUsage.COPY_SRC);
  const scratch = storage(device, B * 6 * NP * d * 2);
  const params = paramsBuffer(device, code, { N, NP, batches: B, scaleLog2: Math.LOG2E / Math.sqrt(d) });
  const module = device.createShaderModule({ code });
  await assertCompiles(module, `${rung} ${variant}`);
  // Synchronous pipeline creation: the asynchronous one aborted the process in Dawn (std::system_error).
  const convert = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'convert', constants: { D: d } } });
  device.pushErrorScope('validation');
  const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const invalid = await device.popErrorScope();
  if (invalid) throw new Error(`${rung} ${variant}: ${invalid.message.split('\n')[0] ?? ''}`);
  const convertGroup = bindByName(device, convert, code, { qkv, params, qkv16: scratch });
  const mainGroup = bindByName(device, main, code, { O, params, [MATRIX_RUNGS[rung]?.mainReads ?? 'qkv16v']: scratch });
  const { best, out } = await timePasses(device, [
    [convert, convertGroup, Math.ceil((B * 3 * NP * d) / 4 / 256)],
    [main, mainGroup, B * Math.ceil(N / plan.rowsPerWorkgroup)],
  ], O);
  const worst = maxErrorOnSampledRows(out, at, shape);
  print(`${shapeLabel(shape)} ${rung} ${variant.padEnd(16)} ${resultLine(shape, best, worst)}`);
  device.destroy();
}

export const matrixVariants: Experiment = {
  name: 'matrix-variants',
  summary: 'the kernel of rung 23, 24 or 25 and variants of its override constants, or of its text (resident-o-one-key, -f16, -o-global; f16-resident-in-place, -direct, -o-global, -lean-softmax, -padded, -p-in-k, -half-exp, -rotated, -triple, -unstaged)',
  usage: 'RUNG VARIANT [B,N,d]',
  page: 'docs/rungs/23-staged-matrix.md, docs/rungs/24-resident-o.md, docs/rungs/25-f16-resident.md, docs/sdpa.md',
  details: [`variants: ${variantLists()}`, 'default shape 100,2048,64; one variant per process'],
  run,
};
