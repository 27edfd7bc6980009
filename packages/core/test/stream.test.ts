import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matrixFloats, type Shape } from '@fa/io';
import { openOutput } from '@fa/io/node';
import { chunkBytesFor, memoryChunks, runAll, streamChunks, type Runner, type StreamChunk } from '../src/index.js';

const shape: Shape = { B: 11, N: 3, d: 4 };
const size = matrixFloats(shape);

/** Input whose every float is its batch index, so an output can be traced back to its batch. */
function tracedInput(): Float32Array {
  const input = new Float32Array(shape.B * 3 * size);
  for (let b = 0; b < shape.B; b++) input.fill(b, 3 * b * size, 3 * (b + 1) * size);
  return input;
}

/**
 * A runner that writes each batch's index (read from its input) into its O, after a delay that makes later runs
 * finish first if the loop let them; it records how many runs were in flight at once, and can fail on a chosen run.
 */
function fakeRunner(options: { concurrentRuns?: number; maxBatchesPerRun?: number; failOnRun?: number } = {}) {
  const record = { runs: 0, inFlight: 0, mostInFlight: 0 };
  const runner: Runner = {
    maxBatchesPerRun: options.maxBatchesPerRun ?? 3,
    ...(options.concurrentRuns === undefined ? {} : { concurrentRuns: options.concurrentRuns }),
    async run(input, batches, output) {
      const run = record.runs++;
      record.inFlight += 1;
      record.mostInFlight = Math.max(record.mostInFlight, record.inFlight);
      await new Promise((resolve) => setTimeout(resolve, run % 2 === 0 ? 8 : 1));
      record.inFlight -= 1;
      if (run === options.failOnRun) throw new Error(`injected failure in run ${run}`);
      for (let b = 0; b < batches; b++) output.fill(input[3 * b * size] as number, b * size, (b + 1) * size);
      return { gpuMs: 1 };
    },
    dispose: () => Promise.resolve(),
  };
  return { runner, record };
}

describe('streamChunks, the one chunk loop', () => {
  it('delivers every chunk in order, the last partial one too, and keeps at most two runs in flight', async () => {
    const { runner, record } = fakeRunner({ concurrentRuns: 2 });
    const delivered: number[][] = [];
    const released: number[] = [];
    const report = await streamChunks(memoryChunks(tracedInput(), shape, 3), shape, {
      runnerFor: () => runner,
      deliver: (chunk, O) => {
        delivered.push(Array.from({ length: chunk.batches }, (_, b) => O[b * size] as number));
      },
      release: (chunk) => released.push(chunk.firstBatch),
    });
    expect(delivered).toEqual([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10]]);
    expect(released.sort((a, b) => a - b)).toEqual([0, 3, 6, 9]);
    expect(record.mostInFlight).toBe(2);
    expect(report).toMatchObject({ chunks: 4, batches: 11, gpuMs: 4 });
  });

  it('runs one chunk at a time on a runner that allows one run, while output is still delivered in order', async () => {
    const { runner, record } = fakeRunner();
    const { output } = await runAll(runner, tracedInput(), shape);
    expect(record.mostInFlight).toBe(1);
    for (let b = 0; b < shape.B; b++) expect(output[b * size]).toBe(b);
  });

  it('splits a chunk larger than the runner takes into runs it accepts', async () => {
    const { runner, record } = fakeRunner({ maxBatchesPerRun: 2 });
    const delivered: number[] = [];
    await streamChunks(memoryChunks(tracedInput(), shape, 5), shape, {
      runnerFor: () => runner,
      deliver: (chunk, O) => {
        for (let b = 0; b < chunk.batches; b++) delivered.push(O[b * size] as number);
      },
    });
    expect(delivered).toEqual([...Array(shape.B).keys()]);
    expect(record.runs).toBe(7);
  });

  it('reuses a small pool of output buffers instead of one per chunk', async () => {
    const { runner } = fakeRunner({ concurrentRuns: 2, maxBatchesPerRun: 1 });
    const buffers = new Set<ArrayBufferLike>();
    await streamChunks(memoryChunks(tracedInput(), shape, 1), shape, {
      runnerFor: () => runner,
      deliver: (_chunk, O) => {
        buffers.add(O.buffer);
      },
    });
    expect(buffers.size).toBeLessThanOrEqual(3);
  });

  it('a failure mid-run stops the loop: later chunks are not delivered, the source is closed, the error surfaces', async () => {
    const { runner } = fakeRunner({ concurrentRuns: 2, failOnRun: 2 });
    const delivered: number[] = [];
    let closed = false;
    function* source(): Generator<StreamChunk> {
      try {
        yield* memoryChunks(tracedInput(), shape, 2);
      } finally {
        closed = true;
      }
    }
    await expect(
      streamChunks(source(), shape, { runnerFor: () => runner, deliver: (chunk) => void delivered.push(chunk.firstBatch) }),
    ).rejects.toThrow(/injected failure in run 2/);
    expect(delivered).toEqual([0, 2]);
    expect(closed).toBe(true);
  });

  it('a failure mid-run leaves no partial output file and the old output untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fa-stream-'));
    const path = join(dir, 'out.bin');
    writeFileSync(path, 'the old output');
    const { runner } = fakeRunner({ concurrentRuns: 2, failOnRun: 3 });
    const writer = await openOutput(path);
    await expect(
      streamChunks(memoryChunks(tracedInput(), shape, 2), shape, { runnerFor: () => runner, deliver: (_chunk, O) => writer.write(O) })
        .then(() => writer.commit())
        .catch(async (error: unknown) => {
          await writer.abort();
          throw error;
        }),
    ).rejects.toThrow(/injected failure/);
    expect(readFileSync(path, 'utf8')).toBe('the old output');
    expect(readdirSync(dir)).toEqual(['out.bin']);
  });

  it('sizes chunks from a memory budget', () => {
    expect(chunkBytesFor(256 * 2 ** 20)).toBeGreaterThan(16 * 2 ** 20);
    expect(chunkBytesFor(256 * 2 ** 20) * 9).toBeLessThanOrEqual(256 * 2 ** 20);
  });
});
