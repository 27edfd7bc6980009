// Rung 21 — four-rows: lean-loop with four query rows per row group instead of two.
//
// Changed from lean-loop: every vec4 an invocation reads from K_j or V_j fed 8 multiply-adds (4 lanes × 2 rows). Here a
// row group owns four rows, so each vec4 read feeds 16 multiply-adds: half the reads from workgroup memory per
// multiply-add. To keep Q and O of four rows in registers each invocation holds at most 4 vec4 columns of a row (C_MAX
// = 4), so H doubles (2 at d ≤ 32, 4 at d ≤ 64, 8 at d ≤ 128) and the shuffles that sum the H shares of a score take
// one more level. Keys go 8 at a time, scores as chains of multiply-adds, shuffle levels written out, as in lean-loop.
// Why it should be faster: half the workgroup-memory reads per multiply-add, if those reads bound the loop.
// This pays only at d = 128, where H = 8 replaces lean-loop's 8 vec4s per row: at d ≤ 64 the extra shuffle level costs
// more than the halved reads save (with H = 4 each read touches four vec4s: the page's correction), and at d = 80 or
// 100 the padded rows of H·C vec4s add 20-28% to the work. Measured: docs/rungs/21-four-rows.md.
// Everything else (the key ranges and `combine`, the lazy rescale, the padding) is split-keys' and row-split's:
// docs/rungs/19-split-keys.md, docs/rungs/18-row-split.md.

enable subgroups;

override D: u32;          // head size, a multiple of 4
override H: u32;          // invocations per row group: a power of two, at most the subgroup size
override BC: u32;         // keys per K/V tile, a multiple of 8
override WG: u32;         // invocations per workgroup, a multiple of H
override PREFETCH: u32;   // 1: load tile j + 1 into registers while tile j computes
override CW: u32;         // invocations per workgroup of `combine`

const C_MAX: u32 = 4u;    // most vec4 columns of a row per invocation: D/4 over H, rounded up
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
override BR: u32 = WG / H * 4u;                   // query rows per workgroup: four per row group
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

// o + P̃ for four keys times their rows of V_j (one vec4 column).
fn addPV(o: vec4<f32>, p: vec4<f32>, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>) -> vec4<f32> {
  return fma(vec4<f32>(p.w), v3, fma(vec4<f32>(p.z), v2, fma(vec4<f32>(p.y), v1, fma(vec4<f32>(p.x), v0, o))));
}

// The lazy online softmax of one row for four scores s (base 2): when max(s) passes m by more than TAU, m moves to it
// and ℓ is scaled; returns the factor O must be scaled by (1 when m stays).
fn moveMax(s: vec4<f32>, m: ptr<function, f32>, l: ptr<function, f32>) -> f32 {
  let mx = max4(s);
  if (mx <= *m + TAU) { return 1.0; }
  let alpha = exp2(*m - mx);
  *m = mx;
  *l *= alpha;
  return alpha;
}


// s + q · (k0, k1, k2, k3) as 16 multiply-adds into s (no separate dot products and adds).
fn qk4(s: vec4<f32>, q: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  var r = fma(vec4<f32>(q.x), vec4<f32>(k0.x, k1.x, k2.x, k3.x), s);
  r = fma(vec4<f32>(q.y), vec4<f32>(k0.y, k1.y, k2.y, k3.y), r);
  r = fma(vec4<f32>(q.z), vec4<f32>(k0.z, k1.z, k2.z, k3.z), r);
  return fma(vec4<f32>(q.w), vec4<f32>(k0.w, k1.w, k2.w, k3.w), r);
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
  let g = t / H;                     // row group: rows i·BR + 4g … i·BR + 4g + 3
  let h = t % H;                     // place in the group: vec4 columns h + H·x

  // Q_i in registers, scaled by log2(e)/√d; rows past N read as 0 (their O is never written). The four rows are
  // named, not indexed (see row-split's header below).
  let row0 = i * BR + 4u * g;
  let row1 = row0 + 1u;
  let row2 = row0 + 2u;
  let row3 = row0 + 3u;
  var q0: array<vec4<f32>, C_MAX>;   // q0[x]: row 0, vec4 column h + H·x
  var q1: array<vec4<f32>, C_MAX>;
  var q2: array<vec4<f32>, C_MAX>;
  var q3: array<vec4<f32>, C_MAX>;
  var o0: array<vec4<f32>, C_MAX>;
  var o1: array<vec4<f32>, C_MAX>;
  var o2: array<vec4<f32>, C_MAX>;
  var o3: array<vec4<f32>, C_MAX>;
  for (var x = 0u; x < C; x++) {
    q0[x] = vec4<f32>(0.0);
    q1[x] = vec4<f32>(0.0);
    q2[x] = vec4<f32>(0.0);
    q3[x] = vec4<f32>(0.0);
    let col = h + H * x;             // past D/4 (when H does not divide it): 0, and never written
    if (inRow(col)) {
      if (row0 < N) { q0[x] = qkv[qBase + row0 * D4V + col] * params.scaleLog2; }
      if (row1 < N) { q1[x] = qkv[qBase + row1 * D4V + col] * params.scaleLog2; }
      if (row2 < N) { q2[x] = qkv[qBase + row2 * D4V + col] * params.scaleLog2; }
      if (row3 < N) { q3[x] = qkv[qBase + row3 * D4V + col] * params.scaleLog2; }
    }
    o0[x] = vec4<f32>(0.0);
    o1[x] = vec4<f32>(0.0);
    o2[x] = vec4<f32>(0.0);
    o3[x] = vec4<f32>(0.0);
  }
  var m0 = LOWEST;                   // m_i (base 2) of the four rows
  var m1 = LOWEST;
  var m2 = LOWEST;
  var m3 = LOWEST;
  var l0 = 0.0;                      // ℓ_i of the four rows
  var l1 = 0.0;
  var l2 = 0.0;
  var l3 = 0.0;

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
    for (var c = 0u; c < BC; c += 8u) {
      // S for keys c .. c + 7 and the four rows: this invocation's share, then the group's sum. Each vec4 read from
      // K_j feeds 16 multiply-adds.
      var s0a = vec4<f32>(0.0);      // row 0, keys c .. c + 3
      var s0b = vec4<f32>(0.0);      // row 0, keys c + 4 .. c + 7
      var s1a = vec4<f32>(0.0);
      var s1b = vec4<f32>(0.0);
      var s2a = vec4<f32>(0.0);
      var s2b = vec4<f32>(0.0);
      var s3a = vec4<f32>(0.0);
      var s3b = vec4<f32>(0.0);
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
        s2a = qk4(s2a, q2[x], k0, k1, k2, k3);
        s2b = qk4(s2b, q2[x], k4, k5, k6, k7);
        s3a = qk4(s3a, q3[x], k0, k1, k2, k3);
        s3b = qk4(s3b, q3[x], k4, k5, k6, k7);
      }
      // The group's sum, one shuffle level per halving of H, written out (see lean-loop's header); H ≤ 8 (d ≤ 128).
      if (H > 1u) {
        s0a += subgroupShuffleXor(s0a, 1u);
        s0b += subgroupShuffleXor(s0b, 1u);
        s1a += subgroupShuffleXor(s1a, 1u);
        s1b += subgroupShuffleXor(s1b, 1u);
        s2a += subgroupShuffleXor(s2a, 1u);
        s2b += subgroupShuffleXor(s2b, 1u);
        s3a += subgroupShuffleXor(s3a, 1u);
        s3b += subgroupShuffleXor(s3b, 1u);
      }
      if (H > 2u) {
        s0a += subgroupShuffleXor(s0a, 2u);
        s0b += subgroupShuffleXor(s0b, 2u);
        s1a += subgroupShuffleXor(s1a, 2u);
        s1b += subgroupShuffleXor(s1b, 2u);
        s2a += subgroupShuffleXor(s2a, 2u);
        s2b += subgroupShuffleXor(s2b, 2u);
        s3a += subgroupShuffleXor(s3a, 2u);
        s3b += subgroupShuffleXor(s3b, 2u);
      }
      if (H > 4u) {
        s0a += subgroupShuffleXor(s0a, 4u);
        s0b += subgroupShuffleXor(s0b, 4u);
        s1a += subgroupShuffleXor(s1a, 4u);
        s1b += subgroupShuffleXor(s1b, 4u);
        s2a += subgroupShuffleXor(s2a, 4u);
        s2b += subgroupShuffleXor(s2b, 4u);
        s3a += subgroupShuffleXor(s3a, 4u);
        s3b += subgroupShuffleXor(s3b, 4u);
      }
      if (c + 8u > keys) {  // keys past N do not count
        let pastA = vec4<u32>(c, c + 1u, c + 2u, c + 3u) >= vec4<u32>(keys);
        let pastB = vec4<u32>(c + 4u, c + 5u, c + 6u, c + 7u) >= vec4<u32>(keys);
        s0a = select(s0a, vec4<f32>(LOWEST), pastA);
        s0b = select(s0b, vec4<f32>(LOWEST), pastB);
        s1a = select(s1a, vec4<f32>(LOWEST), pastA);
        s1b = select(s1b, vec4<f32>(LOWEST), pastB);
        s2a = select(s2a, vec4<f32>(LOWEST), pastA);
        s2b = select(s2b, vec4<f32>(LOWEST), pastB);
        s3a = select(s3a, vec4<f32>(LOWEST), pastA);
        s3b = select(s3b, vec4<f32>(LOWEST), pastB);
      }
      // Online softmax, lazily: P̃ = 2^(S − m_i); m_i moves (and O, ℓ are rescaled) only past m_i + TAU.
      let alpha0 = moveMax(max(s0a, s0b), &m0, &l0);
      let alpha1 = moveMax(max(s1a, s1b), &m1, &l1);
      let alpha2 = moveMax(max(s2a, s2b), &m2, &l2);
      let alpha3 = moveMax(max(s3a, s3b), &m3, &l3);
      if (alpha0 != 1.0) { for (var x = 0u; x < C; x++) { o0[x] *= alpha0; } }
      if (alpha1 != 1.0) { for (var x = 0u; x < C; x++) { o1[x] *= alpha1; } }
      if (alpha2 != 1.0) { for (var x = 0u; x < C; x++) { o2[x] *= alpha2; } }
      if (alpha3 != 1.0) { for (var x = 0u; x < C; x++) { o3[x] *= alpha3; } }
      let p0a = exp2(s0a - m0);      // P̃ of row 0, keys c .. c + 3
      let p0b = exp2(s0b - m0);
      let p1a = exp2(s1a - m1);
      let p1b = exp2(s1b - m1);
      let p2a = exp2(s2a - m2);
      let p2b = exp2(s2b - m2);
      let p3a = exp2(s3a - m3);
      let p3b = exp2(s3b - m3);
      l0 += dot(p0a + p0b, vec4<f32>(1.0));
      l1 += dot(p1a + p1b, vec4<f32>(1.0));
      l2 += dot(p2a + p2b, vec4<f32>(1.0));
      l3 += dot(p3a + p3b, vec4<f32>(1.0));
      // O += P̃ V_j for keys c .. c + 7, on this invocation's columns; each vec4 read from V_j feeds 16 multiply-adds.
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
        o0[x] = addPV(addPV(o0[x], p0a, v0, v1, v2, v3), p0b, v4, v5, v6, v7);
        o1[x] = addPV(addPV(o1[x], p1a, v0, v1, v2, v3), p1b, v4, v5, v6, v7);
        o2[x] = addPV(addPV(o2[x], p2a, v0, v1, v2, v3), p2b, v4, v5, v6, v7);
        o3[x] = addPV(addPV(o3[x], p3a, v0, v1, v2, v3), p3b, v4, v5, v6, v7);
      }
    }
  }

  if (SPLITS == 1u) {  // one key range (a grid large enough without splitting): O_i = O / ℓ_i, as in row-split
    for (var x = 0u; x < C; x++) {
      let col = h + H * x;
      if (inRow(col)) {
        if (row0 < N) { O[(b * N + row0) * D4V + col] = o0[x] / l0; }
        if (row1 < N) { O[(b * N + row1) * D4V + col] = o1[x] / l1; }
        if (row2 < N) { O[(b * N + row2) * D4V + col] = o2[x] / l2; }
        if (row3 < N) { O[(b * N + row3) * D4V + col] = o3[x] / l3; }
      }
    }
    return;
  }
  // This key range's unnormalized O, m and ℓ of the four rows, for `combine`.
  let part0 = (b * SPLITS + split) * N + row0;
  if (h == 0u) {
    if (row0 < N) { ML[part0] = vec2<f32>(m0, l0); }
    if (row1 < N) { ML[part0 + 1u] = vec2<f32>(m1, l1); }
    if (row2 < N) { ML[part0 + 2u] = vec2<f32>(m2, l2); }
    if (row3 < N) { ML[part0 + 3u] = vec2<f32>(m3, l3); }
  }
  for (var x = 0u; x < C; x++) {
    let col = h + H * x;
    if (inRow(col)) {
      if (row0 < N) { Opart[part0 * D4V + col] = o0[x]; }
      if (row1 < N) { Opart[(part0 + 1u) * D4V + col] = o1[x]; }
      if (row2 < N) { Opart[(part0 + 2u) * D4V + col] = o2[x]; }
      if (row3 < N) { Opart[(part0 + 3u) * D4V + col] = o3[x]; }
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
