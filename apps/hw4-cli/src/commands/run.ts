/**
 * hw4-cli [--impl ID] INPUT OUTPUT: the assignment's program. Streams the input in chunks of whole batches through
 * a prepared rung into an atomically written output, reading the next chunk while the current one computes.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { adapterName, canRun, type Runner, type Rung, type RunEnv } from '@fa/core';
import {
  AtomicFileWriter,
  attentionFlops,
  firstNonFinite,
  formatShape,
  Hw4Input,
  Hw4IoError,
  matrixFloats,
  type InputChunk,
  type Shape,
} from '@fa/io';
import { fastestRung, findRung, LADDER } from '@fa/ladder';
import { expectPositionals, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { makeEnv } from '../env.js';
import { ExitError, EXIT, UsageError } from '../exit-codes.js';
import { reporter, type Reporter } from '../output.js';
import { Progress } from '../progress.js';
import { seconds, textTable } from '../table.js';

export const RUN_OPTIONS = {
  impl: { type: 'string', short: 'i' },
  threads: { type: 'string' },
  'chunk-mb': { type: 'string' },
  'allow-non-finite': { type: 'boolean' },
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
  const implId = stringFlag(values, 'impl');
  const chosen = implId === undefined ? undefined : resolveRung(implId);
  const threads = numberFlag(values, 'threads', isPositiveInteger, 'a positive integer');
  const chunkMb = numberFlag(values, 'chunk-mb', (n) => n > 0, 'a positive number of MiB');
  const t0 = performance.now();

  await refuseSameFile(inputPath, outputPath);
  const input = await Hw4Input.open(inputPath);
  try {
    const { shape } = input;
    // Open the output before any compute, so a missing output folder fails at once.
    const writer = await AtomicFileWriter.open(outputPath);
    try {
      const env = await makeEnv({ gpu: chosen === undefined || chosen.kind === 'gpu', threads });
      const rung = chosen ?? fastestRung(shape, env);
      const allowed = canRun(rung, shape, env);
      if (allowed !== true) throw new UsageError(`rung ${rung.id} cannot run ${formatShape(shape)} here: ${allowed}`);
      const runner = await rung.prepare(env, shape);
      const tSetup = performance.now();
      const progress = Progress.forStderr(shape.B, 'batches', out.quiet);
      let times: StreamTimes;
      try {
        const perChunk = Math.min(runner.maxBatchesPerRun, input.batchesPerChunk(chunkMb ? { chunkBytes: chunkMb * 2 ** 20 } : {}));
        const chunks = input.chunks({
          batchesPerChunk: perChunk,
          allowNonFinite: values['allow-non-finite'] === true,
          shared: runner.prefersSharedInput === true,
        });
        times = await streamThrough(rung, runner, chunks, writer, shape, progress);
      } finally {
        progress.finish();
        await runner.dispose();
      }
      const tCommit = performance.now();
      await writer.commit();
      times.outputMs += performance.now() - tCommit;
      report(out, rung, env, shape, inputPath, outputPath, { ...times, totalMs: performance.now() - t0, setupMs: tSetup - t0 });
      return EXIT.ok;
    } catch (error) {
      await writer.abort();
      throw error;
    }
  } finally {
    await input.close();
  }
}

interface StreamTimes {
  inputMs: number;
  computeMs: number;
  outputMs: number;
  gpuMs?: number;
}

/** Reads chunk k+1 while chunk k computes; checks and writes each chunk's output. */
async function streamThrough(
  rung: Rung,
  runner: Runner,
  chunks: AsyncGenerator<InputChunk>,
  writer: AtomicFileWriter,
  shape: Shape,
  progress: Progress,
): Promise<StreamTimes> {
  const size = matrixFloats(shape);
  const times: StreamTimes = { inputMs: 0, computeMs: 0, outputMs: 0 };
  let next = chunks.next();
  try {
    for (;;) {
      let t = performance.now();
      const item = await next;
      times.inputMs += performance.now() - t;
      if (item.done) return times;
      const chunk = item.value;
      next = chunks.next();
      next.catch(() => undefined);
      t = performance.now();
      const O = new Float32Array(chunk.batches * size);
      const stats = await runner.run(chunk.data, chunk.batches, O);
      if (stats.gpuMs !== undefined) times.gpuMs = (times.gpuMs ?? 0) + stats.gpuMs;
      times.computeMs += performance.now() - t;
      checkFinite(rung, O, chunk.firstBatch, shape);
      t = performance.now();
      await writer.write(O);
      times.outputMs += performance.now() - t;
      progress.update(chunk.firstBatch + chunk.batches);
    }
  } catch (error) {
    await next.catch(() => undefined);
    await chunks.return(undefined).catch(() => undefined);
    throw error;
  }
}

function report(
  out: Reporter,
  rung: Rung,
  env: RunEnv,
  shape: Shape,
  inputPath: string,
  outputPath: string,
  times: StreamTimes & { totalMs: number; setupMs: number },
): void {
  const gflops = attentionFlops(shape) / (times.computeMs / 1000) / 1e9;
  const adapter = rung.kind === 'gpu' && env.gpu ? adapterName(env.gpu.report) : undefined;
  if (out.json) {
    out.result({
      impl: rung.id,
      index: rung.index,
      kind: rung.kind,
      shape,
      input: resolve(inputPath),
      output: resolve(outputPath),
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
  out.info(`hw4-cli: ${rung.id} (rung ${rung.index}, ${rung.kind}) on ${formatShape(shape)}${adapter ? `, ${adapter}` : ''}`);
  const gpu = times.gpuMs === undefined ? '' : `, GPU busy ${seconds(times.gpuMs)}`;
  out.info(
    textTable(
      ['time', 'seconds', ''],
      [
        ['total', seconds(times.totalMs), ''],
        ['setup', seconds(times.setupMs), rung.kind === 'gpu' ? 'device, pipelines, buffers' : 'threads, buffers'],
        ['input', seconds(times.inputMs), 'reading (beyond what overlapped compute)'],
        ['compute', seconds(times.computeMs), `${gflops.toFixed(2)} GFLOP/s${gpu}`],
        ['output', seconds(times.outputMs), 'writing and renaming into place'],
      ],
    ),
  );
}

async function refuseSameFile(inputPath: string, outputPath: string): Promise<void> {
  const [a, b] = await Promise.all([stat(inputPath).catch(() => undefined), stat(outputPath).catch(() => undefined)]);
  if (a && b && a.dev === b.dev && a.ino === b.ino) {
    throw new Hw4IoError(`OUTPUT ${outputPath} is the input file itself; writing it would destroy the input, choose another path`);
  }
}

function checkFinite(rung: Rung, O: Float32Array, firstBatch: number, { N, d }: Shape): void {
  const bad = firstNonFinite(O);
  if (bad < 0) return;
  const batch = firstBatch + Math.floor(bad / (N * d));
  const within = bad % (N * d);
  throw new ExitError(
    `rung ${rung.id} produced a non-finite value at (batch ${batch}, row ${Math.floor(within / d)}, col ${within % d}); no output was written (a bug: please report it with the input)`,
    EXIT.failure,
  );
}
