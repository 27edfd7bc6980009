// Rung 22 — split-softmax: lean-loop with the softmax of a row group's two rows split between its invocations instead
// of repeated by each of them.
//
// Changed from lean-loop: there the H invocations of a row group each held both rows' whole scores after the shuffles,
// and each computed the same maximum, 2^(S − m) and ℓ for both rows: at d = 64 (H = 2, 8 keys per step) that is 16
// exponentials, 16 subtractions, 14 maxima, 16 additions to ℓ and 16 shuffles with their 16 additions, about 95
// instructions beside 512 multiply-adds per step, where d = 32 (H = 1, 16 keys, no shuffles) needs about 130 beside
// 2048. Here the invocations of a pair hold the two rows in opposite order: invocation h calls row i·BR + 2g + (h & 1)
// its row A and the other one its row B, and keeps the same columns of both. Then one shuffle level both sums and
// splits: A's scores += the partner's B scores, which are the partner's share of this invocation's row A, so after it
// each invocation holds the whole scores of one row only (a reduce-scatter; at H = 4 the second level, xor 2, pairs
// invocations that own the same row and is a plain sum). Each invocation computes the maximum, P̃ and ℓ of its row A
// alone, and one more shuffle brings the partner's P̃, which is this invocation's row B; the rescale factor of row B
// comes from the partner the same way (one scalar shuffle). With H = 1 (d ≤ 32) there is no partner and the kernel is
// lean-loop's. The rows are named (qA, qB, oA, …), not indexed, as in row-split. Everything else is lean-loop's:
// docs/rungs/20-lean-loop.md.
// Why it should be faster: per step at d = 64, 8 + 8 shuffles and 8 exponentials instead of 16 and 16, and half the
// softmax arithmetic.
// Faster than lean-loop at d = 64 and 128, even at d = 80, and at d = 32 (H = 1) it is lean-loop's kernel. Measured:
// docs/rungs/22-split-softmax.md.

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

  // Rows A and B of this invocation: the group's first and second row where h is even (or H = 1), the other way
  // round where h is odd, so that a shuffle with invocation h ^ 1 swaps A and B.
  let odd = select(0u, h & 1u, H > 1u);
  let rowA = i * BR + 2u * g + odd;
  let rowB = i * BR + 2u * g + 1u - odd;
  // Q_i in registers, scaled by log2(e)/√d; rows past N read as 0 (their O is never written). The two rows are named,
  // not indexed (see lean-loop's header).
  var qA: array<vec4<f32>, C_MAX>;   // qA[x]: row A, vec4 column h + H·x
  var qB: array<vec4<f32>, C_MAX>;
  var oA: array<vec4<f32>, C_MAX>;
  var oB: array<vec4<f32>, C_MAX>;
  for (var x = 0u; x < C; x++) {
    qA[x] = vec4<f32>(0.0);
    qB[x] = vec4<f32>(0.0);
    let col = h + H * x;             // past D/4 (when H does not divide it): 0, and never written
    if (rowA < N && inRow(col)) { qA[x] = qkv[qBase + rowA * D4V + col] * params.scaleLog2; }
    if (rowB < N && inRow(col)) { qB[x] = qkv[qBase + rowB * D4V + col] * params.scaleLog2; }
    oA[x] = vec4<f32>(0.0);
    oB[x] = vec4<f32>(0.0);
  }
  var mA = LOWEST;                   // m_i (base 2) of row A, this invocation's to keep
  var lA = 0.0;                      // ℓ_i of row A
  var mB = LOWEST;                   // m_i and ℓ_i of row B: kept here only when H = 1 (else by the partner)
  var lB = 0.0;

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
      // S for keys c .. c + KEYS − 1 of the tile: this invocation's share of each dot product of both rows, as chains
      // of multiply-adds. Quads c and d (keys c + 8 .. c + 15) exist only when KEYS = 16.
      var sAa = vec4<f32>(0.0);      // row A, keys c .. c + 3
      var sAb = vec4<f32>(0.0);      // row A, keys c + 4 .. c + 7
      var sAc = vec4<f32>(0.0);      // row A, keys c + 8 .. c + 11
      var sAd = vec4<f32>(0.0);      // row A, keys c + 12 .. c + 15
      var sBa = vec4<f32>(0.0);
      var sBb = vec4<f32>(0.0);
      var sBc = vec4<f32>(0.0);
      var sBd = vec4<f32>(0.0);
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
        sAa = qk4(sAa, qA[x], k0, k1, k2, k3);
        sAb = qk4(sAb, qA[x], k4, k5, k6, k7);
        sBa = qk4(sBa, qB[x], k0, k1, k2, k3);
        sBb = qk4(sBb, qB[x], k4, k5, k6, k7);
        if (KEYS == 16u) {
          let k8 = Kj[(c + 8u) * KS + col];
          let k9 = Kj[(c + 9u) * KS + col];
          let k10 = Kj[(c + 10u) * KS + col];
          let k11 = Kj[(c + 11u) * KS + col];
          let k12 = Kj[(c + 12u) * KS + col];
          let k13 = Kj[(c + 13u) * KS + col];
          let k14 = Kj[(c + 14u) * KS + col];
          let k15 = Kj[(c + 15u) * KS + col];
          sAc = qk4(sAc, qA[x], k8, k9, k10, k11);
          sAd = qk4(sAd, qA[x], k12, k13, k14, k15);
          sBc = qk4(sBc, qB[x], k8, k9, k10, k11);
          sBd = qk4(sBd, qB[x], k12, k13, k14, k15);
        }
      }
      // Sum and split in one: the partner's row B is this invocation's row A, so adding its B shares completes A's
      // over both invocations' columns, and B is left to the partner. At H = 4 the second level pairs invocations
      // that own the same row: a plain sum. The host keeps H ≤ 4.
      if (H > 1u) {
        sAa += subgroupShuffleXor(sBa, 1u);
        sAb += subgroupShuffleXor(sBb, 1u);
        if (KEYS == 16u) {
          sAc += subgroupShuffleXor(sBc, 1u);
          sAd += subgroupShuffleXor(sBd, 1u);
        }
      }
      if (H > 2u) {
        sAa += subgroupShuffleXor(sAa, 2u);
        sAb += subgroupShuffleXor(sAb, 2u);
        if (KEYS == 16u) {
          sAc += subgroupShuffleXor(sAc, 2u);
          sAd += subgroupShuffleXor(sAd, 2u);
        }
      }
      if (c + KEYS > keys) {  // keys past N do not count
        let pastA = vec4<u32>(c, c + 1u, c + 2u, c + 3u) >= vec4<u32>(keys);
        let pastB = vec4<u32>(c + 4u, c + 5u, c + 6u, c + 7u) >= vec4<u32>(keys);
        let pastC = vec4<u32>(c + 8u, c + 9u, c + 10u, c + 11u) >= vec4<u32>(keys);
        let pastD = vec4<u32>(c + 12u, c + 13u, c + 14u, c + 15u) >= vec4<u32>(keys);
        sAa = select(sAa, vec4<f32>(LOWEST), pastA);
        sAb = select(sAb, vec4<f32>(LOWEST), pastB);
        sAc = select(sAc, vec4<f32>(LOWEST), pastC);
        sAd = select(sAd, vec4<f32>(LOWEST), pastD);
        sBa = select(sBa, vec4<f32>(LOWEST), pastA);
        sBb = select(sBb, vec4<f32>(LOWEST), pastB);
        sBc = select(sBc, vec4<f32>(LOWEST), pastC);
        sBd = select(sBd, vec4<f32>(LOWEST), pastD);
      }
      // Online softmax of row A, lazily: P̃ = 2^(S − m_i); m_i moves (and O, ℓ are rescaled) only past m_i + TAU.
      var mxA = max4(max(sAa, sAb));
      if (KEYS == 16u) { mxA = max(mxA, max4(max(sAc, sAd))); }
      var alphaA = 1.0;              // row A's rescale factor this step (1: none)
      if (mxA > mA + TAU) {
        alphaA = exp2(mA - mxA);
        mA = mxA;
        lA *= alphaA;
        for (var x = 0u; x < C; x++) { oA[x] *= alphaA; }
      }
      let pAa = exp2(sAa - mA);      // P̃ of row A, keys c .. c + 3
      let pAb = exp2(sAb - mA);
      lA += dot(pAa + pAb, vec4<f32>(1.0));
      var pAc = vec4<f32>(0.0);
      var pAd = vec4<f32>(0.0);
      if (KEYS == 16u) {
        pAc = exp2(sAc - mA);
        pAd = exp2(sAd - mA);
        lA += dot(pAc + pAd, vec4<f32>(1.0));
      }
      // Row B: its P̃ and rescale factor from the partner, which owns it (H > 1), or its softmax here (H = 1).
      var pBa: vec4<f32>;
      var pBb: vec4<f32>;
      var pBc = vec4<f32>(0.0);
      var pBd = vec4<f32>(0.0);
      if (H > 1u) {
        pBa = subgroupShuffleXor(pAa, 1u);
        pBb = subgroupShuffleXor(pAb, 1u);
        if (KEYS == 16u) {
          pBc = subgroupShuffleXor(pAc, 1u);
          pBd = subgroupShuffleXor(pAd, 1u);
        }
        let alphaB = subgroupShuffleXor(alphaA, 1u);
        if (alphaB < 1.0) {
          for (var x = 0u; x < C; x++) { oB[x] *= alphaB; }
        }
      } else {
        var mxB = max4(max(sBa, sBb));
        if (KEYS == 16u) { mxB = max(mxB, max4(max(sBc, sBd))); }
        if (mxB > mB + TAU) {
          let alphaB = exp2(mB - mxB);
          mB = mxB;
          lB *= alphaB;
          for (var x = 0u; x < C; x++) { oB[x] *= alphaB; }
        }
        pBa = exp2(sBa - mB);
        pBb = exp2(sBb - mB);
        lB += dot(pBa + pBb, vec4<f32>(1.0));
        if (KEYS == 16u) {
          pBc = exp2(sBc - mB);
          pBd = exp2(sBd - mB);
          lB += dot(pBc + pBd, vec4<f32>(1.0));
        }
      }
      // O += P̃ V_j for keys c .. c + KEYS − 1, on this invocation's columns of both rows. The step's products are summed
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
        var oAx = addPV(addPV(vec4<f32>(0.0), pAa, v0, v1, v2, v3), pAb, v4, v5, v6, v7);
        var oBx = addPV(addPV(vec4<f32>(0.0), pBa, v0, v1, v2, v3), pBb, v4, v5, v6, v7);
        if (KEYS == 16u) {
          let v8 = Vj[(c + 8u) * KS + col];
          let v9 = Vj[(c + 9u) * KS + col];
          let v10 = Vj[(c + 10u) * KS + col];
          let v11 = Vj[(c + 11u) * KS + col];
          let v12 = Vj[(c + 12u) * KS + col];
          let v13 = Vj[(c + 13u) * KS + col];
          let v14 = Vj[(c + 14u) * KS + col];
          let v15 = Vj[(c + 15u) * KS + col];
          oAx = addPV(addPV(oAx, pAc, v8, v9, v10, v11), pAd, v12, v13, v14, v15);
          oBx = addPV(addPV(oBx, pBc, v8, v9, v10, v11), pBd, v12, v13, v14, v15);
        }
        oA[x] += oAx;
        oB[x] += oBx;
      }
    }
  }
  if (H > 1u) {  // row B's m_i and ℓ_i from the partner that kept them
    mB = subgroupShuffleXor(mA, 1u);
    lB = subgroupShuffleXor(lA, 1u);
  }
  if (SPLITS == 1u) {  // one key range (a grid large enough without splitting): O_i = O / ℓ_i, as in row-split
    if (rowA < N) {
      for (var x = 0u; x < C; x++) {
        if (inRow(h + H * x)) { O[(b * N + rowA) * D4V + h + H * x] = oA[x] / lA; }
      }
    }
    if (rowB < N) {
      for (var x = 0u; x < C; x++) {
        if (inRow(h + H * x)) { O[(b * N + rowB) * D4V + h + H * x] = oB[x] / lB; }
      }
    }
    return;
  }
  // This key range's unnormalized O, m and ℓ of both rows, for `combine`.
  let partA = (b * SPLITS + split) * N + rowA;
  let partB = (b * SPLITS + split) * N + rowB;
  if (rowA < N) {
    ML[partA] = vec2<f32>(mA, lA);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[partA * D4V + h + H * x] = oA[x]; }
    }
  }
  if (rowB < N) {
    ML[partB] = vec2<f32>(mB, lB);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[partB * D4V + h + H * x] = oB[x]; }
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
