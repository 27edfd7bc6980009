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

/**
 * resident-o with its softmax reading S and writing P̃ four neighbouring keys at a time (each invocation's 16 keys of
 * its row as 4 vectors of 4, the same halves and rotation by chunk): the design that doubled the elementwise pass in
 * `subgroup-matrix-bench designs`. Edits the kernel's text; throws if the loops it replaces have changed.
 */
export function vectorSoftmax(code: string): string {
  const scores = `    var sv: array<f32, 16>;   // BC / 2
    var mx = LOWEST;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      sv[k] = LOWEST;
      if (j * BC + col < N) { sv[k] = Sf[sBase + col]; }
      mx = max(mx, sv[k]);
    }`;
  const weights = `    var sum = 0.0;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      let p = exp2(sv[k] - m);
      sum += p;
      let ph = hi1(p);
      Ph[pBase + col] = f16(ph);
      Pl[pBase + col] = f16(p - ph);
    }`;
  if (!code.includes(scores) || !code.includes(weights)) throw new Error('resident-o.wgsl: the softmax loops have changed; update vectorSoftmax');
  return code
    .replace(
      scores,
      `    var sv: array<vec4<f32>, 4>;   // BC / 8 chunks of 4 neighbouring keys
    var mx = LOWEST;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let at = sBase + col;
      let key = vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u);
      let v = select(vec4<f32>(LOWEST), vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]), key < vec4<u32>(N));
      sv[k] = v;
      mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
    }`,
    )
    .replace(
      weights,
      `    var sum = 0.0;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let p = exp2(sv[k] - m);
      sum += (p.x + p.y) + (p.z + p.w);
      let ph = hi(p);
      let pl = p - ph;
      let at = pBase + col;
      Ph[at] = f16(ph.x); Ph[at + 1u] = f16(ph.y); Ph[at + 2u] = f16(ph.z); Ph[at + 3u] = f16(ph.w);
      Pl[at] = f16(pl.x); Pl[at + 1u] = f16(pl.y); Pl[at + 2u] = f16(pl.z); Pl[at + 3u] = f16(pl.w);
    }`,
    );
}

/**
 * resident-o-vec4 with one product per multiply instead of three (Qh·Khᵀ and P̃h·Vh, the low parts staged but not
 * used): what rung 24's loop would reach as a plain f16 kernel, an error of f16's order. Edits the kernel's text.
 */
export function plainF16(code: string): string {
  const lowProducts = [
    '      s0 = subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);\n',
    '      s1 = subgroupMatrixMultiplyAccumulate(ql[k], kh1, s1);\n',
    '      s0 = subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);\n',
    '      s1 = subgroupMatrixMultiplyAccumulate(qh[k], kl1, s1);\n',
    '        o[n] = subgroupMatrixMultiplyAccumulate(pl, vh, o[n]);\n',
    '        o[n] = subgroupMatrixMultiplyAccumulate(ph, vl, o[n]);\n',
  ];
  if (lowProducts.some((line) => !code.includes(line))) throw new Error('resident-o.wgsl: the products have changed; update plainF16');
  return lowProducts.reduce((text, line) => text.replace(line, ''), code);
}

/** o added to O in f32 registers every tile, every 2, 4 or 16 tiles, or never (the rung: every 8). */
const FLUSHES = { 'flush-1': { FLUSH: 1 }, 'flush-2': { FLUSH: 2 }, 'flush-4': { FLUSH: 4 }, 'flush-16': { FLUSH: 16 }, 'never-flush': { FLUSH: 0x40000000 } };

export const MATRIX_RUNGS: Readonly<Record<string, MatrixRungVariants>> = {
  'staged-matrix': { code: STAGED_MATRIX_KERNEL.code, plan: subgroupPlan(STAGED_MATRIX_KERNEL), variants: { kernel: {} } },
  'resident-o': { code: RESIDENT_O_KERNEL.code, plan: subgroupPlan(RESIDENT_O_KERNEL), variants: { kernel: {}, ...FLUSHES } },
  'resident-o-vec4': { code: vectorSoftmax(RESIDENT_O_KERNEL.code), plan: subgroupPlan(RESIDENT_O_KERNEL), variants: { kernel: {} } },
  'resident-o-f16': { code: plainF16(vectorSoftmax(RESIDENT_O_KERNEL.code)), plan: subgroupPlan(RESIDENT_O_KERNEL), variants: { kernel: {} } },
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
  summary: 'the kernel of rung 23 or 24 and variants of its override constants (resident-o: FLUSH), or of its softmax (resident-o-vec4) and products (resident-o-f16)',
  usage: 'RUNG VARIANT [B,N,d]',
  page: 'docs/rungs/23-staged-matrix.md, docs/rungs/24-resident-o.md',
  details: [`variants: ${variantLists()}`, 'default shape 100,2048,64; one variant per process'],
  run,
};
