// Rung 20 — lean-loop: split-keys' algorithm, its inner loop written so that the compiler emits little but
// multiply-adds.
//
// Changed from split-keys, three changes to how the loop is written, none to what it computes:
// 1. Scores as chains of multiply-adds: s = fma(q.x, (k0.x, k1.x, k2.x, k3.x), s), … (qk4) instead of s += (dot(q, k0),
//    …, dot(q, k3)). A dot product is a multiply and 3 multiply-adds and its result still has to be added to s: 20
//    instructions per 16 multiply-adds; the compiler may not reassociate floats to remove the adds.
// 2. The shuffles that sum the H shares written out as one block per level (if (H > 1u), if (H > 2u)), folded away by
//    the override, instead of a loop: the compiler does not unroll a loop that holds a shuffle, so the loop was a real
//    one, run once at H = 2, and nothing could be scheduled across it.
// 3. 16 keys per step of the inner loop when H = 1 (d ≤ 32, no shuffles): half the steps, so half the per-step maximum,
//    rescale test and loop overhead. With H > 1 the 16 scores per row cost more registers than they save.
// Why it should be faster: fewer instructions per multiply-add, and room for the scheduler. Everything else (key ranges
// and `combine`, row groups, lazy rescale, padding) is split-keys' and row-split's: docs/rungs/19-split-keys.md,
// docs/rungs/18-row-split.md.
// Measured: each change swept alone on the rung's page, the bench's numbers on docs/ladder.md (generated from
// docs/bench). Page: docs/rungs/20-lean-loop.md.

enable subgroups;

override D: u32;          // head size, a multiple of 4
override H: u32;          // invocations per row group: a power of two, at most the subgroup size
override BC: u32;         // keys per K/V tile, a multiple of KEYS
override KEYS: u32;       // keys per step of the inner loop: 8, or 16 when H = 1
override WG: u32;         // invocations per workgroup, a multiple of H
override PREFETCH: u32;   // 1: load tile j + 1 into registers while tile j computes
override CW: u32;         // invocations per workgroup of `combine`

const C_MAX: u32 = 8u;    // most vec4 columns of a row per invocation: D/4 over H, rounded up
const LD_MAX: u32 = 8u;   // most vec4s of K_j (and of V_j) one invocation loads per tile

struct Params {
  N: u32,
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
  splits: u32,     // SPLITS: workgroups that share a row block's keys, each one range of K/V tiles
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> Opart: array<vec4<f32>>;  // per batch, split, row: unnormalized O
@group(0) @binding(4) var<storage, read_write> ML: array<vec2<f32>>;     // per batch, split, row: m, ℓ

override D4V: u32 = D / 4u;                       // vec4s per row
override C: u32 = (D / 4u + H - 1u) / H;          // vec4 columns per invocation
override KS: u32 = H * C;                         // row stride of K_j, V_j: D/4 rounded up to H·C, padded with 0
override PAD: u32 = KS - D4V;                     // padding vec4s per row (0 when H divides D/4)
override BR: u32 = WG / H * 2u;                   // query rows per workgroup: two per row group
override LD: u32 = (BC * D / 4u + WG - 1u) / WG;  // vec4s of K_j (and V_j) per invocation per tile

var<workgroup> Kj: array<vec4<f32>, BC * KS>;
var<workgroup> Vj: array<vec4<f32>, BC * KS>;

fn max4(v: vec4<f32>) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }

// Whether vec4 column `col` of a row exists (always, when H divides D/4: PAD is 0 and the test folds away).
fn inRow(col: u32) -> bool { return PAD == 0u || col < D4V; }

// Where vec4 e of a K or V tile (as laid out in memory, D/4 per row) goes in K_j or V_j (KS per row).
fn onChip(e: u32) -> u32 {
  if (PAD == 0u) { return e; }
  return (e / D4V) * KS + e % D4V;
}


// s + q · (k0, k1, k2, k3) as 16 multiply-adds into s: no dot products to add afterwards.
fn qk4(s: vec4<f32>, q: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  var r = fma(vec4<f32>(q.x), vec4<f32>(k0.x, k1.x, k2.x, k3.x), s);
  r = fma(vec4<f32>(q.y), vec4<f32>(k0.y, k1.y, k2.y, k3.y), r);
  r = fma(vec4<f32>(q.z), vec4<f32>(k0.z, k1.z, k2.z, k3.z), r);
  return fma(vec4<f32>(q.w), vec4<f32>(k0.w, k1.w, k2.w, k3.w), r);
}

// o + P̃ for four keys times their rows of V_j (one vec4 column), as 4 chained multiply-adds.
fn addPV(o: vec4<f32>, p: vec4<f32>, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>) -> vec4<f32> {
  return fma(vec4<f32>(p.w), v3, fma(vec4<f32>(p.z), v2, fma(vec4<f32>(p.y), v1, fma(vec4<f32>(p.x), v0, o))));
}

const LOWEST: f32 = -3.0e38;  // stands for −∞
const TAU: f32 = 8.0;         // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let SPLITS = params.splits;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile, key range)
  let split = w % SPLITS;
  let b = w / SPLITS / Tr;
  let i = (w / SPLITS) % Tr;
  if (b >= params.batches) { return; }
  let qBase = b * 3u * N * D4V;      // Q of batch b, in vec4s
  let kBase = qBase + N * D4V;
  let vBase = kBase + N * D4V;
  let g = t / H;                     // row group: rows i·BR + 2g and i·BR + 2g + 1
  let h = t % H;                     // place in the group: vec4 columns h + H·x

  // Q_i in registers, scaled by log2(e)/√d; rows past N read as 0 (their O is never written). The two rows are named,
  // not indexed (see the header).
  let row0 = i * BR + 2u * g;
  let row1 = row0 + 1u;
  var q0: array<vec4<f32>, C_MAX>;   // q0[x]: row 0, vec4 column h + H·x
  var q1: array<vec4<f32>, C_MAX>;
  var o0: array<vec4<f32>, C_MAX>;
  var o1: array<vec4<f32>, C_MAX>;
  for (var x = 0u; x < C; x++) {
    q0[x] = vec4<f32>(0.0);
    q1[x] = vec4<f32>(0.0);
    let col = h + H * x;             // past D/4 (when H does not divide it): 0, and never written
    if (row0 < N && inRow(col)) { q0[x] = qkv[qBase + row0 * D4V + col] * params.scaleLog2; }
    if (row1 < N && inRow(col)) { q1[x] = qkv[qBase + row1 * D4V + col] * params.scaleLog2; }
    o0[x] = vec4<f32>(0.0);
    o1[x] = vec4<f32>(0.0);
  }
  var m0 = LOWEST;                   // m_i (base 2) of the two rows
  var m1 = LOWEST;
  var l0 = 0.0;                      // ℓ_i of the two rows
  var l1 = 0.0;

  // The padding columns of K_j and V_j (when H does not divide D/4) stay 0: tiles only ever store columns < D/4.
  // (With PAD = 0 the loop does not run; max(PAD, 1u) only keeps the index expression free of a division by 0.)
  for (var e = t; e < BC * PAD; e += WG) {
    Kj[(e / max(PAD, 1u)) * KS + D4V + e % max(PAD, 1u)] = vec4<f32>(0.0);
    Vj[(e / max(PAD, 1u)) * KS + D4V + e % max(PAD, 1u)] = vec4<f32>(0.0);
  }

  let Tc = (N + BC - 1u) / BC;
  let jBegin = split * Tc / SPLITS;      // this workgroup's tiles: jBegin .. jEnd − 1
  let jEnd = (split + 1u) * Tc / SPLITS;
  var kNext: array<vec4<f32>, LD_MAX>;
  var vNext: array<vec4<f32>, LD_MAX>;
  if (PREFETCH == 1u) {
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      kNext[n] = vec4<f32>(0.0);
      vNext[n] = vec4<f32>(0.0);
      if (e < BC * D4V && jBegin * BC + e / D4V < N) {
        kNext[n] = qkv[kBase + jBegin * BC * D4V + e];
        vNext[n] = qkv[vBase + jBegin * BC * D4V + e];
      }
    }
  }
  for (var j = jBegin; j < jEnd; j++) {
    workgroupBarrier();  // everyone is done with K_j, V_j of the previous tile
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      if (e < BC * D4V) {
        if (PREFETCH == 1u) {
          Kj[onChip(e)] = kNext[n];
          Vj[onChip(e)] = vNext[n];
        } else {
          var kv = vec4<f32>(0.0);
          var vv = vec4<f32>(0.0);
          if (j * BC + e / D4V < N) {
            kv = qkv[kBase + j * BC * D4V + e];
            vv = qkv[vBase + j * BC * D4V + e];
          }
          Kj[onChip(e)] = kv;
          Vj[onChip(e)] = vv;
        }
      }
    }
    workgroupBarrier();
    if (PREFETCH == 1u && j + 1u < jEnd) {
      for (var n = 0u; n < LD; n++) {
        let e = t + n * WG;
        kNext[n] = vec4<f32>(0.0);
        vNext[n] = vec4<f32>(0.0);
        if (e < BC * D4V && (j + 1u) * BC + e / D4V < N) {
          kNext[n] = qkv[kBase + (j + 1u) * BC * D4V + e];
          vNext[n] = qkv[vBase + (j + 1u) * BC * D4V + e];
        }
      }
    }

    let keys = min(BC, N - j * BC);  // keys of this tile that exist
    for (var c = 0u; c < BC; c += KEYS) {
      // S for keys c .. c + KEYS − 1 of the tile: this invocation's share of each dot product, as chains of
      // multiply-adds, then the group's sum. Quads c and d (keys c + 8 .. c + 15) exist only when KEYS = 16.
      var s0a = vec4<f32>(0.0);      // row 0, keys c .. c + 3
      var s0b = vec4<f32>(0.0);      // row 0, keys c + 4 .. c + 7
      var s0c = vec4<f32>(0.0);      // row 0, keys c + 8 .. c + 11
      var s0d = vec4<f32>(0.0);      // row 0, keys c + 12 .. c + 15
      var s1a = vec4<f32>(0.0);
      var s1b = vec4<f32>(0.0);
      var s1c = vec4<f32>(0.0);
      var s1d = vec4<f32>(0.0);
      for (var x = 0u; x < C; x++) {
        let col = h + H * x;
        let k0 = Kj[c * KS + col];
        let k1 = Kj[(c + 1u) * KS + col];
        let k2 = Kj[(c + 2u) * KS + col];
        let k3 = Kj[(c + 3u) * KS + col];
        let k4 = Kj[(c + 4u) * KS + col];
        let k5 = Kj[(c + 5u) * KS + col];
        let k6 = Kj[(c + 6u) * KS + col];
        let k7 = Kj[(c + 7u) * KS + col];
        s0a = qk4(s0a, q0[x], k0, k1, k2, k3);
        s0b = qk4(s0b, q0[x], k4, k5, k6, k7);
        s1a = qk4(s1a, q1[x], k0, k1, k2, k3);
        s1b = qk4(s1b, q1[x], k4, k5, k6, k7);
        if (KEYS == 16u) {
          let k8 = Kj[(c + 8u) * KS + col];
          let k9 = Kj[(c + 9u) * KS + col];
          let k10 = Kj[(c + 10u) * KS + col];
          let k11 = Kj[(c + 11u) * KS + col];
          let k12 = Kj[(c + 12u) * KS + col];
          let k13 = Kj[(c + 13u) * KS + col];
          let k14 = Kj[(c + 14u) * KS + col];
          let k15 = Kj[(c + 15u) * KS + col];
          s0c = qk4(s0c, q0[x], k8, k9, k10, k11);
          s0d = qk4(s0d, q0[x], k12, k13, k14, k15);
          s1c = qk4(s1c, q1[x], k8, k9, k10, k11);
          s1d = qk4(s1d, q1[x], k12, k13, k14, k15);
        }
      }
      // The group's sum, one shuffle level per halving of H, written out rather than looped (see the header). The
      // host keeps H ≤ 4 (d ≤ 128 with C ≤ 8) and KEYS = 8 when H > 1.
      if (H > 1u) {
        s0a += subgroupShuffleXor(s0a, 1u);
        s0b += subgroupShuffleXor(s0b, 1u);
        s1a += subgroupShuffleXor(s1a, 1u);
        s1b += subgroupShuffleXor(s1b, 1u);
      }
      if (H > 2u) {
        s0a += subgroupShuffleXor(s0a, 2u);
        s0b += subgroupShuffleXor(s0b, 2u);
        s1a += subgroupShuffleXor(s1a, 2u);
        s1b += subgroupShuffleXor(s1b, 2u);
      }
      if (c + KEYS > keys) {  // keys past N do not count
        let pastA = vec4<u32>(c, c + 1u, c + 2u, c + 3u) >= vec4<u32>(keys);
        let pastB = vec4<u32>(c + 4u, c + 5u, c + 6u, c + 7u) >= vec4<u32>(keys);
        let pastC = vec4<u32>(c + 8u, c + 9u, c + 10u, c + 11u) >= vec4<u32>(keys);
        let pastD = vec4<u32>(c + 12u, c + 13u, c + 14u, c + 15u) >= vec4<u32>(keys);
        s0a = select(s0a, vec4<f32>(LOWEST), pastA);
        s0b = select(s0b, vec4<f32>(LOWEST), pastB);
        s0c = select(s0c, vec4<f32>(LOWEST), pastC);
        s0d = select(s0d, vec4<f32>(LOWEST), pastD);
        s1a = select(s1a, vec4<f32>(LOWEST), pastA);
        s1b = select(s1b, vec4<f32>(LOWEST), pastB);
        s1c = select(s1c, vec4<f32>(LOWEST), pastC);
        s1d = select(s1d, vec4<f32>(LOWEST), pastD);
      }
      // Online softmax, lazily: P̃ = 2^(S − m_i); m_i moves (and O, ℓ are rescaled) only past m_i + TAU.
      var mx0 = max4(max(s0a, s0b));
      var mx1 = max4(max(s1a, s1b));
      if (KEYS == 16u) {
        mx0 = max(mx0, max4(max(s0c, s0d)));
        mx1 = max(mx1, max4(max(s1c, s1d)));
      }
      if (mx0 > m0 + TAU) {
        let alpha = exp2(m0 - mx0);
        m0 = mx0;
        l0 *= alpha;
        for (var x = 0u; x < C; x++) { o0[x] *= alpha; }
      }
      if (mx1 > m1 + TAU) {
        let alpha = exp2(m1 - mx1);
        m1 = mx1;
        l1 *= alpha;
        for (var x = 0u; x < C; x++) { o1[x] *= alpha; }
      }
      let p0a = exp2(s0a - m0);      // P̃ of row 0, keys c .. c + 3
      let p0b = exp2(s0b - m0);
      let p1a = exp2(s1a - m1);
      let p1b = exp2(s1b - m1);
      l0 += dot(p0a + p0b, vec4<f32>(1.0));
      l1 += dot(p1a + p1b, vec4<f32>(1.0));
      var p0c = vec4<f32>(0.0);
      var p0d = vec4<f32>(0.0);
      var p1c = vec4<f32>(0.0);
      var p1d = vec4<f32>(0.0);
      if (KEYS == 16u) {
        p0c = exp2(s0c - m0);
        p0d = exp2(s0d - m0);
        p1c = exp2(s1c - m1);
        p1d = exp2(s1d - m1);
        l0 += dot(p0c + p0d, vec4<f32>(1.0));
        l1 += dot(p1c + p1d, vec4<f32>(1.0));
      }
      // O += P̃ V_j for keys c .. c + KEYS − 1, on this invocation's columns. The step's products are summed
      // apart first, so a running O sees one rounding per step, not one per key: the error bound's sum path is
      // KEYS + N/KEYS roundings instead of N (docs/error-bound.md).
      for (var x = 0u; x < C; x++) {
        let col = h + H * x;
        let v0 = Vj[c * KS + col];
        let v1 = Vj[(c + 1u) * KS + col];
        let v2 = Vj[(c + 2u) * KS + col];
        let v3 = Vj[(c + 3u) * KS + col];
        let v4 = Vj[(c + 4u) * KS + col];
        let v5 = Vj[(c + 5u) * KS + col];
        let v6 = Vj[(c + 6u) * KS + col];
        let v7 = Vj[(c + 7u) * KS + col];
        var o0x = addPV(addPV(vec4<f32>(0.0), p0a, v0, v1, v2, v3), p0b, v4, v5, v6, v7);
        var o1x = addPV(addPV(vec4<f32>(0.0), p1a, v0, v1, v2, v3), p1b, v4, v5, v6, v7);
        if (KEYS == 16u) {
          let v8 = Vj[(c + 8u) * KS + col];
          let v9 = Vj[(c + 9u) * KS + col];
          let v10 = Vj[(c + 10u) * KS + col];
          let v11 = Vj[(c + 11u) * KS + col];
          let v12 = Vj[(c + 12u) * KS + col];
          let v13 = Vj[(c + 13u) * KS + col];
          let v14 = Vj[(c + 14u) * KS + col];
          let v15 = Vj[(c + 15u) * KS + col];
          o0x = addPV(addPV(o0x, p0c, v8, v9, v10, v11), p0d, v12, v13, v14, v15);
          o1x = addPV(addPV(o1x, p1c, v8, v9, v10, v11), p1d, v12, v13, v14, v15);
        }
        o0[x] += o0x;
        o1[x] += o1x;
      }
    }
  }
  if (SPLITS == 1u) {  // one key range (a grid large enough without splitting): O_i = O / ℓ_i, as in row-split
    if (row0 < N) {
      for (var x = 0u; x < C; x++) {
        if (inRow(h + H * x)) { O[(b * N + row0) * D4V + h + H * x] = o0[x] / l0; }
      }
    }
    if (row1 < N) {
      for (var x = 0u; x < C; x++) {
        if (inRow(h + H * x)) { O[(b * N + row1) * D4V + h + H * x] = o1[x] / l1; }
      }
    }
    return;
  }
  // This key range's unnormalized O, m and ℓ of both rows, for `combine`.
  let part0 = (b * SPLITS + split) * N + row0;
  if (row0 < N) {
    ML[part0] = vec2<f32>(m0, l0);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[part0 * D4V + h + H * x] = o0[x]; }
    }
  }
  if (row1 < N) {
    ML[part0 + 1u] = vec2<f32>(m1, l1);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[(part0 + 1u) * D4V + h + H * x] = o1[x]; }
    }
  }
}

// One invocation per vec4 of O: the partial results of its row merged, O = Σ 2^(m_s − M) O_s / Σ 2^(m_s − M) ℓ_s.
@compute @workgroup_size(CW)
fn combine(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let SPLITS = params.splits;
  let e = (wid.y * nwg.x + wid.x) * CW + t;   // vec4 e of O: batch b, row, column col
  if (e >= params.batches * N * D4V) { return; }
  let col = e % D4V;
  let row = (e / D4V) % N;
  let b = e / D4V / N;
  var M = LOWEST;
  for (var s = 0u; s < SPLITS; s++) { M = max(M, ML[(b * SPLITS + s) * N + row].x); }
  var l = 0.0;
  var o = vec4<f32>(0.0);
  for (var s = 0u; s < SPLITS; s++) {
    let part = (b * SPLITS + s) * N + row;
    let scale = exp2(ML[part].x - M);
    l += scale * ML[part].y;
    o += scale * Opart[part * D4V + col];
  }
  O[(b * N + row) * D4V + col] = o / l;
}
