/**
 * What a dispatch costs when it does almost nothing: calls back to back between one pair of timestamps, as the sdpa
 * bench times them (`msBackToBack`), each call one or two dispatches of a kernel whose workgroups each write one word.
 * Each dispatch writes a buffer the one before it wrote or read, so WebGPU orders it after that one (Dawn: a barrier
 * between them). The shapes are the one-row decode's (docs/decode.md): 256 workgroups of 128 invocations for the key
 * ranges, then 16 workgroups of 64 for `combine`, which reads what the first wrote. Beside them: the same dispatches
 * with nothing written (no order needed between them), and all of a round's calls in one compute pass instead of a
 * pass per call. Needs `timestamp-query`.
 */
import { atMost, positiveIntegers } from './args.js';
import type { Experiment } from './experiment.js';
import { assertCompiles, deviceWithAdapterLimits, grid, highPerformanceAdapter, NotHereError, passTimes, storage } from './harness.js';

/** Calls per round, rounds per variant (the median of the rounds' means is printed, with the smallest and largest). */
const CALLS = 200;
const ROUNDS = 21;
/** Milliseconds of the same rounds before the ones printed. */
const WARM_MS = 1000;

/** A kernel of `invocations` per workgroup whose workgroups each write one word (or none: `writes` false). */
export function floorKernel(invocations: number, writes: boolean): string {
  return `@group(0) @binding(0) var<storage, read_write> words: array<u32>;
@compute @workgroup_size(${invocations})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) n: vec3u, @builtin(local_invocation_index) t: u32) {
  let w = wid.y * n.x + wid.x;
  ${writes ? 'if (t == 0u) { words[w] = words[(w + 1u) % arrayLength(&words)] + 1u; }' : 'if (t == 1000000u) { words[w] = 0u; }'}
}`;
}

/** One step of a call: the pipeline and its grid. */
type Step = readonly [GPUComputePipeline, number];

/** The variants: a name, the steps of one call, whether each call gets its own compute pass. */
interface Variant {
  readonly name: string;
  readonly steps: readonly Step[];
  readonly passPerCall: boolean;
}

/** Median, smallest and largest ms per call over ROUNDS rounds of CALLS calls, each round between one pair of timestamps. */
async function timeCalls(device: GPUDevice, group: GPUBindGroup, variant: Variant): Promise<[number, number, number]> {
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * ROUNDS });
  const encoder = device.createCommandEncoder();
  for (let r = 0; r < ROUNDS; r++) {
    const writes = (call: number): GPUComputePassTimestampWrites | undefined => {
      const first = call === 0;
      const last = call === CALLS - 1 || !variant.passPerCall;
      if (!first && !last) return undefined;
      return { querySet, ...(first ? { beginningOfPassWriteIndex: 2 * r } : {}), ...(last ? { endOfPassWriteIndex: 2 * r + 1 } : {}) };
    };
    let pass: GPUComputePassEncoder | undefined;
    for (let call = 0; call < CALLS; call++) {
      if (variant.passPerCall || call === 0) {
        const timestampWrites = writes(call);
        pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : {});
      }
      for (const [pipeline, workgroups] of variant.steps) {
        pass?.setPipeline(pipeline);
        pass?.setBindGroup(0, group);
        pass?.dispatchWorkgroups(...grid(workgroups));
      }
      if (variant.passPerCall || call === CALLS - 1) pass?.end();
    }
  }
  // The first round warms up; the rest, ms per call.
  const perCall = (await passTimes(device, querySet, ROUNDS, encoder)).map((ms) => ms / CALLS).sort((a, b) => a - b);
  querySet.destroy();
  return [perCall[Math.floor(perCall.length / 2)] as number, perCall[0] as number, perCall[perCall.length - 1] as number];
}

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  atMost(args, 1);
  const [ranges, merge] = args[0] === undefined ? [256, 16] : positiveIntegers(args[0], 'WORKGROUPS,COMBINE', 2);
  const adapter = await highPerformanceAdapter();
  if (!adapter.features.has('timestamp-query')) throw new NotHereError('this GPU has no timestamp-query; nothing to measure');
  const device = await deviceWithAdapterLimits(adapter, ['timestamp-query']);
  const words = storage(device, 4 * Math.max(ranges as number, merge as number, 1));
  // One explicit layout, so that one bind group serves every pipeline.
  const bindGroupLayout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }] });
  const layout = device.createPipelineLayout({ bindGroupLayouts: [bindGroupLayout] });
  const group = device.createBindGroup({ layout: bindGroupLayout, entries: [{ binding: 0, resource: { buffer: words } }] });
  const pipeline = async (invocations: number, writes: boolean): Promise<GPUComputePipeline> => {
    const module = device.createShaderModule({ code: floorKernel(invocations, writes) });
    await assertCompiles(module, `${invocations} invocations${writes ? '' : ', no writes'}`);
    return device.createComputePipeline({ layout, compute: { module, entryPoint: 'main' } });
  };
  const [wide, narrow, wideIdle, narrowIdle] = [await pipeline(128, true), await pipeline(64, true), await pipeline(128, false), await pipeline(64, false)];
  const [r, m] = [ranges as number, merge as number];
  const variants: Variant[] = [
    { name: '1 dispatch of 1 workgroup, writing', steps: [[wide, 1]], passPerCall: true },
    { name: `1 dispatch of ${r} workgroups, writing`, steps: [[wide, r]], passPerCall: true },
    { name: `2 dispatches (${r}, then ${m} workgroups), writing`, steps: [[wide, r], [narrow, m]], passPerCall: true },
    { name: 'the same, all calls in one pass', steps: [[wide, r], [narrow, m]], passPerCall: false },
    { name: `2 dispatches (${r}, then ${m} workgroups), nothing written`, steps: [[wideIdle, r], [narrowIdle, m]], passPerCall: true },
  ];
  print(`${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.device}: µs per call over ${CALLS} calls back to back between one pair of timestamps, median (min-max) of ${ROUNDS - 1} rounds after one`);
  for (const variant of variants) {
    // Rounds again and again for WARM_MS first, so that the GPU's clock is up (docs/sdpa.md: the bench and the GPU's clock).
    const until = performance.now() + WARM_MS;
    let [median, least, most] = await timeCalls(device, group, variant);
    while (performance.now() < until) [median, least, most] = await timeCalls(device, group, variant);
    print(`${variant.name.padEnd(58)} ${(median * 1e3).toFixed(2)} µs (${(least * 1e3).toFixed(2)}-${(most * 1e3).toFixed(2)})`);
  }
  device.destroy();
}

export const dispatchFloor: Experiment = {
  name: 'dispatch-floor',
  summary: "what a dispatch that does almost nothing costs, back to back, with and without an order between dispatches (the one-row decode's grids)",
  usage: '[WORKGROUPS,COMBINE]',
  page: 'docs/decode.md',
  details: ["WORKGROUPS,COMBINE: the two dispatches' workgroups (default 256,16: the one-row decode's key ranges and combine)"],
  run,
};
