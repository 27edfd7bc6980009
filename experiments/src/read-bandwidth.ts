/**
 * How fast a kernel can only read memory, by the access type of its loads: a storage buffer read once, grid-stride,
 * each invocation folding what it reads into a sum it never writes (unless a value no input holds appears, which
 * keeps the reads). The access types are those the attention kernels use for float32 tensors (`vec4<f32>`) and for f16
 * tensors read as u32 pairs (`vec2<u32>`, unpacked with `unpack2x16float`), and two others. One and eight loads per
 * invocation. The decode page (docs/decode.md) holds the decode kernel's GB/s against these. Needs `timestamp-query`.
 */
import { atMost, positiveIntegers } from './args.js';
import type { Experiment } from './experiment.js';
import { assertCompiles, deviceWithAdapterLimits, highPerformanceAdapter, NotHereError, storage, timeDispatches } from './harness.js';

/** Bytes read per pass (half the binding limit of some adapters, so that it also runs there). */
const MIB = 2 ** 20;
const RUNS = 11;

/** The access types: the array's element, the statement folding element e into `acc`, and its bytes. */
export const READ_TYPES: Readonly<Record<string, { element: string; fold: string; bytes: number }>> = {
  'vec4<f32>': { element: 'vec4<f32>', fold: 'acc += src[e];', bytes: 16 },
  'vec2<u32>, unpack2x16float': { element: 'vec2<u32>', fold: 'let w = src[e]; acc += vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));', bytes: 8 },
  'vec4<u32>, unpack2x16float': { element: 'vec4<u32>', fold: 'let w = src[e]; acc += vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)) + vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w));', bytes: 16 },
  'u32, unpack2x16float': { element: 'u32', fold: 'acc += vec4<f32>(unpack2x16float(src[e]), 0.0, 0.0);', bytes: 4 },
};

/** The kernel for one access type: each invocation reads `perInvocation` elements, a grid's width apart. */
export function readKernel(type: keyof typeof READ_TYPES, perInvocation: number): string {
  const { element, fold } = READ_TYPES[type] as (typeof READ_TYPES)[string];
  return `@group(0) @binding(0) var<storage, read> src: array<${element}>;
@group(0) @binding(1) var<storage, read_write> sink: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) n: vec3u) {
  let width = n.x * n.y * 256u;
  let t = id.y * n.x * 256u + id.x;
  var acc = vec4<f32>(0.0);
  for (var r = 0u; r < ${perInvocation}u; r++) {
    let e = t + r * width;
    ${fold}
  }
  if (acc.x == 123456.0) { sink[t % 64u] = acc; }
}`;
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  atMost(args, 1);
  const [mib] = args[0] === undefined ? [256] : positiveIntegers(args[0], 'MiB', 1);
  const adapter = await highPerformanceAdapter();
  if (!adapter.features.has('timestamp-query')) throw new NotHereError('this GPU has no timestamp-query; nothing to measure');
  const device = await deviceWithAdapterLimits(adapter, ['timestamp-query']);
  const bytes = Math.min((mib as number) * MIB, device.limits.maxStorageBufferBindingSize - (device.limits.maxStorageBufferBindingSize % (16 * 256 * 8)));
  const src = storage(device, bytes);
  const sink = storage(device, 64 * 16);
  print(`${adapter.info.vendor} ${adapter.info.device}: ${(bytes / MIB).toFixed(0)} MiB read per pass, median of ${RUNS - 1} passes after a warm-up`);
  for (const type of Object.keys(READ_TYPES)) {
    for (const perInvocation of [1, 8]) {
      const module = device.createShaderModule({ code: readKernel(type, perInvocation) });
      await assertCompiles(module, type);
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: sink } }] });
      const workgroups = bytes / (READ_TYPES[type] as (typeof READ_TYPES)[string]).bytes / 256 / perInvocation;
      const times = (await timeDispatches(device, [[pipeline, group, workgroups]], RUNS)).sort((a, b) => a - b);
      const ms = times[Math.floor(times.length / 2)] as number;
      print(`${type.padEnd(28)} ${perInvocation} per invocation: ${ms.toFixed(3)} ms  ${(bytes / ms / 1e6).toFixed(0)} GB/s`);
    }
  }
  device.destroy();
}

export const readBandwidth: Experiment = {
  name: 'read-bandwidth',
  summary: 'what a kernel that only reads gets from memory, by access type (vec4<f32>, f16 pairs in u32s)',
  usage: '[MiB]',
  page: 'docs/decode.md',
  details: ['MiB: bytes read per pass (default 256, at most the binding limit)'],
  run,
};
