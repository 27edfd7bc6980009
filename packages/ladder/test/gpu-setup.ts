/**
 * Set up before each test file of the projects whose tests create Dawn devices (vitest.config.ts), and by
 * `conformanceEnv`: how a test process waits on and compiles for the software GPU.
 */

/**
 * While a GPU promise is pending, Dawn (the webgpu package) polls for finished work on every turn of the event loop
 * through `setImmediate`, so a test waiting on the software GPU keeps one core busy for as long as Mesa compiles a
 * pipeline on another (seconds to minutes, docs/ci.md). Test files run two at a time (vitest.config.ts), so here the
 * polling waits a millisecond between turns instead: the compilation gets the core. Vitest's own timers are its saved
 * originals, and Node's own modules keep theirs; only code of the test file and the packages it loads see this
 * `setImmediate`.
 */
export function pollEveryMillisecond(): void {
  const marked = globalThis as { faPollEveryMillisecond?: boolean };
  if (marked.faPollEveryMillisecond === true) return;
  marked.faPollEveryMillisecond = true;
  const setTimer = globalThis.setTimeout;
  globalThis.setImmediate = ((callback: (...args: unknown[]) => void, ...args: unknown[]) => setTimer(callback, 1, ...args)) as unknown as typeof setImmediate;
}

/**
 * Mesa's llvmpipe (the software GPU of CI) skips LLVM's optimization passes with GALLIVM_PERF=nopt: the tests' kernels
 * run on tiny shapes, and the `@fa/ladder` GPU files took 201 s instead of 262 s with it (docs/ci.md). Read when the
 * first device is made (in this process, and in the CLI processes the tests start), so set before; a value given by
 * the caller stays.
 */
export function compileWithoutOptimizing(): void {
  process.env.GALLIVM_PERF ??= 'nopt';
}

pollEveryMillisecond();
compileWithoutOptimizing();
