/**
 * The page's worker: the float64 oracle (whole, or sampled rows on large shapes), the CPU rungs, and the plain f16
 * computation that reduced-precision rungs are held to, off the main thread so the page stays responsive.
 */
import { runAll } from '@fa/core';
import { LADDER, plainF16Attention } from '@fa/ladder/browser';
import { attentionOracle, attentionOracleRows } from '@fa/reference';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

async function handle(request: WorkerRequest): Promise<{ reply: WorkerReply; transfer: Transferable[] }> {
  const { input, shape } = request;
  switch (request.type) {
    case 'oracle': {
      const values = request.rows
        ? concat(attentionOracleRows(input, shape, request.rows), shape.d)
        : attentionOracle(input, shape);
      return { reply: { type: 'values', values }, transfer: [values.buffer] };
    }
    case 'plain-f16': {
      const values = plainF16Attention(input, shape);
      return { reply: { type: 'values', values }, transfer: [values.buffer] };
    }
    case 'cpu-rung': {
      const rung = LADDER.find((r) => r.id === request.id);
      if (!rung) throw new Error(`no rung ${request.id}`);
      const runner = await rung.prepare({ threads: 1 }, shape);
      try {
        const start = performance.now();
        const { output } = await runAll(runner, input, shape);
        const ms = performance.now() - start;
        return { reply: { type: 'output', output, ms }, transfer: [output.buffer] };
      } finally {
        await runner.dispose();
      }
    }
  }
}

function concat(rows: readonly Float64Array[], d: number): Float64Array {
  const out = new Float64Array(rows.length * d);
  rows.forEach((row, k) => {
    out.set(row, k * d);
  });
  return out;
}

self.onmessage = (event: MessageEvent<{ id: number; request: WorkerRequest }>) => {
  const { id, request } = event.data;
  handle(request).then(
    ({ reply, transfer }) => {
      self.postMessage({ id, reply }, { transfer });
    },
    (error: unknown) => {
      self.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    },
  );
};
