/**
 * hw4-cli [--impl ID] INPUT OUTPUT: the assignment's program. Streams the input in chunks of whole batches through
 * a prepared rung into the output (written atomically, or directly for `-` and special files), reading the next
 * chunk while the current one computes. Each chunk's statistics, gathered while reading, say whether float32 can
 * meet the tolerance on it (accuracy.ts); NaN/Inf, when allowed, give NaN rows of O (stats.ts in @fa/io).
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { adapterName, canRun, type PrepareOptions, type Runner, type Rung, type RunEnv } from '@fa/core';
import {
  attentionFlops,
  DEFAULT_TOLERANCE,
  firstNonFinite,
  formatShape,
  hasNonFinite,
  Hw4Input,
  Hw4IoError,
  maskNonFiniteOutput,
  matrixFloats,
  openOutput,
  STDIO_PATH,
  zeroNonFinite,
  type InputChunk,
  type OutputWriter,
  type Shape,
} from '@fa/io';
import { fastestRung, findRung, LADDER } from '@fa/ladder';
import { ACCURATE_RUNG_IDS, chooseForAccuracy, describeRisk, fp32Risk, type AccuracyPolicy, type Fp32Risk } from '../accuracy.js';
import { expectPositionals, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { checkThreads, makeEnv } from '../env.js';
import { ExitError, EXIT, UsageError } from '../exit-codes.js';
import { reporter, type Reporter } from '../output.js';
import { Progress } from '../progress.js';
import { seconds, textTable } from '../table.js';

export const RUN_OPTIONS = {
  impl: { type: 'string', short: 'i' },
  threads: { type: 'string' },
  'chunk-mb': { type: 'string' },
  'allow-non-finite': { type: 'boolean' },
  'allow-inaccurate': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export function resolveRung(id: string): Rung {
  const rung = findRung(id);
  if (!rung) throw new UsageError(`unknown rung "${id}"; choose one of ${LADDER.map((r) => r.id).join(', ')} (see --list)`);
  return rung;
}

/** The rungs of a comma-separated --impl list, or the whole ladder when there is none. */
export function resolveRungs(list: string | undefined): readonly Rung[] {
  return list === undefined ? LADDER : list.split(',').map((id) => resolveRung(id.trim()));
}

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('run', args, RUN_OPTIONS);
  const [inputPath, outputPath] = expectPositionals('run', positionals, ['INPUT', 'OUTPUT']) as [string, string];
  const out = reporter(values.quiet === true, values.json === true);
  if (outputPath === STDIO_PATH && out.json) throw new UsageError('OUTPUT - and --json both write to standard output; drop one of them');
  const implId = stringFlag(values, 'impl');
  const chosen = implId === undefined ? undefined : resolveRung(implId);
  const threads = checkThreads(numberFlag(values, 'threads', isPositiveInteger, 'a positive integer'));
  const chunkMb = numberFlag(values, 'chunk-mb', (n) => n > 0, 'a positive number of MiB');
  const allowNonFinite = values['allow-non-finite'] === true;
  const t0 = performance.now();

  await refuseSameFile(inputPath, outputPath);
  const input = await Hw4Input.open(inputPath);
  try {
    const { shape } = input;
    // Open the output before any compute, so a missing output folder fails at once.
    const writer = await openOutput(outputPath);
    try {
      const env = await makeEnv({ gpu: chosen === undefined || chosen.kind === 'gpu', threads });
      const rung = chosen ?? fastestRung(shape, env);
      const allowed = canRun(rung, shape, env);
      if (allowed !== true) throw new UsageError(`rung ${rung.id} cannot run ${formatShape(shape)} here: ${allowed}`);
      const chunkBatches = input.batchesPerChunk(chunkMb ? { chunkBytes: chunkMb * 2 ** 20 } : {});
      const runners = new Runners(env, shape, { maxBatchesPerRun: chunkBatches });
      const policy: AccuracyPolicy = {
        chosen: rung,
        named: chosen !== undefined,
        allowInaccurate: values['allow-inaccurate'] === true,
        tolerance: DEFAULT_TOLERANCE,
        accurate: resolveRung('cpu'),
      };
      const progress = Progress.forStderr(shape.B, 'batches', out.quiet);
      let result: StreamResult;
      let tSetup: number;
      try {
        const first = await runners.get(rung);
        tSetup = performance.now();
        const perChunk = Math.min(first.maxBatchesPerRun, chunkBatches);
        const chunks = input.chunks({ batchesPerChunk: perChunk, allowNonFinite, shared: first.prefersSharedInput === true, stats: true });
        result = await streamThrough({ policy, runners, chunks, writer, shape, progress, out, allowNonFinite });
      } finally {
        progress.finish();
        await runners.dispose();
      }
      const tCommit = performance.now();
      await writer.commit();
      result.times.outputMs += performance.now() - tCommit;
      if (chosen === undefined && !env.gpu && env.gpuUnavailableReason?.includes('FA_GPU') !== true) out.info(`hw4-cli: note: no GPU here (${env.gpuUnavailableReason ?? 'unknown reason'})`);
      report(out, rung, env, shape, inputPath, outputPath, result, { totalMs: performance.now() - t0, setupMs: tSetup - t0 });
      return EXIT.ok;
    } catch (error) {
      await writer.abort();
      throw error;
    }
  } finally {
    await input.close();
  }
}

/** Prepared runners by rung id (the chosen one, and the accurate one when some batches need it), sized to a chunk. */
class Runners {
  private readonly prepared = new Map<string, Promise<Runner>>();

  constructor(
    private readonly env: RunEnv,
    private readonly shape: Shape,
    private readonly options: PrepareOptions,
  ) {}

  get(rung: Rung): Promise<Runner> {
    let runner = this.prepared.get(rung.id);
    if (!runner) {
      runner = rung.prepare(this.env, this.shape, this.options);
      this.prepared.set(rung.id, runner);
    }
    return runner;
  }

  async dispose(): Promise<void> {
    const all = [...this.prepared.values()];
    this.prepared.clear();
    await Promise.all(all.map(async (r) => (await r.catch(() => undefined))?.dispose()));
  }
}

interface StreamTimes {
  inputMs: number;
  computeMs: number;
  outputMs: number;
  gpuMs?: number;
}

interface StreamResult {
  times: StreamTimes;
  /** Batches computed by each rung, in first-use order. */
  batchesByRung: Map<string, number>;
  notes: string[];
}

interface StreamJob {
  policy: AccuracyPolicy;
  runners: Runners;
  chunks: AsyncGenerator<InputChunk>;
  writer: OutputWriter;
  shape: Shape;
  progress: Progress;
  out: Reporter;
  allowNonFinite: boolean;
}

/** Reads chunk k+1 while chunk k computes; picks each chunk's rung for accuracy, checks and writes its output. */
async function streamThrough(job: StreamJob): Promise<StreamResult> {
  const { chunks, shape } = job;
  const size = matrixFloats(shape);
  const result: StreamResult = { times: { inputMs: 0, computeMs: 0, outputMs: 0 }, batchesByRung: new Map(), notes: [] };
  const { times } = result;
  let next = chunks.next();
  // One output buffer for every chunk: a fresh 20-60 MiB array per chunk costs its page faults each time (measured
  // about 17 ms per 21 MiB on the H100 host), and each write completes before the next chunk computes.
  let outputBuffer = new Float32Array(0);
  try {
    for (;;) {
      let t = performance.now();
      const item = await next;
      times.inputMs += performance.now() - t;
      if (item.done) return result;
      const chunk = item.value;
      next = chunks.next();
      next.catch(() => undefined);
      const stats = chunk.stats ?? [];
      const risk = fp32Risk(stats, shape);
      const choice = chooseForAccuracy(job.policy, risk);
      if (choice.note !== undefined && !result.notes.includes(choice.note)) {
        result.notes.push(choice.note);
        job.out.info(choice.note);
      }
      const nonFinite = job.allowNonFinite && hasNonFinite(stats);
      if (nonFinite) zeroNonFinite(chunk.data);
      t = performance.now();
      const runner = await job.runners.get(choice.rung);
      if (outputBuffer.length < chunk.batches * size) outputBuffer = new Float32Array(chunk.batches * size);
      const O = outputBuffer.subarray(0, chunk.batches * size);
      const gpuMs = await runInPieces(runner, chunk.data, chunk.batches, O, shape);
      if (gpuMs !== undefined) times.gpuMs = (times.gpuMs ?? 0) + gpuMs;
      times.computeMs += performance.now() - t;
      checkFinite(choice.rung, O, chunk.firstBatch, shape, risk);
      if (nonFinite) maskNonFiniteOutput(O, stats, shape);
      result.batchesByRung.set(choice.rung.id, (result.batchesByRung.get(choice.rung.id) ?? 0) + chunk.batches);
      t = performance.now();
      await job.writer.write(O);
      times.outputMs += performance.now() - t;
      job.progress.update(chunk.firstBatch + chunk.batches);
    }
  } catch (error) {
    await next.catch(() => undefined);
    await chunks.return(undefined).catch(() => undefined);
    throw error;
  }
}

/** Runs `batches` batches in runs of at most the runner's maxBatchesPerRun; returns the GPU time, when measured. */
async function runInPieces(runner: Runner, input: Float32Array, batches: number, output: Float32Array, shape: Shape): Promise<number | undefined> {
  const size = matrixFloats(shape);
  const step = Math.max(1, runner.maxBatchesPerRun);
  let gpuMs: number | undefined;
  for (let b = 0; b < batches; b += step) {
    const n = Math.min(step, batches - b);
    const whole = b === 0 && n === batches;
    const stats = await runner.run(
      whole ? input : input.subarray(3 * b * size, 3 * (b + n) * size),
      n,
      whole ? output : output.subarray(b * size, (b + n) * size),
    );
    if (stats.gpuMs !== undefined) gpuMs = (gpuMs ?? 0) + stats.gpuMs;
  }
  return gpuMs;
}

function report(
  out: Reporter,
  chosen: Rung,
  env: RunEnv,
  shape: Shape,
  inputPath: string,
  outputPath: string,
  result: StreamResult,
  whole: { totalMs: number; setupMs: number },
): void {
  const times = { ...result.times, ...whole };
  // The rung that computed every batch, or the chosen one when batches were split between rungs.
  const used = [...result.batchesByRung.keys()];
  const rung = used.length === 1 && used[0] !== undefined ? resolveRung(used[0]) : chosen;
  const gflops = attentionFlops(shape) / (times.computeMs / 1000) / 1e9;
  const adapter = rung.kind === 'gpu' && env.gpu ? adapterName(env.gpu.report) : undefined;
  const path = (p: string): string => (p === STDIO_PATH ? p : resolve(p));
  if (out.json) {
    out.result({
      impl: rung.id,
      index: rung.index,
      kind: rung.kind,
      shape,
      input: path(inputPath),
      output: path(outputPath),
      batchesByRung: Object.fromEntries(result.batchesByRung),
      notes: result.notes,
      adapter,
      seconds: {
        total: times.totalMs / 1000,
        setup: times.setupMs / 1000,
        input: times.inputMs / 1000,
        compute: times.computeMs / 1000,
        output: times.outputMs / 1000,
        gpu: times.gpuMs === undefined ? undefined : times.gpuMs / 1000,
      },
      gflopsPerSecond: gflops,
    });
  }
  const split = used.length > 1 ? ` (${used.map((id) => `${result.batchesByRung.get(id) ?? 0} batches on ${id}`).join(', ')})` : '';
  out.info(`hw4-cli: ${rung.id} (rung ${rung.index}, ${rung.kind}) on ${formatShape(shape)}${adapter ? `, ${adapter}` : ''}${split}`);
  const gpu = times.gpuMs === undefined ? '' : `, GPU busy ${seconds(times.gpuMs)}`;
  out.info(
    textTable(
      ['time', 'seconds', ''],
      [
        ['total', seconds(times.totalMs), ''],
        ['setup', seconds(times.setupMs), rung.kind === 'gpu' ? 'device, pipelines, buffers' : 'threads, buffers'],
        ['input', seconds(times.inputMs), 'reading (beyond what overlapped compute)'],
        ['compute', seconds(times.computeMs), `${gflops.toFixed(2)} GFLOP/s${gpu}`],
        ['output', seconds(times.outputMs), outputPath === STDIO_PATH ? 'writing to standard output' : 'writing and renaming into place'],
      ],
    ),
  );
}

async function refuseSameFile(inputPath: string, outputPath: string): Promise<void> {
  if (inputPath === STDIO_PATH || outputPath === STDIO_PATH) return;
  const [a, b] = await Promise.all([stat(inputPath).catch(() => undefined), stat(outputPath).catch(() => undefined)]);
  if (a && b && a.dev === b.dev && a.ino === b.ino) {
    throw new Hw4IoError(`OUTPUT ${outputPath} is the input file itself; writing it would destroy the input, choose another path`);
  }
}

/** Non-finite output from finite (or zeroed) input: an overflow the risk foresaw, said in terms of the input, or a bug. */
function checkFinite(rung: Rung, O: Float32Array, firstBatch: number, { N, d }: Shape, risk: Fp32Risk): void {
  const bad = firstNonFinite(O);
  if (bad < 0) return;
  const batch = firstBatch + Math.floor(bad / (N * d));
  const within = bad % (N * d);
  const where = `(batch ${batch}, row ${Math.floor(within / d)}, col ${within % d})`;
  if (!ACCURATE_RUNG_IDS.has(rung.id) && risk.overflow) {
    throw new ExitError(
      `rung ${rung.id} overflowed float32 at ${where}: this input is finite but ${describeRisk(risk)}; ` +
        `use the float64 cpu rung (--impl cpu, or leave --impl out); no output was written`,
      EXIT.failure,
    );
  }
  throw new ExitError(
    `rung ${rung.id} produced a non-finite value at ${where} from finite input; no output was written (a bug: please report it with the input)`,
    EXIT.failure,
  );
}
