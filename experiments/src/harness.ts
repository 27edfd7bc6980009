/**
 * What the experiments share: the adapter and a device with the adapter's own limits, random ±3 input, compute
 * passes timed by timestamp queries (the best of the runs after a warm-up), bind groups by binding name, and a float64
 * check of sampled rows. Everything here needs a GPU; the experiments' grids and arguments do not.
 */
import { kernelBindings, packUniforms, structFields } from '@fa/core';
import { nodeGpu } from '@fa/core/node';
import type { ShapeArg } from './args.js';

/** Why an experiment cannot run on this machine: printed, exit status 2 (as a missing feature was before). */
export class NotHereError extends Error {
  override name = 'NotHereError';
}

/** The high-performance adapter, with Dawn's flags of the rungs (subgroup matrices, unquantized timestamps). */
export async function highPerformanceAdapter(): Promise<GPUAdapter> {
  const adapter = await (await nodeGpu()).requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new NotHereError('no GPU adapter; nothing to measure');
  return adapter;
}

/** Throws NotHereError naming the features the adapter lacks. */
export function requireFeatures(adapter: GPUAdapter, features: readonly GPUFeatureName[]): void {
  const missing = features.filter((f) => !adapter.features.has(f));
  if (missing.length > 0) throw new NotHereError(`this GPU lacks ${missing.join(', ')}; nothing to measure`);
}

/** A device with these features and the adapter's own limits on workgroup memory and buffer sizes. */
export function deviceWithAdapterLimits(adapter: GPUAdapter, requiredFeatures: readonly GPUFeatureName[]): Promise<GPUDevice> {
  const { maxComputeWorkgroupStorageSize, maxStorageBufferBindingSize, maxBufferSize } = adapter.limits;
  return adapter.requestDevice({
    requiredFeatures,
    requiredLimits: { maxComputeWorkgroupStorageSize, maxStorageBufferBindingSize, maxBufferSize },
  });
}

/** Q, K and V of B batches (N × d each) of uniform ±3 values that repeat every 2^20; `at(x)` is value x. */
export interface RandomInput {
  qkv: GPUBuffer;
  at: (x: number) => number;
}

export function uploadRandomInput(device: GPUDevice, { B, N, d }: ShapeArg): RandomInput {
  const chunk = new Float32Array(1 << 20).map(() => Math.random() * 6 - 3);
  const bytes = B * 3 * N * d * 4;
  const qkv = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  for (let offset = 0; offset < bytes; offset += chunk.byteLength) {
    device.queue.writeBuffer(qkv, offset, chunk, 0, Math.min(chunk.length, (bytes - offset) / 4));
  }
  return { qkv, at: (x) => chunk[x % chunk.length] as number };
}

/** A storage buffer of `bytes`. */
export function storage(device: GPUDevice, bytes: number, extraUsage = 0): GPUBuffer {
  return device.createBuffer({ size: Math.max(16, bytes), usage: GPUBufferUsage.STORAGE | extraUsage });
}

/** The kernel's `struct Params` filled with `values` (by field name) in a uniform buffer. */
export function paramsBuffer(device: GPUDevice, code: string, values: Readonly<Record<string, number>>): GPUBuffer {
  const fields = structFields(code, 'Params');
  if (!fields) throw new Error('the kernel has no struct Params');
  const data = packUniforms(fields, values);
  const params = device.createBuffer({ size: data.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(params, 0, data);
  return params;
}

/** A bind group of `pipeline` with the kernel's bindings named in `buffers` (the entry point's own, by name). */
export function bindByName(device: GPUDevice, pipeline: GPUComputePipeline, code: string, buffers: Readonly<Record<string, GPUBuffer>>): GPUBindGroup {
  const bindings = kernelBindings(code);
  const entries = Object.entries(buffers).map(([name, buffer]) => {
    const found = bindings.find((b) => b.name === name);
    if (!found) throw new Error(`the kernel binds no ${name}`);
    return { binding: found.binding, resource: { buffer } };
  });
  return device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
}

/** Throws the first compilation error of the module (its line and first line of message). */
export async function assertCompiles(module: GPUShaderModule, label: string): Promise<void> {
  const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
  if (error) throw new Error(`${label}: line ${error.lineNum}: ${error.message.split('\n')[0] ?? ''}`);
}

/** A dispatch of `workgroups` over a 2-D grid when it passes 65535 in x. */
export const grid = (workgroups: number): [number, number] => [Math.min(workgroups, 65535), Math.ceil(workgroups / 65535)];

export type Dispatch = readonly [GPUComputePipeline, GPUBindGroup, number];

/** Milliseconds of each pass from resolved timestamps, the first run (the warm-up) left out. */
export async function passTimes(device: GPUDevice, querySet: GPUQuerySet, runs: number, encoder: GPUCommandEncoder, afterQueries?: (encoder: GPUCommandEncoder) => void): Promise<number[]> {
  const resolved = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readable = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  encoder.resolveQuerySet(querySet, 0, 2 * runs, resolved, 0);
  encoder.copyBufferToBuffer(resolved, 0, readable, 0, 16 * runs);
  afterQueries?.(encoder);
  device.queue.submit([encoder.finish()]);
  await readable.mapAsync(GPUMapMode.READ);
  const stamps = new BigUint64Array(readable.getMappedRange().slice(0));
  readable.unmap();
  resolved.destroy();
  readable.destroy();
  return Array.from({ length: runs - 1 }, (_, k) => Number((stamps[2 * k + 3] ?? 0n) - (stamps[2 * k + 2] ?? 0n)) / 1e6);
}

/** Encodes `runs` compute passes, each `dispatches` in order, with timestamps around each pass. */
function encodePasses(device: GPUDevice, dispatches: readonly Dispatch[], runs: number): { encoder: GPUCommandEncoder; querySet: GPUQuerySet } {
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * runs });
  const encoder = device.createCommandEncoder();
  for (let k = 0; k < runs; k++) {
    const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * k, endOfPassWriteIndex: 2 * k + 1 } });
    for (const [pipeline, group, workgroups] of dispatches) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(...grid(workgroups));
    }
    pass.end();
  }
  return { encoder, querySet };
}

/**
 * Keeps the GPU busy with `dispatches` for at least `ms` of its own time (rounds of 6 passes, each read back before the
 * next), so that its clock has left idle before a measurement: after seconds of shader compilation, a few dispatches
 * otherwise run at the idle clock, 3-5× slower (docs/decode.md, "The slow mode: the GPU's clock"). Gives up after ten
 * times `ms` of wall time.
 */
export async function warmUp(device: GPUDevice, dispatches: readonly Dispatch[], ms = 500): Promise<void> {
  const start = performance.now();
  let busy = 0;
  while (busy < ms && performance.now() - start < 10 * ms) {
    busy += (await timeDispatches(device, dispatches, 6)).reduce((sum, x) => sum + x, 0);
  }
}

/** The ms of each of `runs` passes of `dispatches` after the first (a warm-up). */
export async function timeDispatches(device: GPUDevice, dispatches: readonly Dispatch[], runs: number): Promise<number[]> {
  const { encoder, querySet } = encodePasses(device, dispatches, runs);
  return passTimes(device, querySet, runs, encoder);
}

/**
 * Runs `dispatches` in one compute pass, `runs` times, and reads O back: the best time of the runs after the first
 * (a warm-up), in ms, and the output.
 */
export async function timePasses(device: GPUDevice, dispatches: readonly Dispatch[], O: GPUBuffer, runs = 4): Promise<{ best: number; out: Float32Array }> {
  const { encoder, querySet } = encodePasses(device, dispatches, runs);
  const outRead = device.createBuffer({ size: O.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const times = await passTimes(device, querySet, runs, encoder, (e) => {
    e.copyBufferToBuffer(O, 0, outRead, 0, O.size);
  });
  await outRead.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(outRead.getMappedRange().slice(0));
  outRead.unmap();
  return { best: Math.min(...times), out };
}

/** Max abs error of rows 0, 1, 17, 31, 63, 64, N/2, 3N/4 and N − 1 of the first and last batch against float64. */
export function maxErrorOnSampledRows(out: Float32Array, at: (x: number) => number, { B, N, d }: ShapeArg): number {
  let worst = 0;
  for (const b of new Set([0, B - 1])) {
    for (const row of new Set([0, 1, 17, 31, 63, 64, N >> 1, (3 * N) >> 2, N - 1])) {
      if (row >= N) continue;
      const base = b * 3 * N * d;
      const p = new Float64Array(N);
      let max = -Infinity;
      for (let k = 0; k < N; k++) {
        let s = 0;
        for (let x = 0; x < d; x++) s += at(base + row * d + x) * at(base + (N + k) * d + x);
        p[k] = s / Math.sqrt(d);
        max = Math.max(max, s / Math.sqrt(d));
      }
      let sum = 0;
      for (let k = 0; k < N; k++) {
        const e = Math.exp((p[k] as number) - max);
        p[k] = e;
        sum += e;
      }
      for (let x = 0; x < d; x++) {
        let o = 0;
        for (let k = 0; k < N; k++) o += (p[k] as number) * at(base + (2 * N + k) * d + x);
        worst = Math.max(worst, Math.abs(o / sum - (out[(b * N + row) * d + x] as number)));
      }
    }
  }
  return worst;
}

/** One line of a sweep: time, TFLOP/s (4·B·N²·d flops) and the max abs error. */
export function resultLine(shape: ShapeArg, best: number, worst: number): string {
  const { B, N, d } = shape;
  return `${best.toFixed(3)} ms  ${((4 * B * N * N * d) / best / 1e9).toFixed(1)} TFLOP/s  max error ${worst.toExponential(1)}`;
}
