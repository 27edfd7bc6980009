// The `combine` entry point of the tiled attention kernels (attention-fp32 and attention-matrix), appended to each by
// tiledKernel (tiled-host.ts): it uses tiled-interface.wgsl's Params, bindings (O, params, mask, lse, Opart, ML),
// LOWEST, headTerms and naturalLse, and each kernel's D4V, CW and pack.

// One invocation per vec4 of O: the ranges of its row merged, O = Σ 2^(m_s − M) O_s / Σ 2^(m_s − M) ℓ_s; with sinks,
// the row's sink enters the denominator once, here: + 2^(sink − M).
const MERGE_BATCH: u32 = 8u;  // ranges `combine` reads at once

@compute @workgroup_size(CW)
fn combine(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let Lq = params.Lq;
  let e = (wid.y * nwg.x + wid.x) * CW + t;   // vec4 e of O: pair, row, column col
  if (e >= params.bh * Lq * D4V) { return; }
  let col = e % D4V;
  let row = (e / D4V) % Lq;
  let pair = e / D4V / Lq;
  // The ranges MERGE_BATCH at a time, their loads independent of each other, so that their latencies overlap (as
  // attention-decode's `combine`); past the last range, the batch's loads repeat it and count for nothing.
  let last = params.splits - 1u;
  var M = LOWEST;
  for (var s0 = 0u; s0 < params.splits; s0 += MERGE_BATCH) {
    for (var u = 0u; u < MERGE_BATCH; u++) { M = max(M, ML[(pair * params.splits + min(s0 + u, last)) * Lq + row].x); }
  }
  var l = 0.0;
  var o = vec4<f32>(0.0);
  for (var s0 = 0u; s0 < params.splits; s0 += MERGE_BATCH) {
    for (var u = 0u; u < MERGE_BATCH; u++) {
      let part = (pair * params.splits + min(s0 + u, last)) * Lq + row;
      let scale = select(0.0, exp2(ML[part].x - M), s0 + u <= last);
      l += scale * ML[part].y;
      o += scale * Opart[part * D4V + col];
    }
  }
  let seen = M > LOWEST;
  let b = pair / params.Hq;
  let hq = pair % params.Hq;
  var total = l;                     // ℓ, with the sink's weight where there is one
  var x = M + log2(l);               // the log-sum-exp in base 2
  if (params.sinks == 1u) {
    // 2^(sink − M) held at 2^126 (past it O is below 2^-118 of max|v| either way); the log-sum-exp from the larger of
    // M and the sink, which a row that saw no key gets: log e^sink = sink.
    let sink = headTerms(hq).y;
    total = sinkTotal(l, M, sink);
    x = sinkLse(l, M, sink);
  }
  O[b * params.oBatch + hq * params.oHead + row * params.oRow + col] = pack(select(vec4<f32>(0.0), o / total, seen));
  if (params.writeLse == 1u && col == 0u) { lse[pair * Lq + row] = select(bitcast<f32>(params.minusInfinity), naturalLse(x), seen || params.sinks == 1u); }
}
