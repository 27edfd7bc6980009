/**
 * hw4-cli [--impl ID] INPUT OUTPUT: the assignment's program. Streams the input in chunks of whole batches through
 * a prepared rung into the output (written atomically, or directly for `-` and special files), reading the next
 * chunk while the current one computes. Each chunk's statistics, gathered while reading, say whether float32 can
 * meet the tolerance on it (accuracy.ts); NaN/Inf, when allowed, give NaN rows of O (stats.ts in @fa/io).
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { GpuStartTimes } from '@fa/core/node';
import { adapterName, canRun, chunkBytesFor, streamChunks, type PrepareOptions, type Runner, type Rung, type RunEnv, type StreamReport } from '@fa/core';
import {
  attentionFlops,
  ChunkPool,
  DEFAULT_TOLERANCE,
  firstNonFinite,
  formatShape,
  hasNonFinite,
  Hw4Input,
  inputBatchBytes,
  Hw4IoError,
  maskNonFiniteOutput,
  openOutput,
  STDIO_PATH,
  zeroNonFinite,
  type InputChunk,
  type OutputWriter,
  type Shape,
} from '@fa/io/node';
import { chooseRung, fastestRung, findRung, IMPLEMENTATIONS } from '@fa/ladder';
import { ACCURATE_RUNG_IDS, chooseForAccuracy, describeRisk, fp32Risk, type AccuracyPolicy, type Fp32Risk } from '../accuracy.js';
import { expectPositionals, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { RUN_OPTIONS } from '../command-line.js';
import { checkThreads, gpuStartTimes, makeEnv } from '../env.js';
import { ExitError, EXIT, UsageError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';
import { reporter, type Reporter } from '../output.js';
import { checkParentAlive } from '../parent-watch.js';
import { Progress } from '../progress.js';
import { readEarly } from '../read-early.js';
import { StatsWorkers } from '../stats-workers.js';
import { seconds, textTable } from '../table.js';

export function resolveRung(id: string): Rung {
  const rung = findRung(id);
  if (!rung) throw new UsageError(`unknown rung "${id}"; choose one of ${IMPLEMENTATIONS.map((r) => r.id).join(', ')} (see --list)`);
  return rung;
}

/** The rungs of a comma-separated --impl list, or the whole ladder when there is none. */
export function resolveRungs(list: string | undefined): readonly Rung[] {
  return list === undefined ? IMPLEMENTATIONS : list.split(',').map((id) => resolveRung(id.trim()));
}

/** Whether any of these rungs runs on the GPU (a command that runs CPU rungs only does not start it). */
export function needsGpu(rungs: readonly Rung[]): boolean {
  return rungs.some((rung) => rung.kind === 'gpu');
}

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('run', args, RUN_OPTIONS);
  // The rung first: in `--impl in.bin out.bin` the flag took the input's name, and that is the error to report.
  const implId = stringFlag(values, 'impl');
  const chosen = implId === undefined ? undefined : resolveRung(implId);
  const [inputPath, outputPath] = expectPositionals('run', positionals, ['INPUT', 'OUTPUT']) as [string, string];
  const out = reporter(values.quiet === true, values.json === true);
  if (outputPath === STDIO_PATH && out.json) throw new UsageError('OUTPUT - and --json both write to standard output; drop one of them');
  const threads = checkThreads(numberFlag(values, 'threads', isPositiveInteger, 'a positive integer'));
  const chunkMb = numberFlag(values, 'chunk-mb', (n) => n > 0, 'a positive number of MiB');
  const allowNonFinite = values['allow-non-finite'] === true;
  const t0 = performance.now();

  await refuseSameFile(inputPath, outputPath);
  const input = await whileOpening(inputPath, () => Hw4Input.open(inputPath));
  try {
    const { shape } = input;
    // Open the output before any compute, so a missing output folder fails at once.
    const writer = await whileOpening(outputPath, () => openOutput(outputPath));
    // Started now, so their threads come up while the GPU starts.
    const statsWorkers = StatsWorkers.forRun();
    const chunkBatches = input.batchesPerChunk({ chunkBytes: chunkMb ? chunkMb * 2 ** 20 : chunkBytesFor() });
    // Reading starts before the GPU does: the first chunks are read, and their statistics computed, while Dawn finds
    // the adapter, creates the device and compiles the rung's pipelines. The runners are sized to these chunks; one
    // that takes fewer batches per run computes a chunk in several runs (streamChunks).
    // Shared memory where worker threads read the chunks: the statistics workers, or a CPU rung named with --impl.
    const pool = new ChunkPool(statsWorkers !== undefined || chosen?.kind === 'cpu');
    const statsOf = statsWorkers?.statsOf;
    const early = readEarly(input.chunks({ batchesPerChunk: chunkBatches, allowNonFinite, pool, stats: true, ...(statsOf ? { statsOf } : {}) }));
    try {
      const tOpen = performance.now();
      const env = await makeEnv({ gpu: chosen === undefined || chosen.kind === 'gpu', threads });
      const tEnv = performance.now();
      const rung = chosen ?? fastestRung(shape, env);
      const allowed = canRun(rung, shape, env);
      if (allowed !== true) throw new UsageError(`rung ${rung.id} cannot run ${formatShape(shape)} here: ${allowed}`);
      const runners = new Runners(env, shape, { maxBatchesPerRun: chunkBatches });
      const policy: AccuracyPolicy = {
        env,
        chosen: rung,
        named: chosen !== undefined,
        allowInaccurate: values['allow-inaccurate'] === true,
        tolerance: DEFAULT_TOLERANCE,
        accurate: resolveRung('cpu'),
        // A default rung of f16 range hands the chunks beyond it to the fastest rung without that limit.
        ...(chosen === undefined && rung.reducedRange !== undefined ? { fullRange: chooseRung(shape, env, IMPLEMENTATIONS, undefined, { fullRange: true }).rung } : {}),
      };
      const progress = Progress.forStderr(shape.B, 'batches', out.quiet, inputBatchBytes(shape));
      let result: StreamResult;
      let tSetup: number;
      try {
        await runners.get(rung);
        tSetup = performance.now();
        result = await streamThrough({ policy, runners, chunks: early.chunks, pool, writer, shape, progress, out, allowNonFinite });
      } finally {
        progress.finish();
        await runners.dispose();
      }
      const tCommit = performance.now();
      checkParentAlive();
      await writer.commit();
      const commitMs = performance.now() - tCommit;
      if (chosen === undefined && !env.gpu && env.gpuUnavailableReason?.includes('FA_GPU') !== true) out.info(`hw4-cli: note: no GPU here (${env.gpuUnavailableReason ?? 'unknown reason'})`);
      const reading = { readMs: input.readMs, statsMs: input.statsMs, statsOnWorkers: statsWorkers !== undefined };
      const setupParts = { openMs: tOpen - t0, envMs: tEnv - tOpen, prepareMs: tSetup - tEnv };
      report(out, rung, env, shape, inputPath, outputPath, result, { startMs: t0, totalMs: performance.now() - t0, setupMs: tSetup - t0, setupParts, commitMs, ...reading });
      return EXIT.ok;
    } catch (error) {
      await writer.abort();
      throw error;
    } finally {
      await early.stop();
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

interface StreamResult {
  stream: StreamReport;
  /** Batches computed by each rung, in first-use order. */
  batchesByRung: Map<string, number>;
  notes: string[];
}

interface StreamJob {
  policy: AccuracyPolicy;
  runners: Runners;
  chunks: AsyncGenerator<InputChunk>;
  pool: ChunkPool;
  writer: OutputWriter;
  shape: Shape;
  progress: Progress;
  out: Reporter;
  allowNonFinite: boolean;
}

/** What the CLI decided about a chunk before computing it. */
interface ChunkPlan {
  rung: Rung;
  risk: Fp32Risk;
  nonFinite: boolean;
}

/**
 * The CLI's stages of the chunk loop (`streamChunks` in @fa/core): picks each chunk's rung for accuracy, zeroes
 * non-finite input when allowed, then checks, masks and writes each chunk's output in order.
 */
async function streamThrough(job: StreamJob): Promise<StreamResult> {
  const { shape } = job;
  const plans = new Map<InputChunk, ChunkPlan>();
  const result: Omit<StreamResult, 'stream'> = { batchesByRung: new Map(), notes: [] };
  const stream = await streamChunks(job.chunks, shape, {
    sharedOutput: job.pool.shared,
    runnerFor: (chunk) => {
      const stats = chunk.stats ?? [];
      const risk = fp32Risk(stats, shape);
      const choice = chooseForAccuracy(job.policy, risk);
      if (choice.note !== undefined && !result.notes.includes(choice.note)) {
        result.notes.push(choice.note);
        job.out.info(choice.note);
      }
      plans.set(chunk, { rung: choice.rung, risk, nonFinite: job.allowNonFinite && hasNonFinite(stats) });
      return job.runners.get(choice.rung);
    },
    prepare: (chunk) => {
      if (plans.get(chunk)?.nonFinite === true) zeroNonFinite(chunk.data);
    },
    release: (chunk) => {
      job.pool.give(chunk.data);
    },
    deliver: async (chunk, O) => {
      const plan = plans.get(chunk) as ChunkPlan;
      plans.delete(chunk);
      checkFinite(plan.rung, O, chunk.firstBatch, shape, plan.risk);
      if (plan.nonFinite) maskNonFiniteOutput(O, chunk.stats ?? [], shape);
      result.batchesByRung.set(plan.rung.id, (result.batchesByRung.get(plan.rung.id) ?? 0) + chunk.batches);
      await job.writer.write(O);
      job.progress.update(chunk.firstBatch + chunk.batches);
    },
  });
  return { ...result, stream };
}

interface WholeTimes {
  /** From the start of this process to the start of the command: Node, then loading hw4-cli. */
  startMs: number;
  totalMs: number;
  setupMs: number;
  /** The parts of setup: opening the files, starting the GPU (or not), preparing the first rung. */
  setupParts: { openMs: number; envMs: number; prepareMs: number };
  commitMs: number;
  /** Reading the file (threads of the file system, overlapping everything else). */
  readMs: number;
  /** Input statistics (on worker threads, or on this thread between the other stages). */
  statsMs: number;
  statsOnWorkers: boolean;
}

function report(
  out: Reporter,
  chosen: Rung,
  env: RunEnv,
  shape: Shape,
  inputPath: string,
  outputPath: string,
  result: StreamResult,
  whole: WholeTimes,
): void {
  const { stream } = result;
  // The rung that computed every batch, or the chosen one when batches were split between rungs.
  const used = [...result.batchesByRung.keys()];
  const rung = used.length === 1 && used[0] !== undefined ? resolveRung(used[0]) : chosen;
  const inputBusy = whole.readMs + whole.statsMs;
  const busySum = inputBusy + stream.busy.compute + stream.busy.output;
  const overlapMs = Math.max(0, busySum - stream.wallMs);
  const gflops = attentionFlops(shape) / (stream.busy.compute / 1000) / 1e9;
  const adapter = rung.kind === 'gpu' && env.gpu ? adapterName(env.gpu.report) : undefined;
  const path = (p: string): string => (p === STDIO_PATH ? p : resolve(p));
  const s = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : ms / 1000);
  const gpuTimes = gpuStartTimes();
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
      chunks: stream.chunks,
      seconds: {
        start: s(whole.startMs),
        total: s(whole.totalMs),
        setup: s(whole.setupMs),
        setupParts: {
          open: s(whole.setupParts.openMs),
          gpuLoad: s(gpuTimes?.loadMs),
          gpuAdapter: s(gpuTimes?.adapterMs),
          gpuDevice: s(gpuTimes?.deviceMs),
          env: s(whole.setupParts.envMs),
          prepare: s(whole.setupParts.prepareMs),
        },
        stream: s(stream.wallMs),
        input: s(inputBusy),
        read: s(whole.readMs),
        stats: s(whole.statsMs),
        compute: s(stream.busy.compute),
        upload: s(stream.uploadMs),
        gpu: s(stream.gpuMs),
        readback: s(stream.readbackMs),
        output: s(stream.busy.output),
        commit: s(whole.commitMs),
        overlap: s(overlapMs),
        waited: { input: s(stream.waited.input), compute: s(stream.waited.compute), output: s(stream.busy.output) },
      },
      gflopsPerSecond: gflops,
    });
  }
  const split = used.length > 1 ? ` (${used.map((id) => `${result.batchesByRung.get(id) ?? 0} batches on ${id}`).join(', ')})` : '';
  out.info(`hw4-cli: ${rung.id} (rung ${rung.index}, ${rung.kind}) on ${formatShape(shape)}${adapter ? `, ${adapter}` : ''}${split}`);
  const parts = (entries: [string, number | undefined][]): string =>
    entries.filter((e): e is [string, number] => e[1] !== undefined).map(([name, ms]) => `${name} ${seconds(ms)}`).join(', ');
  const waited = (ms: number): string => seconds(ms);
  out.info(
    textTable(
      ['time', 'seconds', 'waited on', ''],
      [
        ['start', seconds(whole.startMs), '', 'Node and hw4-cli loading, before the command (not in total)'],
        ['total', seconds(whole.totalMs), '', ''],
        ['setup', seconds(whole.setupMs), '', setupDetail(whole.setupParts, gpuTimes)],
        ['stream', seconds(stream.wallMs), '', `${stream.chunks} chunk${stream.chunks === 1 ? '' : 's'}; the three stages below run side by side: ${seconds(overlapMs)} of their busy time overlapped`],
        ['  input', seconds(inputBusy), waited(stream.waited.input), `reading ${seconds(whole.readMs)}, statistics ${seconds(whole.statsMs)}${whole.statsOnWorkers ? ' on worker threads' : ''}`],
        ['  compute', seconds(stream.busy.compute), waited(stream.waited.compute), `${parts([['upload', stream.uploadMs], ['GPU', stream.gpuMs], ['readback', stream.readbackMs]])}${stream.uploadMs === undefined ? '' : '; '}${gflops.toFixed(2)} GFLOP/s`],
        ['  output', seconds(stream.busy.output), waited(stream.busy.output), outputPath === STDIO_PATH ? 'checking, writing to standard output' : 'checking, writing'],
        ['commit', seconds(whole.commitMs), '', outputPath === STDIO_PATH ? '' : 'renaming into place'],
      ],
    ),
  );
}

function setupDetail(parts: WholeTimes['setupParts'], gpu: GpuStartTimes | undefined): string {
  const start = gpu ? `Dawn ${seconds(gpu.loadMs)}, adapter ${seconds(gpu.adapterMs)}, device ${seconds(gpu.deviceMs)}` : `no GPU ${seconds(parts.envMs)}`;
  return `files ${seconds(parts.openMs)}, ${start}, pipelines and buffers ${seconds(parts.prepareMs)}`;
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
