/**
 * `hw4-cli sdpa --bench`: the model-shaped cases (bench/sdpa.ts) on our kernels, beside PyTorch (fp32 and fp16, and fp16
 * per backend: FlashAttention-2, cuDNN, FlexAttention; CUDA events around calls back to back) and, with --ort, ONNX Runtime's WebGPU attention (bench/ort.ts), each case checked on sampled rows against
 * float64 before it is timed. The table goes to standard output; with --out DIR the rows also go to
 * DIR/sdpa-<adapter>.json (checked before anything is measured), one row per case: name, dtype, impl, plan (the
 * kernel's sizes in words), ms (median, each call timed by its own pair of timestamps), msMin, msMax, msBackToBack (ms
 * per call over calls back to back, as PyTorch's are timed), tflops, kvGBs (K and V bytes ÷ time), maxError, torch (ms per
 * backend, or why not), ort (ms, or why not); FA_SDPA_TUNING's sizes as `tuning`, and
 * FA_BENCH_ALLOCATIONS's count as `allocations`, where they are set.
 */
import { join } from 'node:path';
import { adapterName } from '@fa/core';
import { writeFileAtomic } from '@fa/io/node';
import { parseDecimalList, shown, stringFlag, type Values } from '../args.js';
import { makeEnv } from '../env.js';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';
import type { Reporter } from '../output.js';
import { ensureOrt, onnxProblem, ORT_VERSION, timeOrt } from '../bench/ort.js';
import { checkReportFolder, makeReportFolder, reportSlug } from '../bench/report-folder.js';
import { allocationsFromEnvironment, copyBandwidth, SDPA_BENCH_CASES, timeOurs, timeTorchCases, tuningFromEnvironment, type SdpaBenchCase } from '../bench/sdpa.js';

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/**
 * The share of the Lq·Lk scores a case's mask leaves visible, as FlexAttention's benchmarks count work: half for a
 * causal square problem, 1/(2n) for n packed documents causal within each, the kept blocks' share under a block mask.
 */
export function visibleShare({ dims, options, documents }: SdpaBenchCase): number {
  if (documents !== undefined) return 1 / (2 * documents);
  const blocks = options.blockMask?.data;
  if (blocks !== undefined) return Array.from(blocks).filter((kept) => kept).length / blocks.length;
  return options.causal === true && dims.Lq === dims.Lk ? 1 / 2 : 1;
}

/** Matrix work of one call, TFLOP: 2·B·Hq·Lq·Lk·(d + dv) (4·…·d where dv = d) times the visible share of the scores. */
function teraFlops(c: SdpaBenchCase): number {
  const { dims } = c;
  return (2 * dims.B * dims.Hq * dims.Lq * dims.Lk * (dims.d + (dims.dv ?? dims.d)) * visibleShare(c)) / 1e12;
}

/** ONNX Runtime's time of a case, or why there is none. */
function ortCell(entry: string | { reason: string } | undefined, c: SdpaBenchCase): number | string {
  if (entry === undefined) return 'not requested (--ort)';
  if (typeof entry !== 'string') return entry.reason;
  const problem = onnxProblem(c.dims, c.options, c.dtype ?? 'f32');
  return typeof problem === 'string' ? problem : timeOrt(entry, problem);
}

export async function sdpaBench(out: Reporter, values: Values, json: boolean): Promise<number> {
  const chosen = stringFlag(values, 'cases');
  const indices = chosen === undefined ? SDPA_BENCH_CASES.map((_, n) => n) : parseDecimalList(chosen);
  if (indices?.every((n) => Number.isInteger(n) && n >= 0 && n < SDPA_BENCH_CASES.length) !== true) throw new UsageError(`--cases ${shown(chosen ?? '')}: give case numbers 0 to ${SDPA_BENCH_CASES.length - 1}, comma-separated`);
  const outDir = stringFlag(values, 'out');
  if (outDir !== undefined) checkReportFolder(outDir);
  const settings = { ...tuningFromEnvironment(), ...allocationsFromEnvironment() };
  const env = await makeEnv({ gpu: true, threads: 1 });
  if (!env.gpu) throw new ExitError(`sdpa --bench needs a GPU: ${env.gpuUnavailableReason ?? 'none found'}`, EXIT.usage);
  const cases = indices.map((n) => SDPA_BENCH_CASES[n] as SdpaBenchCase);
  const torch = values['no-torch'] === true ? 'not requested (--no-torch)' : timeTorchCases(stringFlag(values, 'python') ?? process.env.FA_PYTHON ?? 'python3', cases);
  const ort = values.ort === true ? ensureOrt() : undefined;
  const copyGBs = await copyBandwidth(env.gpu);
  const rows = [];
  for (const [n, c] of cases.entries()) {
    const ours = await timeOurs(env.gpu, c, 5, 10, settings);
    const ortMs = ortCell(ort, c);
    rows.push({
      ...ours,
      dtype: c.dtype ?? 'f32',
      tflops: teraFlops(c) / (ours.ms / 1e3),
      torch: typeof torch === 'string' ? { reason: torch } : (torch.rows[n] ?? {}),
      ort: typeof ortMs === 'number' ? { ms: ortMs } : { reason: ortMs, ms: undefined },
    });
    out.info(`${c.name}: ${ours.ms.toFixed(3)} ms on ${ours.impl} (${ours.plan})${typeof ortMs === 'number' ? `, ONNX Runtime ${ortMs.toFixed(3)} ms` : ''}`);
  }
  const record = {
    adapter: adapterName(env.gpu.report),
    date: new Date().toISOString().slice(0, 10),
    torch: typeof torch === 'string' ? torch : torch.version,
    ort: values.ort === true ? `onnxruntime-node ${ORT_VERSION}, WebGPU EP` : 'not requested (--ort)',
    copyGBs,
    ...settings,
    rows,
  };
  if (outDir !== undefined) {
    makeReportFolder(outDir);
    const path = join(outDir, `sdpa-${reportSlug(record.adapter)}.json`);
    await writeFileAtomic(path, [Buffer.from(`${JSON.stringify(record, null, 2)}\n`)]);
    out.info(`wrote ${path}`);
  }
  if (json) {
    out.result(record);
    return EXIT.ok;
  }
  print(`adapter: ${record.adapter}; ${typeof torch === 'string' ? `PyTorch: ${torch}` : torch.version}; ONNX Runtime: ${record.ort}; copy kernel: ${copyGBs === undefined ? 'no timestamps' : `${copyGBs.toFixed(0)} GB/s read (and as much written)`}`);
  for (const line of benchTableHeader()) print(line);
  for (const r of rows) print(benchTableRow(r));
  return EXIT.ok;
}

/** The table's header lines. */
export function benchTableHeader(): string[] {
  return [
    '| case | kernel | ours, ms (min-max) | ours back to back | TFLOP/s | K, V read GB/s | max error | PyTorch fp32 | PyTorch fp16 | fp16 FA2 / cuDNN / Flex | ONNX Runtime WebGPU | PyTorch fp32 ÷ ours |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
}

/** One case's line of the table: ours, PyTorch's SDPA in fp32 and fp16 and its fp16 backends by name, ONNX Runtime's. */
export function benchTableRow(r: {
  name: string;
  impl: string;
  ms: number;
  msMin: number;
  msMax: number;
  msBackToBack?: number;
  tflops: number;
  kvGBs: number;
  maxError: number;
  torch: Readonly<Record<string, unknown>>;
  ort: { ms?: number | undefined };
}): string {
  const cell = (x: unknown): string => (typeof x === 'number' ? x.toFixed(3) : '—');
  const t = r.torch;
  const vsTorch = typeof t.fp32 === 'number' ? (t.fp32 / r.ms).toFixed(2) : '—';
  return `| ${r.name} | ${r.impl} | ${r.ms.toFixed(3)} (${r.msMin.toFixed(3)}-${r.msMax.toFixed(3)}) | ${cell(r.msBackToBack)} | ${r.tflops.toFixed(1)} | ${r.kvGBs.toFixed(0)} | ${r.maxError.toExponential(1)} | ${cell(t.fp32)} | ${cell(t.fp16)} | ${cell(t.fp16FA2)} / ${cell(t.fp16cuDNN)} / ${cell(t.fp16Flex)} | ${cell(r.ort.ms)} | ${vsTorch} |`;
}
