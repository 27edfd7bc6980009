/**
 * Warm-up by keeping the GPU busy, not by a count of rounds. A GPU's clock governor lowers the SM clock while the GPU
 * idles and raises it only under sustained load: on the H100 the SM clock sat at 345 MHz (against 1980) through rounds
 * timed after a single warm-up round, and those rounds ran up to 5× slower (docs/sdpa.md, "Two speeds"). Rounds of a
 * few short dispatches each, with a readback between them, leave the GPU idle most of the time, so the warm-up submits
 * bursts of about BURST_MS of work back to back for warmUpMs() of wall time.
 */

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

/**
 * Submits bursts of `encodeOne` (about BURST_MS of GPU work each, from `msPerDispatch`, one measured round's median)
 * until warmUpMs() have passed, waiting for each burst before the next.
 */
export async function keepBusy(device: GPUDevice, encodeOne: (encoder: GPUCommandEncoder) => void, msPerDispatch: number): Promise<void> {
  const burst = Math.min(5000, Math.max(1, Math.ceil(BURST_MS / Math.max(msPerDispatch, 1e-3))));
  const until = performance.now() + warmUpMs();
  while (performance.now() < until) {
    const encoder = device.createCommandEncoder({ label: 'warm-up' });
    for (let n = 0; n < burst; n++) encodeOne(encoder);
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  }
}
