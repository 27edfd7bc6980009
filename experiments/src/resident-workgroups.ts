/**
 * How many workgroups run at once, by the workgroup memory each declares. Every workgroup counts itself in as it
 * starts and out as it ends (one atomic counter, the most seen at once kept beside it), holds its compute unit for a
 * while, and the most at once is read back after the dispatch.
 *
 * Why: WebGPU reports neither a kernel's registers nor the share of each compute unit's memory that the driver gives
 * workgroup memory, and on the H100 the attention kernels' speed follows how many of their workgroups fit (counted in
 * copies of the kernels: docs/sdpa.md, docs/decode.md). This measures the rule for workgroup memory alone: a kernel of
 * a few registers that declares `bytes` of it. The grid is larger than any GPU holds at once, so the count is what
 * fits, not what was launched. On the H100 every count was ⌊49,152 ÷ bytes⌋ per compute unit (at most 2048
 * invocations): 48 KiB of workgroup memory per unit (docs/sdpa.md).
 */
import { atMost, positiveIntegers, UsageError } from './args.js';
import type { Experiment } from './experiment.js';
import { assertCompiles, deviceWithAdapterLimits, grid, highPerformanceAdapter, storage } from './harness.js';

/** Workgroups launched per size: more than any GPU runs at once. */
const LAUNCHED = 16384;
/** Fused multiply-adds each workgroup spends before it ends: long enough that its neighbours overlap it. */
const SPIN = 20000;

/** Workgroup memory sizes of the attention kernels the docs count (bytes), with 48 bytes less (their padding rows). */
export const KERNEL_SIZES: readonly number[] = [10560, 23520, 23568, 31712, 31760, 45072];

/** The default sweep: 1 KiB to 48 KiB in steps of 1 KiB, and the kernels' sizes. */
export const DEFAULT_SIZES: readonly number[] = [...new Set([...Array.from({ length: 48 }, (_, k) => (k + 1) * 1024), ...KERNEL_SIZES])].sort((a, b) => a - b);

export interface ResidentArgs {
  /** Bytes of workgroup memory per workgroup, each a multiple of 4. */
  readonly sizes: readonly number[];
  /** Invocations per workgroup. */
  readonly invocations: number;
}

/** `[BYTES,BYTES,...] [INVOCATIONS]`: sizes (multiples of 4, default DEFAULT_SIZES) and invocations (default 128). */
export function parseResidentArgs(args: readonly string[]): ResidentArgs {
  atMost(args, 2);
  const sizes = args[0] === undefined ? DEFAULT_SIZES : positiveIntegers(args[0], 'BYTES');
  const odd = sizes.find((bytes) => bytes % 4 !== 0);
  if (odd !== undefined) throw new UsageError(`BYTES: ${odd} is not a multiple of 4 (the memory is declared as u32s)`);
  const [invocations] = args[1] === undefined ? [128] : positiveIntegers(args[1], 'INVOCATIONS', 1);
  if (invocations === undefined || invocations > 1024) throw new UsageError(`INVOCATIONS: ${args[1] ?? ''}: give 1 to 1024`);
  return { sizes, invocations };
}

/** The kernel: WORDS u32s of workgroup memory, WG invocations, SPIN multiply-adds between counting in and out. */
export const RESIDENT_KERNEL = `override WORDS: u32;
override WG: u32;
override SPIN: u32;
@group(0) @binding(0) var<storage, read_write> counter: array<atomic<u32>, 2>;   // at once now, most at once
@group(0) @binding(1) var<storage, read_write> sink: array<f32>;
var<workgroup> memory: array<u32, WORDS>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u) {
  if (t == 0u) {
    let before = atomicAdd(&counter[0], 1u);
    atomicMax(&counter[1], before + 1u);
  }
  for (var e = t; e < WORDS; e += WG) { memory[e] = e ^ wid.x; }
  workgroupBarrier();
  var x = f32(memory[(t * 7u) % WORDS]);
  for (var n = 0u; n < SPIN; n++) { x = fma(x, 0.999, 1.0); }
  if (x == 12345.5) { sink[0] = x; }   // never true: keeps the loop
  workgroupBarrier();
  if (t == 0u) { atomicSub(&counter[0], 1u); }
}
`;

/** The most workgroups of `invocations` invocations with `bytes` of workgroup memory seen at once (`module`: RESIDENT_KERNEL). */
async function residentWorkgroups(device: GPUDevice, module: GPUShaderModule, bytes: number, invocations: number): Promise<number> {
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants: { WORDS: bytes / 4, WG: invocations, SPIN } } });
  const counter = storage(device, 8, GPUBufferUsage.COPY_SRC);
  const sink = storage(device, 16);
  const readable = device.createBuffer({ size: 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: counter } }, { binding: 1, resource: { buffer: sink } }] });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(...grid(LAUNCHED));
  pass.end();
  encoder.copyBufferToBuffer(counter, 0, readable, 0, 8);
  device.queue.submit([encoder.finish()]);
  await readable.mapAsync(GPUMapMode.READ);
  const [, most] = new Uint32Array(readable.getMappedRange().slice(0));
  readable.unmap();
  for (const buffer of [counter, sink, readable]) buffer.destroy();
  return most ?? 0;
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  const { sizes, invocations } = parseResidentArgs(args);
  const adapter = await highPerformanceAdapter();
  const device = await deviceWithAdapterLimits(adapter, []);
  const limit = device.limits.maxComputeWorkgroupStorageSize;
  const module = device.createShaderModule({ code: RESIDENT_KERNEL });
  await assertCompiles(module, 'resident-workgroups');
  print(`${adapter.info.vendor} ${adapter.info.device}: workgroups of ${invocations} invocations, ${LAUNCHED} launched per size, the most at once`);
  print('| workgroup memory, bytes | most at once |');
  print('|---|---|');
  for (const bytes of sizes) {
    print(bytes > limit ? `| ${bytes} | over this GPU's ${limit} |` : `| ${bytes} | ${await residentWorkgroups(device, module, bytes, invocations)} |`);
  }
  device.destroy();
}

export const residentWorkgroupsExperiment: Experiment = {
  name: 'resident-workgroups',
  summary: 'how many workgroups run at once, by the workgroup memory each declares',
  usage: '[BYTES,BYTES,...] [INVOCATIONS]',
  page: 'docs/sdpa.md',
  details: [
    'BYTES: workgroup memory per workgroup, multiples of 4 (default: 1 KiB to 48 KiB by 1 KiB, and the attention kernels\' sizes)',
    'INVOCATIONS: per workgroup (default 128, as the attention kernels)',
    'Divide the counts by the compute units (132 on the H100) for workgroups per compute unit.',
  ],
  run,
};
