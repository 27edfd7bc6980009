/**
 * Warm-up by keeping the GPU busy, not by a count of rounds. A GPU's clock governor lowers the SM clock while the GPU
 * idles and raises it only under sustained load: on the H100 the SM clock sat at 345 MHz (against 1980) through rounds
 * timed after a single warm-up round, and those rounds ran up to 5× slower (docs/sdpa.md, "Two speeds"). Rounds of a
 * few short dispatches each, with a readback between them, leave the GPU idle most of the time, so the warm-up submits
 * bursts of about BURST_MS of work back to back for warmUpMs() of wall time.
 */

import { median } from './measure.js';

/** GPU work per warm-up submission, in milliseconds. */
const BURST_MS = 20;

/** Milliseconds of warm-up before a case is timed: 500, or FA_BENCH_WARM_MS (0: none beyond one round). */
export function warmUpMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.FA_BENCH_WARM_MS;
  if (text === undefined || text === '') return 500;
  const ms = Number(text);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`FA_BENCH_WARM_MS is ${text}; give milliseconds ≥ 0`);
  return ms;
}

/** Most milliseconds the warm-up goes on past warmUpMs() while the GPU is still getting faster. */
const SETTLE_MAX_MS = 3000;
/** A burst counts as faster than the one before when it takes less than this fraction of its time. */
const SETTLED = 0.99;

/**
 * Submits bursts of `encodeOne` (about BURST_MS of GPU work each, from `msPerDispatch`, one measured round's median)
 * until warmUpMs() have passed and the bursts stop getting faster (at most SETTLE_MAX_MS more). One burst always waits
 * in the queue behind the one running, so that the GPU never idles while the next is encoded: with a gap per burst
 * the governor lowered the H100's SM clock for seconds at a time through bursts of small kernels, and a clock
 * rising from idle took about a second to reach 1980 MHz (docs/sdpa.md, "The bench and the GPU's clock").
 */
export async function keepBusy(device: GPUDevice, encodeOne: (encoder: GPUCommandEncoder) => void, msPerDispatch: number): Promise<void> {
  const warmMs = warmUpMs();
  if (warmMs === 0) return;
  const burst = Math.min(5000, Math.max(1, Math.ceil(BURST_MS / Math.max(msPerDispatch, 1e-3))));
  const submitBurst = (): Promise<undefined> => {
    const encoder = device.createCommandEncoder({ label: 'warm-up' });
    for (let n = 0; n < burst; n++) encodeOne(encoder);
    device.queue.submit([encoder.finish()]);
    return device.queue.onSubmittedWorkDone();
  };
  const until = performance.now() + warmMs;
  let running = submitBurst();
  let previous = Infinity;
  let finished = performance.now();
  for (;;) {
    const queued = submitBurst();
    await running;
    const now = performance.now();
    const took = now - finished;
    finished = now;
    running = queued;
    const settled = took >= previous * SETTLED;
    previous = took;
    if (now >= until && (settled || now >= until + SETTLE_MAX_MS)) break;
  }
  await running;
}

/**
 * Runs `rounds` rounds made by `submitRound(k)` with one always queued behind the one running (as keepBusy does), and
 * returns each round's result from `readRound(k)`, called once round k is done. Round k may reuse round k − 2's
 * resources: those are read before round k is submitted.
 */
export async function queuedRounds<T>(device: GPUDevice, rounds: number, submitRound: (k: number) => void, readRound: (k: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  const done: Promise<undefined>[] = [];
  for (let k = 0; k < rounds; k++) {
    if (k >= 2) {
      await done[k - 2];
      results.push(await readRound(k - 2));
    }
    submitRound(k);
    done.push(device.queue.onSubmittedWorkDone());
  }
  for (let k = Math.max(0, rounds - 2); k < rounds; k++) {
    await done[k];
    results.push(await readRound(k));
  }
  return results;
}

/** Most timings of one case while each is still faster than the one before. */
const SETTLE_TIMINGS = 4;

/**
 * Times with `time` again while a timing's median is still faster than the one before (by more than SETTLED allows),
 * at most SETTLE_TIMINGS times, and returns the last. A warm-up of a count of kernels sized by a first run that the
 * idle clock made slow can end before the clock is up: 13600×128×32 ran 2.90 ms as the first case of a process and
 * 0.93 ms in the next process (H100, 2026-11-28).
 */
export async function settledTimings(time: () => Promise<number[] | undefined>): Promise<number[] | undefined> {
  let samples = await time();
  for (let k = 1; samples && k < SETTLE_TIMINGS; k++) {
    const again = await time();
    if (!again) return samples;
    const settled = median(again) >= median(samples) * SETTLED;
    samples = again;
    if (settled) break;
  }
  return samples;
}
