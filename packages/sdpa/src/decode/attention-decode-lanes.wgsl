// attention-decode's lane loop: the same problem, bindings and partial results as the tile loop (`main`,
// attention-decode.wgsl, which the host puts before this file with `enable subgroups;` in front), without workgroup
// memory or a barrier in the key loop, and its own merge of the key ranges (`combineLanes`, at the end).
//
// Changed from the tile loop (docs/decode.md has the measurements): there each tile of keys passes through workgroup
// memory, and its scores, its softmax (one invocation per row) and its P̃·V_j run one after the other between
// barriers, so each workgroup waits on every tile. Here:
// - A cluster of CL neighbouring lanes of a subgroup owns a key at a time: lane l of the cluster reads vec4s l,
//   l + CL, … of the key's K and V rows straight from memory into registers (the clusters of a subgroup take
//   neighbouring keys, so each load instruction reads whole runs of memory) and sums its part of each row's score.
//   Where the step's KB·R scores are a multiple of CL (SCATTER = 1), they are summed over the cluster by halves, each
//   lane keeping half of its sums at each of log2(CL) steps, scored where they end (KB·R / CL per lane) and gathered
//   back: 2·(KB·R − KB·R / CL) shuffles a step, against KB·R·log2(CL) when every score takes its own log2(CL) steps
//   (docs/decode.md).
// - Each cluster runs its own online softmax (m_i, ℓ_i and its lanes' columns of O for each of the R rows), KB keys a
//   step, so there is nothing to wait for but memory; each step's loads are issued a step ahead, before the previous
//   step's arithmetic, so that their latency hides behind it (docs/decode.md).
// - At the end the clusters of a subgroup merge by shuffles, the subgroups of the workgroup through workgroup memory
//   (one subgroup at a time), and the workgroup writes its range's O, m and ℓ for `combine` as the tile loop does.
// It needs subgroups of at least CL invocations (a multiple of CL), R·D4/CL ≤ LANE_MAX, and DV = D.

override CL: u32 = 8u;                  // lanes per key: each holds PER vec4s of a row
override KB: u32 = 2u;                  // keys per cluster per step
override PER: u32 = D4 / CL;            // vec4s of a row per lane
override NC: u32 = WG / CL;             // clusters per workgroup: a step covers NC·KB keys
override PREFETCH: u32 = 1u;            // 1: each step's loads issued a step ahead (0: at the step, to measure it)
override SCATTER: u32 = 0u;             // 1 (where KB·R is a multiple of CL): the step's KB·R scores summed over the
                                        // cluster by halves, each lane ending with KB·R / CL of them, scored and
                                        // gathered back; 0: each score summed over the cluster by its own log2(CL) steps
const LANE_MAX: u32 = 16u;              // most vec4s of O per lane: R·PER
const LANE_KEYS_MAX: u32 = 4u;          // most keys per step (KB)
const LANE_ROWS_MAX: u32 = 16u;         // most rows (R)
const LANE_LOADS_MAX: u32 = 32u;        // most vec4s of K (and of V) per lane per step: KB·PER

var<workgroup> subgroupML: array<vec2<f32>, R * NC>;   // each subgroup's m, ℓ per row (at most NC subgroups)

// Key `key`'s vec4s of this lane, K's and V's, from memory into registers as stored (zeros past Lk).
fn laneLoads(kReg: ptr<function, array<Packed, LANE_LOADS_MAX>>, vReg: ptr<function, array<Packed, LANE_LOADS_MAX>>,
             at: u32, kvBase: u32, vBase: u32, key: u32, Lk: u32, l: u32) {
  for (var n = 0u; n < PER; n++) {
    var kv = Packed();
    var vv = Packed();
    if (key < Lk) {
      kv = k[kvBase + key * params.kvRow + l + n * CL];
      vv = v[vBase + key * params.vRow + l + n * CL];
    }
    (*kReg)[at + n] = kv;
    (*vReg)[at + n] = vv;
  }
}

@compute @workgroup_size(WG)
fn lanes(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
         @builtin(subgroup_size) sgSize: u32) {
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, KV head, range of keys), as the tile loop's
  if (w / params.splits >= params.pairs) { return; }
  let g = workgroupRange(w, t);

  let c = t / CL;                    // this lane's cluster: keys key0 + kb·NC + c of each step
  let l = t % CL;                    // its lane in the cluster: vec4s l, l + CL, … of each row
  var m: array<f32, LANE_ROWS_MAX>;
  var ell: array<f32, LANE_ROWS_MAX>;
  var o: array<vec4<f32>, LANE_MAX>;   // row r's vec4 l + n·CL at r·PER + n
  for (var r = 0u; r < R; r++) {
    m[r] = LOWEST;
    ell[r] = 0.0;
  }
  for (var n = 0u; n < R * PER; n++) { o[n] = vec4<f32>(0.0); }
  let steps = (g.Lk + NC * KB - 1u) / (NC * KB);
  let jBegin = g.split * steps / params.splits;
  let jEnd = (g.split + 1u) * steps / params.splits;
  var kReg: array<Packed, LANE_LOADS_MAX>;
  var vReg: array<Packed, LANE_LOADS_MAX>;
  var s: array<f32, LANE_KEYS_MAX * LANE_ROWS_MAX>;   // key kb's score of row r at kb·R + r, then its weight
  // With PREFETCH, step j + 1's loads are issued before step j's arithmetic, which reads the copies kCur and vCur.
  // The loads stay written out here: the same loop with them in a helper taking kReg and vReg by pointer, called
  // from here, ran 20% slower on an H200 (docs/decode.md).
  if (PREFETCH == 1u && jBegin < jEnd) {
    for (var kb = 0u; kb < KB; kb++) { laneLoads(&kReg, &vReg, kb * PER, g.kvBase, g.vBase, jBegin * NC * KB + kb * NC + c, g.Lk, l); }
  }
  // The query rows after the first step's loads are issued, so that the two reads' latencies overlap.
  stageQuery(g, t);
  workgroupBarrier();
  for (var j = jBegin; j < jEnd; j++) {
    let key0 = j * NC * KB;
    if (PREFETCH == 0u) {
      for (var kb = 0u; kb < KB; kb++) { laneLoads(&kReg, &vReg, kb * PER, g.kvBase, g.vBase, key0 + kb * NC + c, g.Lk, l); }
    }
    let kCur = kReg;
    let vCur = vReg;
    if (PREFETCH == 1u && j + 1u < jEnd) {
      for (var kb = 0u; kb < KB; kb++) { laneLoads(&kReg, &vReg, kb * PER, g.kvBase, g.vBase, key0 + NC * KB + kb * NC + c, g.Lk, l); }
    }
    // Scores: this lane's part of each dot product, summed over the cluster's lanes.
    for (var kb = 0u; kb < KB; kb++) {
      for (var r = 0u; r < R; r++) {
        var x = 0.0;
        for (var n = 0u; n < PER; n++) { x += dot(Qs[r * D4 + l + n * CL], unpack(kCur[kb * PER + n])); }
        if (SCATTER == 0u) {
          for (var off = 1u; off < CL; off *= 2u) { x += subgroupShuffleXor(x, off); }
          x = scored(x, r, key0 + kb * NC + c, g.kvh, g.Lk);
        }
        s[kb * R + r] = x;
      }
    }
    if (SCATTER == 1u) {
      // Halves: at each step the lane keeps the half of its partial sums that its bit `off` picks and adds its
      // partner's of the same, one shuffle per kept sum. The lane ends with scores n·l … n·l + n − 1 (n = KB·R / CL),
      // scores them, and the steps in reverse gather every score back to every lane of the cluster.
      var n = KB * R;
      for (var off = CL / 2u; off > 0u; off /= 2u) {
        n /= 2u;
        let upper = (l & off) != 0u;
        for (var e = 0u; e < n; e++) {
          let kept = select(s[e], s[e + n], upper);
          let sent = select(s[e + n], s[e], upper);
          s[e] = kept + subgroupShuffleXor(sent, off);
        }
      }
      for (var e = 0u; e < n; e++) {
        let at = n * l + e;   // score `at`: key kb = at / R of the step, row r = at % R
        s[e] = scored(s[e], at % R, key0 + (at / R) * NC + c, g.kvh, g.Lk);
      }
      for (var off = 1u; off < CL; off *= 2u) {
        let upper = (l & off) != 0u;
        for (var e = 0u; e < n; e++) {
          let other = subgroupShuffleXor(s[e], off);
          s[e + n] = select(other, s[e], upper);
          s[e] = select(s[e], other, upper);
        }
        n *= 2u;
      }
    }
    // The cluster's online softmax, the step's KB keys at once: O = α·O + Σ P̃·V.
    for (var r = 0u; r < R; r++) {
      var mx = m[r];
      for (var kb = 0u; kb < KB; kb++) { mx = max(mx, s[kb * R + r]); }
      let alpha = exp2(m[r] - mx);
      var sum = 0.0;
      for (var kb = 0u; kb < KB; kb++) {
        let p = select(0.0, exp2(s[kb * R + r] - mx), s[kb * R + r] > LOWEST);
        s[kb * R + r] = p;
        sum += p;
      }
      ell[r] = ell[r] * alpha + sum;
      m[r] = mx;
      for (var n = 0u; n < PER; n++) {
        var acc = o[r * PER + n] * alpha;
        for (var kb = 0u; kb < KB; kb++) { acc = fma(vec4<f32>(s[kb * R + r]), unpack(vCur[kb * PER + n]), acc); }
        o[r * PER + n] = acc;
      }
    }
  }

  // The subgroup's clusters merged: lanes CL, 2·CL, … apart hold the same columns of other keys.
  for (var off = CL; off < sgSize; off *= 2u) {
    for (var r = 0u; r < R; r++) {
      let mo = subgroupShuffleXor(m[r], off);
      let lo = subgroupShuffleXor(ell[r], off);
      let mNew = max(m[r], mo);
      let a = exp2(m[r] - mNew);
      let ao = exp2(mo - mNew);
      ell[r] = ell[r] * a + lo * ao;
      m[r] = mNew;
      for (var n = 0u; n < PER; n++) {
        let oo = subgroupShuffleXor(o[r * PER + n], off);
        o[r * PER + n] = o[r * PER + n] * a + oo * ao;
      }
    }
  }
  // Then the workgroup's subgroups: each one's m, ℓ; the rows' maxima; O summed in Qs, one subgroup at a time.
  let sgIndex = t / sgSize;
  let sgLead = t % sgSize < CL;      // the subgroup's first cluster writes for it
  for (var e = t; e < R * NC; e += WG) { subgroupML[e] = vec2<f32>(LOWEST, 0.0); }
  workgroupBarrier();
  if (t % sgSize == 0u) {
    for (var r = 0u; r < R; r++) { subgroupML[sgIndex * R + r] = vec2<f32>(m[r], ell[r]); }
  }
  for (var e = t; e < R * D4; e += WG) { Qs[e] = vec4<f32>(0.0); }
  workgroupBarrier();
  for (var turn = 0u; turn < WG / sgSize; turn++) {   // subgroup `turn` adds its rows
    if (sgIndex == turn && sgLead) {
      for (var r = 0u; r < R; r++) {
        var M = LOWEST;
        for (var h = 0u; h < NC; h++) { M = max(M, subgroupML[h * R + r].x); }
        let a = exp2(m[r] - M);
        for (var n = 0u; n < PER; n++) { Qs[r * D4 + l + n * CL] += o[r * PER + n] * a; }
      }
    }
    workgroupBarrier();
  }
  // This range's unnormalized O, m and ℓ of each row, for `combine`.
  for (var e = t; e < R * D4; e += WG) {
    let r = e / D4;
    let part = (g.pair * params.splits + g.split) * R + r;
    if (e % D4 == 0u) {
      var M = LOWEST;
      for (var h = 0u; h < NC; h++) { M = max(M, subgroupML[h * R + r].x); }
      var total = 0.0;
      for (var h = 0u; h < NC; h++) {
        let ml = subgroupML[h * R + r];
        total += ml.y * exp2(ml.x - M);
      }
      ML[params.headTerms + part] = vec2<f32>(M, total);
    }
    Opart[part * D4 + e % D4] = Qs[e];
  }
}

// `combine` for the lane loop: a cluster of CL lanes per vec4 of O, not one invocation. Lane l of the cluster loads
// ranges l, l + CL, … (MERGE_PER_LANE of them at once, so at up to CL·MERGE_PER_LANE ranges every load is issued before
// any is used: one wait on memory), merges them as `combine` merges a batch, and the cluster's lanes then merge their
// sums by shuffles (each relative to its own maximum, moved to the larger). The grid is CL times `combine`'s, so the
// merge spreads over more compute units. Past the last range, a lane's loads repeat it and count for nothing; past the
// last vec4 of O, a cluster computes on the last one and writes nothing (every lane stays for the shuffles).
const MERGE_PER_LANE: u32 = 4u;

@compute @workgroup_size(CW)
fn combineLanes(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) t: u32) {
  let vec4s = params.pairs * R * DV4;
  let cluster = ((wid.y * nwg.x + wid.x) * CW + t) / CL;   // vec4 e of O: pair, row of the group, column col
  let e = min(cluster, vec4s - 1u);
  let l = t % CL;
  let col = e % DV4;
  let r = (e / DV4) % R;
  let pair = e / DV4 / R;
  let last = params.splits - 1u;
  var sums = Sums(LOWEST, 0.0, vec4<f32>(0.0));
  for (var s0 = 0u; s0 < params.splits; s0 += CL * MERGE_PER_LANE) {
    var ml: array<vec2<f32>, MERGE_PER_LANE>;
    var op: array<vec4<f32>, MERGE_PER_LANE>;
    for (var u = 0u; u < MERGE_PER_LANE; u++) {
      let part = (pair * params.splits + min(s0 + u * CL + l, last)) * R + r;
      ml[u] = ML[params.headTerms + part];
      op[u] = Opart[part * DV4 + col];
    }
    var Mb = sums.M;
    for (var u = 0u; u < MERGE_PER_LANE; u++) { Mb = max(Mb, ml[u].x); }
    sums = movedTo(sums, Mb);
    for (var u = 0u; u < MERGE_PER_LANE; u++) { sums = withRange(sums, ml[u], op[u], s0 + u * CL + l <= last); }
  }
  for (var off = 1u; off < CL; off *= 2u) {
    let other = Sums(subgroupShuffleXor(sums.M, off), subgroupShuffleXor(sums.total, off), subgroupShuffleXor(sums.acc, off));
    let Mb = max(sums.M, other.M);
    let mine = movedTo(sums, Mb);       // both 1 where both are LOWEST: their sums are 0
    let theirs = movedTo(other, Mb);
    sums = Sums(Mb, mine.total + theirs.total, mine.acc + theirs.acc);
  }
  if (cluster < vec4s && l == 0u) { finishRow(pair, r, col, sums); }
}
