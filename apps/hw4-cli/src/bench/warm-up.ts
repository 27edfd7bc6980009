/**
 * Warm-up by time, not by count. A GPU's clock governor lowers the SM clock while the GPU idles and raises it only
 * under sustained work: on the H100 the SM clock sat at 345 MHz (against 1980) through rounds timed after a single
 * warm-up round, and those rounds ran up to 5× slower (docs/sdpa.md, "Two speeds"). So every timed case first runs
 * for WARM_UP_MS of wall time.
 */

/** Milliseconds of warm-up before a case is timed: 500, or FA_BENCH_WARM_MS (0: a single round, the old behaviour). */
export function warmUpMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.FA_BENCH_WARM_MS;
  if (text === undefined || text === '') return 500;
  const ms = Number(text);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`FA_BENCH_WARM_MS is ${text}; give milliseconds ≥ 0`);
  return ms;
}

/** Runs `round` at least once, and again until warmUpMs() of wall time have passed. */
export async function warmUp(round: () => Promise<unknown>): Promise<void> {
  const until = performance.now() + warmUpMs();
  do await round();
  while (performance.now() < until);
}
