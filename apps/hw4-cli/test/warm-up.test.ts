/**
 * The bench keeps the GPU busy: keepBusy's bursts and queuedRounds' rounds each go into the queue while the one before
 * is still running, so the GPU never waits for the CPU between them (the GPU's clock governor lowers the clock when
 * it does: docs/sdpa.md, "The bench and the GPU's clock"). A fake queue runs the submissions in order, one at a time,
 * each taking `workMs`, and logs what happened when.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keepBusy, queuedRounds, settledTimings } from '../src/bench/warm-up.js';

interface FakeGpu {
  device: GPUDevice;
  log: string[];
  finished(): number;
}

function fakeGpu(workMs: number): FakeGpu {
  const log: string[] = [];
  let submitted = 0;
  let finished = 0;
  let busyUntil = performance.now();
  const done: { index: number; resolve: () => void }[] = [];
  const finishOne = (): void => {
    finished++;
    log.push(`done ${finished - 1}`);
    for (const waiter of done.filter((w) => w.index < finished)) waiter.resolve();
  };
  const device = {
    createCommandEncoder: () => ({ finish: () => ({}) }),
    queue: {
      submit: () => {
        log.push(`submit ${submitted}`);
        submitted++;
        busyUntil = Math.max(busyUntil, performance.now()) + workMs;
        setTimeout(finishOne, busyUntil - performance.now());
      },
      onSubmittedWorkDone: () => {
        const index = submitted - 1;
        return new Promise<undefined>((resolve) => {
          if (index < finished) resolve(undefined);
          else done.push({ index, resolve: () => { resolve(undefined); } });
        });
      },
    },
  } as unknown as GPUDevice;
  return { device, log, finished: () => finished };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('queuedRounds', () => {
  it('submits round k + 1 before it reads round k, and returns the rounds in order', async () => {
    const gpu = fakeGpu(5);
    let submitted = 0;
    const results = await queuedRounds(
      gpu.device,
      5,
      (k) => {
        expect(k).toBe(submitted);
        submitted++;
        gpu.device.queue.submit([]);
      },
      (k) => {
        gpu.log.push(`read ${k}`);
        // While round k is read, the round after it is in the queue (all but the last).
        if (k < 4) expect(submitted).toBeGreaterThan(k + 1);
        expect(gpu.finished()).toBeGreaterThan(k);
        return Promise.resolve(k * 10);
      },
    );
    expect(results).toEqual([0, 10, 20, 30, 40]);
    // Round k's resources (timers[k % 2]) are read before round k + 2 reuses them.
    for (let k = 0; k + 2 < 5; k++) expect(gpu.log.indexOf(`read ${k}`)).toBeLessThan(gpu.log.indexOf(`submit ${k + 2}`));
  });

  it('one round: submitted, then read', async () => {
    const gpu = fakeGpu(1);
    const results = await queuedRounds(gpu.device, 1, () => { gpu.device.queue.submit([]); }, (k) => Promise.resolve(k + 1));
    expect(results).toEqual([1]);
  });
});

describe('keepBusy', () => {
  it('keeps a burst queued behind the running one until the warm-up is over, then waits for the last', async () => {
    vi.stubEnv('FA_BENCH_WARM_MS', '60');
    const gpu = fakeGpu(10);
    let encoded = 0;
    const start = performance.now();
    await keepBusy(gpu.device, () => encoded++, 1);
    const elapsed = performance.now() - start;
    const submits = gpu.log.filter((line) => line.startsWith('submit')).length;
    expect(elapsed).toBeGreaterThanOrEqual(59);
    expect(elapsed).toBeLessThan(60 + 3000 + 500);   // the warm-up, at most SETTLE_MAX_MS more, and slack
    // Every burst finished before keepBusy returned, and each one but the last was followed by a submission before
    // it finished: the queue never ran dry.
    expect(gpu.finished()).toBe(submits);
    for (let n = 0; n + 1 < submits; n++) expect(gpu.log.indexOf(`submit ${n + 1}`)).toBeLessThan(gpu.log.indexOf(`done ${n}`));
    // Bursts of about 20 ms of dispatches at 1 ms each.
    expect(encoded).toBe(20 * submits);
  });

  it('does nothing with FA_BENCH_WARM_MS=0', async () => {
    vi.stubEnv('FA_BENCH_WARM_MS', '0');
    const gpu = fakeGpu(10);
    await keepBusy(gpu.device, () => undefined, 1);
    expect(gpu.log).toEqual([]);
  });
});

describe('settledTimings', () => {
  /** A timing function that returns the given medians in turn, and how many times it was called. */
  const timings = (medians: number[]): { time: () => Promise<number[]>; calls: () => number } => {
    let k = 0;
    return { time: () => Promise.resolve([medians[Math.min(k++, medians.length - 1)] as number]), calls: () => k };
  };

  it('times again while the clock is still rising, and returns the first timing that is not faster', async () => {
    const t = timings([2.9, 1.2, 0.93, 0.929, 0.5]);
    expect(await settledTimings(t.time)).toEqual([0.929]);
    expect(t.calls()).toBe(4);
  });

  it('times twice where the first timing was already settled, at most four times where it keeps falling', async () => {
    const steady = timings([1, 1]);
    expect(await settledTimings(steady.time)).toEqual([1]);
    expect(steady.calls()).toBe(2);
    const falling = timings([8, 4, 2, 1, 0.5]);
    expect(await settledTimings(falling.time)).toEqual([1]);
    expect(falling.calls()).toBe(4);
  });
});
