/**
 * A progress bar on stderr for long work: only on a terminal, only when not --quiet, and only once the work has
 * run for two seconds (short runs print nothing extra). It shows units done, throughput (units per second, and MB/s
 * of input when the bytes per unit are known) and the time left at that rate.
 */
const SHOW_AFTER_MS = 2000;
const REDRAW_MS = 100;
const WIDTH = 30;

export interface ProgressOptions {
  /** Input bytes per unit, for a MB/s figure (e.g. 12·N·d per batch of the hw4 format). */
  bytesPerUnit?: number;
  /** Where the bar goes (stderr by default). */
  stream?: Pick<NodeJS.WriteStream, 'write'>;
  /** A clock in milliseconds (performance.now by default); tests pass their own. */
  now?: () => number;
}

export class Progress {
  private readonly now: () => number;
  private readonly stream: Pick<NodeJS.WriteStream, 'write'>;
  private readonly start: number;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private shown = false;

  constructor(
    private readonly total: number,
    private readonly unit: string,
    private readonly enabled: boolean,
    private readonly options: ProgressOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.stream = options.stream ?? process.stderr;
    this.start = this.now();
  }

  /** On stderr when it is a terminal (also when a parent process filters it for us: FA_STDERR_TTY=1). */
  static forStderr(total: number, unit: string, quiet: boolean, bytesPerUnit?: number): Progress {
    const enabled = !quiet && (process.stderr.isTTY || process.env.FA_STDERR_TTY === '1');
    return new Progress(total, unit, enabled, bytesPerUnit === undefined ? {} : { bytesPerUnit });
  }

  update(done: number): void {
    if (!this.enabled) return;
    const now = this.now();
    const elapsed = now - this.start;
    if (elapsed < SHOW_AFTER_MS || (now - this.lastDraw < REDRAW_MS && done < this.total)) return;
    this.lastDraw = now;
    this.shown = true;
    this.stream.write(`\r${progressLine(done, this.total, this.unit, elapsed, this.options.bytesPerUnit)}\x1b[K`);
  }

  finish(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
  }
}

/** One line of the bar: `[####....]  40% 400/1000 batches, 2.0 s, 200 batches/s, 19.7 MB/s, ~3 s left`. */
export function progressLine(done: number, total: number, unit: string, elapsedMs: number, bytesPerUnit?: number): string {
  const fraction = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(fraction * WIDTH);
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? done / seconds : 0;
  const parts = [`${done}/${total} ${unit}`, `${seconds.toFixed(1)} s`];
  if (rate > 0) {
    parts.push(`${formatRate(rate)} ${unit.split(' ')[0] ?? unit}/s`);
    if (bytesPerUnit !== undefined) parts.push(`${((rate * bytesPerUnit) / 1e6).toFixed(1)} MB/s`);
    if (done < total) parts.push(`~${Math.ceil((total - done) / rate)} s left`);
  }
  return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${parts.join(', ')}`;
}

function formatRate(rate: number): string {
  return rate >= 100 ? rate.toFixed(0) : rate.toPrecision(3);
}
