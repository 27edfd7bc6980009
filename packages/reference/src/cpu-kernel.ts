/**
 * The kernel of the `cpu` rung: a block of query rows of one batch against all keys, in float64 accumulation,
 * with K/V visited in tiles of Bc rows and an online softmax (running max m, running sum ℓ) per query row, so each
 * K/V tile is reused from cache by every row of the block.
 *
 * It runs inside worker threads whose source is built from this function's text, so it must stay self-contained:
 * no imports, no references to anything outside its own body.
 */
export function attendRowBlock(
  qkv: Float32Array,
  out: Float32Array,
  N: number,
  d: number,
  batch: number,
  rowStart: number,
  rowEnd: number,
): void {
  const Bc = 64;
  const size = N * d;
  const q0 = batch * 3 * size;
  const k0 = q0 + size;
  const v0 = k0 + size;
  const o0 = batch * size;
  const scale = 1 / Math.sqrt(d);
  const rows = rowEnd - rowStart;
  const m = new Float64Array(rows).fill(Number.NEGATIVE_INFINITY);
  const l = new Float64Array(rows);
  const acc = new Float64Array(rows * d);
  const s = new Float64Array(Bc);
  for (let kv = 0; kv < N; kv += Bc) {
    const cols = Math.min(Bc, N - kv);
    for (let r = 0; r < rows; r++) {
      const qi = q0 + (rowStart + r) * d;
      let tileMax = Number.NEGATIVE_INFINITY;
      for (let c = 0; c < cols; c++) {
        const kj = k0 + (kv + c) * d;
        let dot = 0;
        for (let x = 0; x < d; x++) dot += (qkv[qi + x] as number) * (qkv[kj + x] as number);
        dot *= scale;
        s[c] = dot;
        if (dot > tileMax) tileMax = dot;
      }
      const mOld = m[r] as number;
      const mNew = mOld > tileMax ? mOld : tileMax;
      const alpha = Math.exp(mOld - mNew);
      const a = r * d;
      if (alpha !== 1) for (let x = 0; x < d; x++) acc[a + x] = (acc[a + x] as number) * alpha;
      let lr = (l[r] as number) * alpha;
      for (let c = 0; c < cols; c++) {
        const p = Math.exp((s[c] as number) - mNew);
        lr += p;
        const vj = v0 + (kv + c) * d;
        for (let x = 0; x < d; x++) acc[a + x] = (acc[a + x] as number) + p * (qkv[vj + x] as number);
      }
      l[r] = lr;
      m[r] = mNew;
    }
  }
  for (let r = 0; r < rows; r++) {
    const inv = 1 / (l[r] as number);
    const o = o0 + (rowStart + r) * d;
    for (let x = 0; x < d; x++) out[o + x] = (acc[r * d + x] as number) * inv;
  }
}

/** A job for the worker pool: every (batch, row block) of a chunk, handed out through an atomic counter. */
export interface PoolJob {
  qkv: Float32Array;
  out: Float32Array;
  counter: Int32Array;
  batches: number;
  N: number;
  d: number;
  rowsPerTask: number;
}

/** Worker side: take tasks until none are left, then report. Self-contained like the kernel. */
export function workerLoop(
  port: { on(event: 'message', listener: (job: PoolJob) => void): void; postMessage(message: unknown): void },
  kernel: typeof attendRowBlock,
): void {
  port.on('message', (job) => {
    try {
      const blocks = Math.ceil(job.N / job.rowsPerTask);
      const tasks = job.batches * blocks;
      for (let t = Atomics.add(job.counter, 0, 1); t < tasks; t = Atomics.add(job.counter, 0, 1)) {
        const batch = Math.floor(t / blocks);
        const rowStart = (t % blocks) * job.rowsPerTask;
        kernel(job.qkv, job.out, job.N, job.d, batch, rowStart, Math.min(job.N, rowStart + job.rowsPerTask));
      }
      port.postMessage({ ok: true });
    } catch (error) {
      port.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  });
}
