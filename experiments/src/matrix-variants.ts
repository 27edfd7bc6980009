/**
 * Times the kernel of a tensor-core rung from rung 23 on (its convert and main passes in one compute pass) and
 * variants of it, one variant per process, on random ±3 data, and checks the output against a float64 computation on
 * sampled rows. A variant is the rung's plan for the shape (its override constants) with some of them set otherwise:
 * resident-o's FLUSH (tiles accumulated in the matrix units between additions to O). The knock-outs and other loop
 * changes the rungs' pages also record edited the kernels' text; they are no longer built (experiments/README.md).
 * Needs a GPU with f16 subgroup matrices (an H100 through Dawn with allow_unsafe_apis and vulkan_enable_f16_on_nvidia).
 * Prints: B×N×d, the rung and variant, the best of 3 timed runs after a warm-up, TFLOP/s (4·B·N²·d flops) and the max
 * abs error on 18 rows of the first and last batch. The data repeat every 2^20 values, so where N·d is a multiple of
 * 2^20 (2×32768×64) every query row equals a key row: a peaked softmax, where errors run higher than on the bench's.
 * Dawn sometimes crashed when a second shape was run in the same process, hence one variant and shape per process.
 */
import type { Shape } from '@fa/io';
import { RESIDENT_O_KERNEL, STAGED_MATRIX_KERNEL, SUBGROUP_MATRIX_FEATURE, subgroupPlan } from '@fa/tensor';
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
  /** Each variant's override constants over the plan's (`kernel`: none, the rung as it runs). */
  variants: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** o added to O in f32 registers every tile, every 2, 4 or 16 tiles, or never (the rung: every 8). */
const FLUSHES = { 'flush-1': { FLUSH: 1 }, 'flush-2': { FLUSH: 2 }, 'flush-4': { FLUSH: 4 }, 'flush-16': { FLUSH: 16 }, 'never-flush': { FLUSH: 0x40000000 } };

export const MATRIX_RUNGS: Readonly<Record<string, MatrixRungVariants>> = {
  'staged-matrix': { code: STAGED_MATRIX_KERNEL.code, plan: subgroupPlan(STAGED_MATRIX_KERNEL), variants: { kernel: {} } },
  'resident-o': { code: RESIDENT_O_KERNEL.code, plan: subgroupPlan(RESIDENT_O_KERNEL), variants: { kernel: {}, ...FLUSHES } },
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
  if (shape.d % 16 !== 0 || shape.d > 64) throw new UsageError(`shape ${shapeArg}: d a multiple of 16 up to 64 (four subgroups per workgroup)`);
  return { rung, variant, shape };
}

/** The constants of `main` for a variant: D, the rung's plan for the shape within `workgroupLimit`, the variant's. */
export function matrixVariantConstants({ rung, variant, shape }: MatrixVariantArgs, workgroupLimit: number): { constants: Record<string, number>; plan: MatrixPlanLike } {
  const spec = MATRIX_RUNGS[rung];
  const overrides = spec?.variants[variant];
  if (!spec || !overrides) throw new UsageError(`no variant ${rung} ${variant}`);
  const plan = spec.plan(shape, workgroupLimit);
  return { constants: { D: shape.d, ...plan.overrides, ...overrides }, plan };
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
  const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const convertGroup = bindByName(device, convert, code, { qkv, params, qkv16: scratch });
  const mainGroup = bindByName(device, main, code, { O, params, qkv16v: scratch });
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
  summary: 'the kernel of rung 23 or 24 and variants of its override constants (resident-o: FLUSH)',
  usage: 'RUNG VARIANT [B,N,d]',
  page: 'docs/rungs/23-staged-matrix.md, docs/rungs/24-resident-o.md',
  details: [`variants: ${variantLists()}`, 'default shape 100,2048,64; one variant per process'],
  run,
};
