/**
 * A progress bar on stderr for long work: only on a terminal, only when not --quiet, and only once the work has
 * run for two seconds (short runs print nothing extra).
 */
const SHOW_AFTER_MS = 2000;
const REDRAW_MS = 100;

export class Progress {
  private readonly start = performance.now();
  private lastDraw = 0;
  private shown = false;

  constructor(
    private readonly total: number,
    private readonly unit: string,
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  /** On stderr when it is a terminal (also when a parent process filters it for us: FA_STDERR_TTY=1). */
  static forStderr(total: number, unit: string, quiet: boolean): Progress {
    return new Progress(total, unit, !quiet && (process.stderr.isTTY || process.env.FA_STDERR_TTY === '1'));
  }

  update(done: number): void {
    if (!this.enabled) return;
    const now = performance.now();
    const elapsed = now - this.start;
    if (elapsed < SHOW_AFTER_MS || (now - this.lastDraw < REDRAW_MS && done < this.total)) return;
    this.lastDraw = now;
    this.shown = true;
    const fraction = this.total === 0 ? 1 : done / this.total;
    const width = 30;
    const filled = Math.round(fraction * width);
    const left = fraction > 0 ? (elapsed / fraction - elapsed) / 1000 : Number.NaN;
    const eta = Number.isFinite(left) ? `, ~${left.toFixed(0)} s left` : '';
    this.stream.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
        `${done}/${this.total} ${this.unit}, ${(elapsed / 1000).toFixed(1)} s${eta}\x1b[K`,
    );
  }

  finish(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
  }
}
