import { afterAll, describe, expect, it } from 'vitest';
import { chunkStats, generateInput, type Shape } from '@fa/io/node';
import { StatsWorkers } from '../src/stats-workers.js';

const workers = new StatsWorkers(3);
afterAll(() => workers.close());

function sharedCopy(data: Float32Array): Float32Array {
  const copy = new Float32Array(new SharedArrayBuffer(data.byteLength));
  copy.set(data);
  return copy;
}

describe('input statistics on worker threads', () => {
  it('equal those computed on this thread, NaN and Inf included, whatever the split over workers', async () => {
    const shape: Shape = { B: 7, N: 13, d: 6 };
    const data = sharedCopy(generateInput({ shape, seed: 5 }));
    const size = shape.N * shape.d;
    data[3 * 2 * size + 4 * shape.d + 1] = Number.NaN; // Q row 4 of batch 2
    data[3 * 5 * size + 2 * size + 7] = Number.POSITIVE_INFINITY; // V of batch 5
    data[3 * 6 * size + size + 3] = Number.NEGATIVE_INFINITY; // K of batch 6
    for (const batches of [1, 2, 7]) {
      expect(await workers.statsOf(data, batches, shape)).toEqual(chunkStats(data, batches, shape));
    }
    const stats = await workers.statsOf(data, 7, shape);
    expect(stats[2]?.nonFiniteQRows).toEqual([4]);
    expect(stats.map((s) => s.nonFiniteKV)).toEqual([false, false, false, false, false, true, true]);
  });

  it('fall back to this thread for a chunk that is not in shared memory', async () => {
    const shape: Shape = { B: 3, N: 5, d: 4 };
    const data = generateInput({ shape, seed: 2 });
    expect(await workers.statsOf(data, 3, shape)).toEqual(chunkStats(data, 3, shape));
  });
});
