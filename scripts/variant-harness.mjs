// What scripts/matrix-variants.mjs and scripts/microtiles-variants.mjs share: random ±3 input, one timed compute pass
// per run with the output read back, and a float64 check of sampled rows. Both scripts run from bundle/hw4-cli and
// import this file from the repository (../../scripts), so only they need copying into the bundle.

/** A device with these features and the adapter's own limits on workgroup memory and buffer sizes. */
export function deviceWithAdapterLimits(adapter, requiredFeatures) {
  const { maxComputeWorkgroupStorageSize, maxStorageBufferBindingSize, maxBufferSize } = adapter.limits;
  return adapter.requestDevice({
    requiredFeatures,
    requiredLimits: { maxComputeWorkgroupStorageSize, maxStorageBufferBindingSize, maxBufferSize },
  });
}

/** Uploads B batches of Q, K, V (N × d each) of uniform ±3 values that repeat every 2^20; `at(x)` is value x. */
export function uploadRandomInput(device, { GPUBufferUsage }, B, N, d) {
  const chunk = new Float32Array(1 << 20).map(() => Math.random() * 6 - 3);
  const bytes = B * 3 * N * d * 4;
  const qkv = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  for (let offset = 0; offset < bytes; offset += chunk.byteLength) {
    device.queue.writeBuffer(qkv, offset, chunk, 0, Math.min(chunk.length, (bytes - offset) / 4));
  }
  return { qkv, at: (x) => chunk[x % chunk.length] };
}

/** A dispatch of `workgroups` over a 2-D grid when it passes 65535 in x. */
export const grid = (workgroups) => [Math.min(workgroups, 65535), Math.ceil(workgroups / 65535)];

/**
 * Runs `dispatches` ([pipeline, bind group, workgroups] in order) in one compute pass, `runs` times, and reads O back:
 * the best time of the runs after the first (a warm-up), in ms, and the output.
 */
export async function timePasses(device, { GPUBufferUsage, GPUMapMode }, dispatches, O, runs = 4) {
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * runs });
  const resolved = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readable = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const outRead = device.createBuffer({ size: O.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  for (let k = 0; k < runs; k++) {
    const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * k, endOfPassWriteIndex: 2 * k + 1 } });
    for (const [pipeline, group, workgroups] of dispatches) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(...grid(workgroups));
    }
    pass.end();
  }
  encoder.resolveQuerySet(querySet, 0, 2 * runs, resolved, 0);
  encoder.copyBufferToBuffer(resolved, 0, readable, 0, 16 * runs);
  encoder.copyBufferToBuffer(O, 0, outRead, 0, O.size);
  device.queue.submit([encoder.finish()]);
  await readable.mapAsync(GPUMapMode.READ);
  const stamps = new BigUint64Array(readable.getMappedRange().slice(0));
  readable.unmap();
  await outRead.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(outRead.getMappedRange().slice(0));
  const best = Math.min(...Array.from({ length: runs - 1 }, (_, k) => Number(stamps[2 * k + 3] - stamps[2 * k + 2]) / 1e6));
  return { best, out };
}

/** Max abs error of rows 0, 1, 17, 31, 63, 64, N/2, 3N/4 and N − 1 of the first and last batch against float64. */
export function maxErrorOnSampledRows(out, at, B, N, d) {
  let worst = 0;
  for (const b of new Set([0, B - 1])) {
    for (const row of new Set([0, 1, 17, 31, 63, 64, N >> 1, (3 * N) >> 2, N - 1])) {
      if (row >= N) continue;
      const base = b * 3 * N * d;
      const p = new Float64Array(N);
      let max = -Infinity;
      for (let k = 0; k < N; k++) {
        let s = 0;
        for (let x = 0; x < d; x++) s += at(base + row * d + x) * at(base + (N + k) * d + x);
        p[k] = s / Math.sqrt(d);
        max = Math.max(max, p[k]);
      }
      let sum = 0;
      for (let k = 0; k < N; k++) sum += (p[k] = Math.exp(p[k] - max));
      for (let x = 0; x < d; x++) {
        let o = 0;
        for (let k = 0; k < N; k++) o += p[k] * at(base + (2 * N + k) * d + x);
        worst = Math.max(worst, Math.abs(o / sum - out[(b * N + row) * d + x]));
      }
    }
  }
  return worst;
}
