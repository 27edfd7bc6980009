/**
 * The attention bench: model-shaped problems (GPT-2, Llama, Llama-3 with grouped KV heads, BERT, a chunked prefill,
 * a block-sparse mask) on @fa/sdpa's GPU kernel beside PyTorch's scaled_dot_product_attention in fp32 and fp16 on the
 * same shapes. Each problem is checked on sampled rows against a float64 computation before it is timed.
 *
 * Our time: R dispatches recorded back to back in one command buffer, each timed by its own pair of GPU timestamps
 * (the GPU at its working clock, no transfers), after a warm-up round; min, median and max over every dispatch. PyTorch's: CUDA
 * events around each call, median of its repeats.
 */
import { spawnSync } from 'node:child_process';
import { checked, computePipelines, PassTimer, rowOffset, sdpaProblem, valueHeadSize, type GpuContext, type SdpaDims, type SdpaOptions } from '@fa/core';
import { sdpaOracleRow } from '@fa/reference';
import { keepBusy, queuedRounds } from './warm-up.js';
import { floatsToHalves, halvesToFloats, prepareAttention, TUNING_KEYS, type DecodeTuning, type GpuKernelId, type TensorType } from '@fa/sdpa';
import { median } from './measure.js';
import { TORCH_GPU_MS_PER_CALL } from './torch.js';
import { UsageError } from '../exit-codes.js';

export interface SdpaBenchCase {
  readonly name: string;
  /** Packed documents of equal length, each causal within itself (options.maskMod says so to our kernel): PyTorch's masks. */
  readonly documents?: number;
  /**
   * The same attention in built-in options, for the float64 rows that check our output, where `options` has score or
   * mask functions (which the oracle takes only as values evaluated over every score, too many here); made when the
   * case runs, not when the module loads.
   */
  readonly reference?: () => SdpaOptions;
  readonly dims: SdpaDims;
  readonly options: SdpaOptions;
  /** The tensors' type in memory (float32 arithmetic either way); default f32. */
  readonly dtype?: TensorType;
  /** The kernel it runs on (the default choice otherwise): the crossover cases time both. */
  readonly kernel?: GpuKernelId;
}

/** Decode: one query row (or a few) per head against a long cache, 32 query and 8 KV heads, d = 128. */
const decodeCase = (name: string, B: number, Lq: number, Lk: number, dtype: TensorType): SdpaBenchCase => ({
  name: `decode ${dtype}: ${name}`,
  dims: { B, Hq: 32, Hkv: 8, Lq, Lk, d: 128 },
  options: Lq > 1 ? { causal: true } : {},
  dtype,
});

/** Half the blocks of a square grid kept, in a fixed pseudo-random pattern, each row of blocks keeping at least one. */
function halfTheBlocks(blocks: number, seed: number): Uint8Array {
  let state = seed;
  const flags = Uint8Array.from({ length: blocks * blocks }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state < 2 ** 31 ? 1 : 0;
  });
  for (let r = 0; r < blocks; r++) flags[r * blocks + r] = 1;
  return flags;
}

/** A mask function: key k is visible from query q in the same packed document (buffer `doc`), causally. */
const DOCUMENT_MASK = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return doc[q] == doc[k] && k <= q; }';
/** The causal mask written as a mask function. */
const CAUSAL_MASK = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return k <= q; }';

/** `count` packed documents of equal length in L tokens, causal within each, on a 1×12×L×64 prefill (FlexAttention's example). */
function documentsCase(count: number, L: number): SdpaBenchCase {
  const doc = Int32Array.from({ length: L }, (_, i) => Math.floor((i * count) / L));
  const visible = (): Uint8Array => {
    const flags = new Uint8Array(L * L);
    for (let i = 0; i < L; i++) for (let j = 0; j <= i; j++) flags[i * L + j] = doc[i] === doc[j] ? 1 : 0;
    return flags;
  };
  return {
    name: `${count} packed documents in ${L} tokens, causal within each (mask function), 1×12×${L}×64`,
    dims: { B: 1, Hq: 12, Hkv: 12, Lq: L, Lk: L, d: 64 },
    options: { maskMod: DOCUMENT_MASK, modBuffers: { doc } },
    documents: count,
    reference: () => ({ mask: { kind: 'bool', data: visible(), shape: [L, L] } }),
  };
}

/** The model-shaped prefill cases (f32 tensors). */
const MODEL_CASES: readonly SdpaBenchCase[] = [
  { name: 'GPT-2 prefill, causal', dims: { B: 1, Hq: 12, Hkv: 12, Lq: 1024, Lk: 1024, d: 64 }, options: { causal: true } },
  { name: 'GPT-2 prefill, no mask', dims: { B: 1, Hq: 12, Hkv: 12, Lq: 1024, Lk: 1024, d: 64 }, options: {} },
  { name: 'Llama prefill, causal', dims: { B: 1, Hq: 32, Hkv: 32, Lq: 4096, Lk: 4096, d: 128 }, options: { causal: true } },
  { name: 'Llama prefill, no mask', dims: { B: 1, Hq: 32, Hkv: 32, Lq: 4096, Lk: 4096, d: 128 }, options: {} },
  { name: 'Llama-3 GQA prefill (32/8 heads), causal', dims: { B: 1, Hq: 32, Hkv: 8, Lq: 4096, Lk: 4096, d: 128 }, options: { causal: true } },
  { name: 'BERT batch', dims: { B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512, d: 64 }, options: {} },
  { name: 'chunked prefill: 512 queries over 8192 keys, GQA, causal', dims: { B: 1, Hq: 32, Hkv: 8, Lq: 512, Lk: 8192, d: 128 }, options: { causal: true } },
  { name: 'dense, 1×12×4096×64', dims: { B: 1, Hq: 12, Hkv: 12, Lq: 4096, Lk: 4096, d: 64 }, options: {} },
  {
    name: 'block-sparse, 50% of 128×128 blocks, 1×12×4096×64',
    dims: { B: 1, Hq: 12, Hkv: 12, Lq: 4096, Lk: 4096, d: 64 },
    options: { blockMask: { rows: 128, keys: 128, data: halfTheBlocks(32, 7), shape: [32, 32] } },
  },
];

export const SDPA_BENCH_CASES: readonly SdpaBenchCase[] = [
  ...MODEL_CASES,
  ...(['f32', 'f16'] as const).flatMap((dtype) => [
    decodeCase('1 row, 4096 keys', 1, 1, 4096, dtype),
    decodeCase('1 row, 32768 keys', 1, 1, 32768, dtype),
    decodeCase('B = 8, 1 row, 4096 keys', 8, 1, 4096, dtype),
    decodeCase('B = 8, 1 row, 32768 keys', 8, 1, 32768, dtype),
    decodeCase('4 rows (speculative, causal), 32768 keys', 1, 4, 32768, dtype),
  ]),
  // Where the decode kernel stops paying: Lq query rows per head, causal, over 4096 keys, on each kernel.
  ...[1, 2, 4, 8].flatMap((Lq) =>
    (['attention-decode', 'attention-fp32'] as const).map((kernel) => ({ ...decodeCase(`crossover, ${Lq} rows, 4096 keys, on ${kernel}`, 1, Lq, 4096, 'f32'), options: { causal: true }, kernel })),
  ),
  // The model cases with f16 tensors on the default kernel, against PyTorch fp16.
  ...[0, 1, 2, 3, 4, 5, 6].map((n) => {
    const c = MODEL_CASES[n] as SdpaBenchCase;
    return { ...c, name: `f16: ${c.name}`, dtype: 'f16' as const };
  }),
  // The matrix kernel: f16 tensors (f16 products) and f32 tensors (high and low f16 parts), beside the rows above.
  ...(['f16', 'f32'] as const).flatMap((dtype) =>
    [0, 2, 5].map((n) => {
      const c = MODEL_CASES[n] as SdpaBenchCase;
      return { ...c, name: `${dtype === 'f16' ? 'f16: ' : ''}${c.name}, on attention-matrix`, dtype, kernel: 'attention-matrix' as const };
    }),
  ),
  // Score and mask functions (attention-fp32): a document mask over packed sequences and the causal mask written as a
  // mask function, beside the built-in causal option on the same shape.
  { name: 'causal, 1×12×4096×64', dims: { B: 1, Hq: 12, Hkv: 12, Lq: 4096, Lk: 4096, d: 64 }, options: { causal: true } },
  { name: 'causal as a mask function, 1×12×4096×64', dims: { B: 1, Hq: 12, Hkv: 12, Lq: 4096, Lk: 4096, d: 64 }, options: { maskMod: CAUSAL_MASK }, documents: 1, reference: () => ({ causal: true }) },
  documentsCase(8, 4096),
  // Head sizes past 128 (attention-matrix with f16 tensors) and V's own head size (attention-fp32): Gemma 2 and
  // 3's d = 256 with grouped KV heads, and DeepSeek's MLA shape, d = 192 for Q and K, dv = 128 for V.
  { name: 'Gemma d = 256 prefill, 1×16/8×4096×256, causal, f16', dims: { B: 1, Hq: 16, Hkv: 8, Lq: 4096, Lk: 4096, d: 256 }, options: { causal: true }, dtype: 'f16' },
  { name: 'MLA-shaped prefill, d = 192, dv = 128, 1×16×4096, causal, f16', dims: { B: 1, Hq: 16, Hkv: 16, Lq: 4096, Lk: 4096, d: 192, dv: 128 }, options: { causal: true }, dtype: 'f16' },
  // Gemma 2's softcap of 50 on its d = 256 prefill (PyTorch: FlexAttention with the softcap as its score function; SDPA
  // has none), and gpt-oss's shape with a sink logit per head (64/8 heads, d = 64; neither of PyTorch's has sinks).
  { name: 'Gemma 2 prefill, softcap 50, 1×16/8×4096×256, causal, f16', dims: { B: 1, Hq: 16, Hkv: 8, Lq: 4096, Lk: 4096, d: 256 }, options: { causal: true, softcap: 50 }, dtype: 'f16' },
  {
    name: 'gpt-oss-shaped prefill, sinks, 1×64/8×4096×64, causal, f16',
    dims: { B: 1, Hq: 64, Hkv: 8, Lq: 4096, Lk: 4096, d: 64 },
    options: { causal: true, sinks: Float32Array.from({ length: 64 }, (_, h) => (h % 8) - 4) },
    dtype: 'f16',
  },
  // ALiBi as BLOOM runs it (slopes 2^(−8(h+1)/H)), on the default kernel and on attention-fp32: with a causal band a
  // row's maximum climbs toward the diagonal, which costs the matrix kernel a rescale of O each time it moves.
  ...([undefined, 'attention-fp32'] as const).map((kernel) => ({
    name: `BLOOM-shaped prefill, ALiBi, 1×32×2048×128, causal, f16${kernel ? `, on ${kernel}` : ''}`,
    dims: { B: 1, Hq: 32, Hkv: 32, Lq: 2048, Lk: 2048, d: 128 },
    options: { causal: true, alibiSlopes: Float32Array.from({ length: 32 }, (_, h) => 2 ** ((-8 * (h + 1)) / 32)) },
    dtype: 'f16' as const,
    ...(kernel ? { kernel } : {}),
  })),
];

/** Bytes of K and V one call reads at least (each element once; V's rows of dv). */
export function kvBytes({ dims, dtype }: SdpaBenchCase): number {
  return dims.B * dims.Hkv * dims.Lk * (dims.d + valueHeadSize(dims)) * (dtype === 'f16' ? 2 : 4);
}

export interface SdpaBenchRow {
  name: string;
  dims: SdpaDims;
  /** The kernel that ran it. */
  impl: string;
  /** That kernel's plan in words: its tiles, subgroups or invocations (the plan's summary). */
  plan: string;
  /** K and V read per call ÷ median time, GB/s. */
  kvGBs: number;
  /** Largest error on the sampled rows against float64. */
  maxError: number;
  ms: number;
  msMin: number;
  msMax: number;
  /**
   * Ms per call over calls back to back between one pair of timestamps (median of 20 means), as PyTorch's calls are
   * timed; `ms` times each call by its own pair. Absent without timestamps.
   */
  msBackToBack?: number;
  /** With FA_BENCH_ALLOCATIONS: the median ms on each set of buffers, in the order timed. */
  allocationMs?: number[];
  /**
   * PyTorch's median ms, or why there is none: `fp32` and `fp16` as SDPA dispatches them, and the fp16 backends by name,
   * `fp16FA2` (FlashAttention-2), `fp16cuDNN` and `fp16Flex` (FlexAttention, compiled, with its block mask).
   */
  torch: Record<string, number | string>;
}

/** Deterministic uniform values in [−1, 1) (filled in place: a billion of them must not pass through a JS array). */
function values(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let state = seed >>> 0;
  for (let e = 0; e < count; e++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[e] = (state / 2 ** 32) * 2 - 1;
  }
  return out;
}

/**
 * Kernel sizes an experiment sets instead of the plans': FA_SDPA_TUNING='{"keysPerTile":64,"targetWorkgroups":1024,"prefillSplits":2}'
 * (`sdpa --bench`, and `sdpa --conformance`, e.g. '{"matrixKeysPerTile":32}' for the matrix kernel's key tiles).
 * A value that is not such an object is a usage error (exit 2), not a silent default; the commands check it before
 * any GPU work.
 */
export function tuningFromEnvironment(): { tuning?: DecodeTuning } {
  const text = process.env.FA_SDPA_TUNING;
  if (text === undefined || text === '') return {};
  const known: readonly string[] = TUNING_KEYS;
  const refused = new UsageError(`FA_SDPA_TUNING is ${text}; give a JSON object of integers with keys ${known.join(', ')}, or unset it`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refused;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.entries(parsed).some(([key, value]) => !known.includes(key) || !Number.isSafeInteger(value))) {
    throw refused;
  }
  return { tuning: parsed };
}

type BenchBuffers = { q: GPUBuffer; k: GPUBuffer; v: GPUBuffer; out: GPUBuffer };

/** How the bench times each case: FA_SDPA_TUNING's sizes, and FA_BENCH_ALLOCATIONS's buffer sets. */
export interface BenchSettings {
  readonly tuning?: DecodeTuning;
  /** Sets of input and output buffers each case is timed on, one after another (default 1). */
  readonly allocations?: number;
}

/**
 * FA_BENCH_ALLOCATIONS=N: time each case on N sets of buffers, one after another, each after its own warm-up; the row
 * keeps each set's median (`allocationMs`). An experiment's switch: whether a time depends on where the tensors lie.
 */
export function allocationsFromEnvironment(): { allocations?: number } {
  const text = process.env.FA_BENCH_ALLOCATIONS;
  if (text === undefined || text === '') return {};
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1 || n > 100) throw new UsageError(`FA_BENCH_ALLOCATIONS is ${text}; give a whole number of buffer sets from 1 to 100, or unset it`);
  return { allocations: n };
}

/**
 * `rounds` rounds of `lead` untimed and `perRound` timed dispatches, encoded by `encode` with timers[k % 2], one queued
 * behind another: each timed dispatch's milliseconds, or, without timestamps, the round's wall time per dispatch.
 */
async function timedRounds(device: GPUDevice, timers: readonly PassTimer[], rounds: number, lead: number, perRound: number, encode: (timer: PassTimer) => GPUCommandBuffer): Promise<number[][]> {
  const submitted: number[] = [];
  let lastDone = 0;
  return queuedRounds(
    device,
    rounds,
    (k) => {
      submitted[k] = performance.now();
      device.queue.submit([encode(timers[k % 2] as PassTimer)]);
    },
    async (k) => {
      const now = performance.now();
      const wall = (now - Math.max(submitted[k] as number, lastDone)) / (lead + perRound);
      lastDone = now;
      return (await (timers[k % 2] as PassTimer).readAll()) ?? [wall];
    },
  );
}

/** GPU work before the timed dispatches of a round, in milliseconds. */
const LEAD_MS = 20;

/** Rounds of calls back to back, and the GPU time of each round's calls (the most calls: 200), as PyTorch's are timed. */
const BACK_TO_BACK_ROUNDS = 20;
const BACK_TO_BACK_MS = 2;

/**
 * Milliseconds per call over calls back to back between one pair of timestamps, as the PyTorch script times its calls
 * (gpu_ms_per_call): BACK_TO_BACK_ROUNDS rounds of `lead` untimed calls and then n timed ones (n enough for
 * BACK_TO_BACK_MS at `estimate` ms per call, at most 200), each round's mean. Unlike a pair of timestamps per call, the
 * time between one call's end and the next one's start is counted, and the timestamps' own cost only once per round.
 */
async function timeBackToBack(gpu: GpuContext, lead: number, estimate: number, encodeCall: (encoder: GPUCommandEncoder, writes?: GPUComputePassTimestampWrites) => void): Promise<number[]> {
  const { device } = gpu;
  const n = Math.max(1, Math.min(200, Math.ceil(BACK_TO_BACK_MS / Math.max(estimate, 1e-3))));
  const timers = [new PassTimer(gpu), new PassTimer(gpu)];
  try {
    const rounds = await timedRounds(device, timers, BACK_TO_BACK_ROUNDS, lead, n, (timer) => {
      const encoder = device.createCommandEncoder();
      for (let r = 0; r < lead; r++) encodeCall(encoder);
      for (let r = 0; r < n; r++) encodeCall(encoder, timer.writes(r === 0, r === n - 1));
      timer.resolve(encoder);
      return encoder.finish();
    });
    return rounds.map(([ms]) => (ms as number) / n);
  } finally {
    for (const timer of timers) timer.destroy();
  }
}

/**
 * Times one case on our kernel, with the settings' sizes and buffer sets where given (the command's
 * tuningFromEnvironment and allocationsFromEnvironment); its error on `samples` rows first.
 */
export async function timeOurs(gpu: GpuContext, c: SdpaBenchCase, rounds: number, perRound: number, settings: BenchSettings = {}, samples = 8): Promise<Omit<SdpaBenchRow, 'torch'>> {
  const { B, Hq, Hkv, Lq, Lk, d } = c.dims;
  const dv = valueHeadSize(c.dims);
  const problem = sdpaProblem(c.dims, c.reference?.() ?? c.options);
  // A tensor as stored (f16 bits for f16 cases) and as the float64 rows see it (the same values).
  const tensor = (count: number, seed: number): { stored: Float32Array | Uint16Array; exact: Float32Array } => {
    const x = values(count, seed);
    if (c.dtype !== 'f16') return { stored: x, exact: x };
    const bits = floatsToHalves(x);
    return { stored: bits, exact: halvesToFloats(bits) };
  };
  const tq = tensor(B * Hq * Lq * d, 1);
  const tk = tensor(B * Hkv * Lk * d, 2);
  const tv = tensor(B * Hkv * Lk * dv, 3);
  const [q, k, v] = [tq.exact, tk.exact, tv.exact];
  const prepared = await prepareAttention(gpu, c.dims, { ...c.options, dtype: c.dtype ?? 'f32', ...(c.kernel ? { kernel: c.kernel } : {}), ...(settings.tuning ? { tuning: settings.tuning } : {}) });
  try {
    const ran = await prepared.run(tq.stored, tk.stored, tv.stored);
    const out = ran.out instanceof Uint16Array ? halvesToFloats(ran.out) : ran.out;
    let maxError = 0;
    for (let n = 0; n < samples; n++) {
      const [b, h, i] = [n % B, (n * 7) % Hq, Math.floor(((n + 0.5) / samples) * Lq)];
      const exact = sdpaOracleRow(problem, q, k, v, b, h, i);
      const at = rowOffset(problem.layout, Hq, Lq, dv, b, h, i);
      exact.forEach((e, x) => (maxError = Math.max(maxError, Math.abs(e - (out[at + x] as number)))));
    }
    const { device } = gpu;
    const make = (data: Float32Array | Uint16Array): GPUBuffer => {
      const buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 4) * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(buffer, 0, data);
      return buffer;
    };
    // Each dispatch its own pair of timestamps (wall-clock when the adapter has none). A timed round starts with
    // `lead` untimed dispatches, and one round waits in the queue behind the one running (queuedRounds), so that the
    // GPU never idles between rounds and its clock stays up (warm-up.ts).
    const timers = [new PassTimer(gpu, perRound), new PassTimer(gpu, perRound)];
    const encodeRound = (buffers: BenchBuffers, timer: PassTimer, lead: number): GPUCommandBuffer => {
      const encoder = device.createCommandEncoder();
      for (let r = 0; r < lead; r++) prepared.encode(encoder, buffers);
      for (let r = 0; r < perRound; r++) {
        timer.select(r);
        prepared.encode(encoder, buffers, timer.writes(true, true));
      }
      timer.resolve(encoder);
      return encoder.finish();
    };
    const times: number[] = [];
    const allocationMs: number[] = [];
    let backToBack: number[] | undefined;
    try {
      for (let a = 0; a < (settings.allocations ?? 1); a++) {
        const buffers = { q: make(tq.stored), k: make(tk.stored), v: make(tv.stored), out: make(ran.out) };
        const once = await timedRounds(device, timers, 1, 0, perRound, (timer) => encodeRound(buffers, timer, 0));
        const estimate = median(once.flat());
        await keepBusy(
          device,
          (encoder) => {
            prepared.encode(encoder, buffers);
          },
          estimate,
        );
        const lead = Math.min(2000, Math.max(0, Math.ceil(LEAD_MS / Math.max(estimate, 1e-3)) - perRound));
        const mine = (await timedRounds(device, timers, rounds, lead, perRound, (timer) => encodeRound(buffers, timer, lead))).flat();
        if (a === 0 && gpu.hasTimestamps) backToBack = await timeBackToBack(gpu, lead, median(mine), (encoder, writes) => {
          prepared.encode(encoder, buffers, writes);
        });
        for (const buffer of Object.values(buffers)) buffer.destroy();
        times.push(...mine);
        allocationMs.push(median(mine));
      }
    } finally {
      for (const timer of timers) timer.destroy();
    }
    const ms = median(times);
    return { name: c.name, dims: c.dims, impl: prepared.impl, plan: prepared.plan.kernelPlan.summary, kvGBs: kvBytes(c) / ms / 1e6, maxError, ms, msMin: Math.min(...times), msMax: Math.max(...times), ...(backToBack ? { msBackToBack: median(backToBack) } : {}), ...(allocationMs.length > 1 ? { allocationMs } : {}) };
  } finally {
    prepared.dispose();
  }
}

const TORCH_SCRIPT = `
import json, sys, torch
${TORCH_GPU_MS_PER_CALL}from torch.nn.attention import sdpa_kernel, SDPBackend
cases = json.loads(sys.argv[1])
sdpa = torch.nn.functional.scaled_dot_product_attention
try:
    from torch.nn.attention.flex_attention import flex_attention, create_block_mask
    flex = torch.compile(flex_attention, dynamic=False)
    # Each case's shape, mask and score function is a compilation of its own: past dynamo's limit (8) flex would run
    # uncompiled, at many times its speed.
    for limit in ('recompile_limit', 'cache_size_limit'):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 256)
except Exception:
    flex = None

# GPU time per call, as ours is timed: the median of 20 means of calls back to back (gpu_ms_per_call, bench/torch.ts).
def median_ms(call):
    with torch.no_grad():
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        times = gpu_ms_per_call(call, 20)
    times.sort()
    return times[len(times) // 2]

def failed(error):
    return 'failed: ' + str(error).split('\\n')[0][:120]

out = []
for c in cases:
    B, Hq, Hkv, Lq, Lk, d = (c['dims'][n] for n in ('B', 'Hq', 'Hkv', 'Lq', 'Lk', 'd'))
    dv = c['dims'].get('dv', d)  # V's head size: SDPA takes v with a last dimension of its own
    row = {}
    if c.get('sinks'):
        out.append({n: 'no sink logits in SDPA or FlexAttention' for n in ('fp32', 'fp16', 'fp16FA2', 'fp16cuDNN', 'fp16Flex')})
        continue
    for name, dtype in (('fp32', torch.float32), ('fp16', torch.float16)):
        try:
            q = torch.rand(B, Hq, Lq, d, device='cuda', dtype=dtype) * 2 - 1
            k = torch.rand(B, Hkv, Lk, d, device='cuda', dtype=dtype) * 2 - 1
            v = torch.rand(B, Hkv, Lk, dv, device='cuda', dtype=dtype) * 2 - 1
            kw = {'enable_gqa': True} if Hq != Hkv else {}
            keep = None  # which (query, key) pairs take part, as a mask function of FlexAttention
            if c.get('causal') and Lq == Lk:
                kw['is_causal'] = True
                keep = lambda b, h, i, j: j <= i
            elif c.get('causal'):
                kw['attn_mask'] = torch.ones(Lq, Lk, dtype=torch.bool, device='cuda').tril(Lk - Lq)
                keep = lambda b, h, i, j: j <= i + (Lk - Lq)
            if c.get('documents') is not None:
                # Packed documents of equal length, causal within each: an explicit mask for SDPA, a mask function for Flex.
                doc = torch.arange(Lq, device='cuda') * c['documents'] // Lq
                kw['attn_mask'] = (doc[:, None] == doc[None, :]) & torch.ones(Lq, Lk, dtype=torch.bool, device='cuda').tril()
                keep = lambda b, h, i, j: (doc[i] == doc[j]) & (j <= i)
            mod = None  # a score function for Flex (SDPA has none)
            if c.get('softcap') is not None:
                cap = c['softcap']
                mod = lambda score, b, h, i, j: cap * torch.tanh(score / cap)
            if c.get('alibi') is not None:
                # FlashAttention-2's ALiBi: minus the head's slope times the key's distance from the row's diagonal.
                slopes = torch.tensor(c['alibi'], device='cuda', dtype=torch.float32)
                mod = lambda score, b, h, i, j: score - slopes[h] * (i + (Lk - Lq) - j).abs()
            if c.get('blocks') is not None:
                bm = c['blocks']
                flags = torch.tensor(bm['data'], dtype=torch.bool, device='cuda').reshape(bm['shape'])
                kw['attn_mask'] = flags.repeat_interleave(bm['rows'], 0).repeat_interleave(bm['keys'], 1)[:Lq, :Lk]
                rows, keys = bm['rows'], bm['keys']
                keep = lambda b, h, i, j: flags[i // rows, j // keys]
            if mod is None:
                row[name] = median_ms(lambda: sdpa(q, k, v, **kw))
            else:
                row[name] = 'no score function in SDPA'
            if name == 'fp16':
                # The fp16 backends by name: FlashAttention-2, cuDNN, and FlexAttention (compiled, with its block mask).
                for label, backend in (('fp16FA2', SDPBackend.FLASH_ATTENTION), ('fp16cuDNN', SDPBackend.CUDNN_ATTENTION)):
                    if mod is not None:
                        row[label] = 'no score function in SDPA'
                        continue
                    try:
                        with sdpa_kernel(backend):
                            row[label] = median_ms(lambda: sdpa(q, k, v, **kw))
                    except Exception as error:
                        row[label] = failed(error)
                try:
                    if flex is None:
                        raise RuntimeError('FlexAttention is not available in this PyTorch')
                    block = create_block_mask(keep, None, None, Lq, Lk, device='cuda') if keep is not None else None
                    fkw = {'enable_gqa': True} if Hq != Hkv else {}
                    if mod is not None:
                        fkw['score_mod'] = mod
                    row['fp16Flex'] = median_ms(lambda: flex(q, k, v, block_mask=block, **fkw))
                except Exception as error:
                    row['fp16Flex'] = failed(error)
            del q, k, v
            torch.cuda.empty_cache()
        except Exception as error:
            row[name] = failed(error)
    out.append(row)
print(json.dumps({'torch': torch.__version__, 'device': torch.cuda.get_device_name(), 'rows': out}))
`;

/** PyTorch's medians for each case in fp32 and fp16, and fp16 per backend (SdpaBenchRow.torch), or one reason for all. */
export function timeTorchCases(python: string, cases: readonly SdpaBenchCase[]): { rows: Record<string, number | string>[]; version: string } | string {
  const described = cases.map((c) => ({
    dims: c.dims,
    causal: c.options.causal === true,
    blocks: c.options.blockMask ? { rows: c.options.blockMask.rows, keys: c.options.blockMask.keys, data: [...c.options.blockMask.data], shape: c.options.blockMask.shape } : null,
    documents: c.documents ?? null,
    softcap: c.options.softcap ?? null,
    alibi: c.options.alibiSlopes ? [...c.options.alibiSlopes] : null,
    sinks: c.options.sinks !== undefined,
  }));
  const run = spawnSync(python, ['-c', TORCH_SCRIPT, JSON.stringify(described)], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (run.status !== 0) return `PyTorch failed: ${run.stderr.trim().split('\n').pop() ?? `exit ${run.status}`}`;
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { torch: string; device: string; rows: Record<string, number | string>[] };
  return { rows: parsed.rows, version: `PyTorch ${parsed.torch} on ${parsed.device}; each ms the median of 20 means of calls back to back` };
}

const COPY_KERNEL = {
  label: 'copy-bandwidth',
  code: `@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) n: vec3u) {
  let e = id.y * n.x * 256u + id.x;
  if (e < arrayLength(&src)) { dst[e] = src[e]; }
}`,
};

/** Bytes the copy kernel moves: `wanted`, or less where the device binds or allocates no buffer that large (a whole number of vec4s). */
export function copyBytes(limits: { readonly maxStorageBufferBindingSize: number; readonly maxBufferSize: number }, wanted = 256 * 2 ** 20): number {
  return Math.floor(Math.min(wanted, limits.maxStorageBufferBindingSize, limits.maxBufferSize) / 16) * 16;
}

/**
 * The device's copy bandwidth, the floor a decode kernel is held to: a kernel that reads and writes `copyBytes(...)`
 * (256 MiB, or the largest buffer the device binds), timed by GPU timestamps; GB/s of bytes read (the same again is
 * written). Undefined without timestamps. Every GPU call runs in error scopes: an error is thrown (GpuError), never left
 * for Dawn to print.
 */
export async function copyBandwidth(gpu: GpuContext, wanted = 256 * 2 ** 20): Promise<number | undefined> {
  const { device } = gpu;
  const bytes = copyBytes(gpu.report.limits, wanted);
  const { main } = await checked(gpu, 'compiling the copy kernel', () => computePipelines(gpu, COPY_KERNEL, ['main']));
  const repeats = 10;
  const made: { destroy(): void }[] = [];
  try {
    return await checked(gpu, `timing the copy kernel on ${bytes} bytes`, async () => {
      const src = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE });
      const dst = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE });
      const timer = new PassTimer(gpu, repeats);
      made.push(src, dst, timer);
      const group = device.createBindGroup({ layout: main.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] });
      const groups = Math.ceil(bytes / 16 / 256);
      const x = Math.min(groups, gpu.report.limits.maxComputeWorkgroupsPerDimension);
      const dispatch = (pass: GPUComputePassEncoder): void => {
        pass.setPipeline(main);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(x, Math.ceil(groups / x));
      };
      const round = async (): Promise<number[] | undefined> => {
        const encoder = device.createCommandEncoder();
        for (let r = 0; r < repeats; r++) {
          timer.select(r);
          const pass = encoder.beginComputePass({ timestampWrites: timer.writes(true, true) });
          dispatch(pass);
          pass.end();
        }
        timer.resolve(encoder);
        device.queue.submit([encoder.finish()]);
        return timer.readAll();
      };
      const first = await round();
      await keepBusy(
        device,
        (encoder) => {
          const pass = encoder.beginComputePass();
          dispatch(pass);
          pass.end();
        },
        first ? median(first) : 1,
      );
      const times = await round();
      return times ? bytes / median(times.slice(1)) / 1e6 : undefined;
    });
  } finally {
    for (const resource of made) resource.destroy();
  }
}
