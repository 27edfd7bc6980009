/**
 * Times the kernel of an fp32 row-group rung (split-softmax by default, or lean-loop, or lean-loop with each
 * workgroup's key loop starting at its own tile) with other tiles than its plan's: invocations per workgroup WG, keys
 * per tile BC and the prefetch of the next tile, all override constants of the kernel set over the rung's own plan
 * for the shape, one set per process, on random ±3 data, checked against float64 on sampled rows. Keys are not
 * split (the `splits` uniform is 1: shapes with enough row blocks).
 * Prints: B×N×d, the rung and tiles, the best of 3 timed runs after a warm-up, TFLOP/s and the max abs error.
 */
import { gpuContextFromDevice, type GpuContext, type RungDefinition, type SinglePassPlan } from '@fa/core';
import { leanLoop, leanLoopPlanFor, splitSoftmax } from '@fa/optimized';
import { doubleBuffered, rotatedKeyStart } from './fp32-kernel-edits.js';
import { atMost, naturals, parseShape, shapeLabel, UsageError, type ShapeArg } from './args.js';
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

const kernelOf = (rung: RungDefinition): string => {
  const code = rung.kernels?.[0]?.code;
  if (code === undefined) throw new Error(`${rung.id}: no kernel`);
  return code;
};

/**
 * The kernels the sweep takes, all run with lean-loop's plan: two rungs' and one edit (lean-loop-rotated: each
 * workgroup's key loop starts at its own tile, fp32-kernel-edits.ts).
 */
export const FP32_TILE_RUNGS: Readonly<Record<string, string>> = {
  'split-softmax': kernelOf(splitSoftmax),
  'lean-loop': kernelOf(leanLoop),
  'lean-loop-rotated': rotatedKeyStart(kernelOf(leanLoop)),
  'lean-loop-double': doubleBuffered(kernelOf(leanLoop)),
};

export interface Fp32Tiles {
  WG: number;
  BC: number;
  PREFETCH: number;
}

export interface Fp32TilesArgs {
  tiles: Fp32Tiles;
  shape: ShapeArg;
  rung: string;
}

export function parseFp32TilesArgs(args: readonly string[]): Fp32TilesArgs {
  atMost(args, 3);
  const [tilesArg = '128,32,0', shapeArg = '500,2048,64', rung = 'split-softmax'] = args;
  const [WG, BC, PREFETCH] = naturals(tilesArg, 'tiles WG,BC,PREFETCH', 3) as [number, number, number];
  if (WG === 0 || BC === 0 || PREFETCH > 1) throw new UsageError(`tiles ${tilesArg}: WG and BC positive, PREFETCH 0 or 1`);
  const shape = parseShape(shapeArg);
  if (shape.d % 4 !== 0) throw new UsageError(`shape ${shapeArg}: d a multiple of 4`);
  if (!(rung in FP32_TILE_RUNGS)) throw new UsageError(`rung ${rung}: one of ${Object.keys(FP32_TILE_RUNGS).join(', ')}`);
  return { tiles: { WG, BC, PREFETCH }, shape, rung };
}

/** The WGSL of one of FP32_TILE_RUNGS. */
export function fp32Kernel(rung: string): string {
  const code = FP32_TILE_RUNGS[rung];
  if (code === undefined) throw new Error(`${rung}: no kernel`);
  return code;
}

/** The rung's plan for the shape with the tiles in place of its own: override constants only. */
export function fp32TilesVariant(plan: SinglePassPlan, tiles: Fp32Tiles): Record<string, number> {
  return { ...plan.constants, ...tiles };
}

/** lean-loop's plan for the shape on this GPU (rung 22 runs the same), or the reason it has none. */
export function fp32Plan(shape: ShapeArg, gpu: GpuContext): SinglePassPlan {
  const plan = leanLoopPlanFor(shape, gpu);
  if (typeof plan === 'string') throw new UsageError(`shape ${shapeLabel(shape)}: ${plan}`);
  return plan;
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  const { tiles, shape, rung } = parseFp32TilesArgs(args);
  const { B, N } = shape;
  const code = fp32Kernel(rung);
  const adapter = await highPerformanceAdapter();
  requireFeatures(adapter, ['subgroups', 'timestamp-query']);
  const device = await deviceWithAdapterLimits(adapter, ['subgroups', 'timestamp-query']);
  const plan = fp32Plan(shape, gpuContextFromDevice(adapter, device));
  const constants = fp32TilesVariant(plan, tiles);
  assertDeclaredOverrides(rung, code, constants);

  const { qkv, at } = uploadRandomInput(device, shape);
  const O = storage(device, B * N * shape.d * 4, GPUBufferUsage.COPY_SRC);
  const params = paramsBuffer(device, code, { ...plan.uniforms(B), splits: 1 });
  const module = device.createShaderModule({ code });
  await assertCompiles(module, rung);
  const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const group = bindByName(device, main, code, { qkv, O, params, Opart: storage(device, 16 * B), ML: storage(device, 16 * B) });
  const BR = (tiles.WG / (constants.H ?? 1)) * 2;
  const { best, out } = await timePasses(device, [[main, group, B * Math.ceil(N / BR)]], O);
  const worst = maxErrorOnSampledRows(out, at, shape);
  print(`${shapeLabel(shape)} ${rung} WG = ${tiles.WG}, BC = ${tiles.BC}, prefetch ${tiles.PREFETCH} ${resultLine(shape, best, worst)}`);
  device.destroy();
}

export const fp32TilesSweep: Experiment = {
  name: 'fp32-tiles-sweep',
  summary: "an fp32 row-group rung's kernel with other tiles (WG, BC, PREFETCH) than its plan's",
  usage: 'WG,BC,PREFETCH [B,N,d] [split-softmax|lean-loop|lean-loop-rotated|lean-loop-double]',
  page: 'docs/rungs/22-split-softmax.md, docs/rungs/20-lean-loop.md, docs/sdpa.md',
  details: ['defaults: 128,32,0 500,2048,64 split-softmax; one set of tiles per process'],
  run,
};
