// Rung 25 — f16-resident: resident-o's loop in plain f16, one product per multiply, and a softmax that reads S and
// writes P̃ four neighbouring keys at a time.
//
// Changed from resident-o: rung 24 splits Q, K, V and P̃ into high and low f16 parts and multiplies three pairs of
// them for fp32-grade accuracy. Here they are rounded to f16 once, as in rung 16 `f16-matrix`: the scratch buffer holds
// one copy of each, the K and V tiles are half the size, and S = Q_i K_jᵀ and P̃V_j take one multiply-accumulate per
// pair of fragments instead of three. The online softmax reads each invocation's 16 keys of its row as four vectors of
// four neighbouring keys (the halves and the rotation by row kept, per vector) instead of one key at a time: a quarter
// of the index arithmetic, and loads the compiler can merge: in `subgroup-matrix-bench designs` it was the fastest
// elementwise pass (docs/subgroup-matrix-bench.md). (Rung 24's file has since taken this softmax, and at d = 80-128
// the first of the two changes below: docs/sdpa.md's history.)
// Two more changes from resident-o, for occupancy: each subgroup's S tile is BC columns wide, not max(BC, d), and o
// passes through it in d / OW rounds when it is flushed; and o is added to O in f32 registers only when some row's m_i
// moves (FLUSH = 0), not every 8 tiles. At d = 64 the first takes the workgroup's memory from 31.0 to 23.0 KiB, and
// that is what made the loop fast (`experiments matrix-variants f16-resident one-round`); every variant measured with
// more workgroup memory was slower.
// Why it should be faster than rung 16: four subgroups share each K/V tile, staged once in workgroup memory, instead of
// one subgroup per workgroup loading every fragment from the scratch buffer; and O stays in the matrix units between
// flushes. The cost is rung 16's: Q, K, V and P̃ are rounded to f16 (11 significant bits), an error near 1e-3 on ±3
// data, so the automatic choice never picks it.
// Measured and page: docs/rungs/25-f16-resident.md.

enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;

override D: u32;       // head size, a multiple of 16, at most 128
override NSG: u32;     // subgroups (of 32 invocations) per workgroup, each with 16 query rows
override FLUSH: u32 = 0u;  // tiles between additions of o to O in f32 registers besides those a move forces; 0: none
override BC: u32 = 32u;    // keys per tile: 32 or 64

const BC_MAX: u32 = 64u;   // most keys per tile
const NC_MAX: u32 = 4u;    // BC_MAX / 16
const DK_MAX: u32 = 8u;    // most fragments across d
const PH_MAX: u32 = 8u;    // most vectors of each half of a tile one invocation reads a step ahead
const TAU: f32 = 8.0;      // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)
const LOWEST: f32 = -3.0e38;

struct Params {
  N: u32,
  NP: u32,         // N rounded up to a multiple of 64: rows of each matrix in the scratch buffer
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<f32>;         // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> qkv16: array<f16>;     // per batch: Q·scale, K, V as f16, each NP × d
@group(0) @binding(4) var<storage, read> qkv16v: array<vec4<u32>>;    // the same buffer, 8 f16 per element (main reads it so)

override NC: u32 = BC / 16u;         // key fragments per tile
override DK: u32 = D / 16u;          // fragments across d
override BR: u32 = 16u * NSG;        // query rows per workgroup
override KS: u32 = D + 8u;           // row stride of the K and V tiles (f16)
override KT: u32 = BC * KS;          // one K or V tile
// Columns of o that pass through a subgroup's S tile at once (a flush takes D / OW rounds): min(BC, D) where that
// divides D (d = 32, 64, 128), else 16 (d = 80, 112).
override OW: u32 = 16u + (min(BC, D) - 16u) * (1u - min(D % min(BC, D), 1u));
override SO: u32 = max(BC, OW) + 4u; // row stride of a subgroup's S tile (f32)
override PS: u32 = BC + 8u;          // row stride of the P̃ tiles (f16)
override WG: u32 = 32u * NSG;        // invocations per workgroup
override D8: u32 = D / 8u;           // vectors of 8 f16 per row
override TILE_VEC: u32 = 2u * BC * D8;           // vectors per staged tile (K, V)
override KH: u32 = TILE_VEC / 2u;                // of those, K (V follows)
override PH: u32 = min(PH_MAX, KH / WG);         // of each half, read a step ahead per invocation (KH is a multiple of WG)

// Every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their arrays 16-byte aligned.
var<workgroup> KV: array<f16, max(2u * KT, BR * KS)>;  // K and V of tile j, BC rows of KS each (first Q_i)
var<workgroup> Sf: array<f32, BR * SO>;       // per subgroup: its S tile, or o in a flush (16 rows of SO)
var<workgroup> Pt: array<f16, BR * PS>;       // per subgroup: P̃ (16 rows of PS)
var<workgroup> movedAt: vec4<u32>;            // .x: the last tile at which some row's m_i moved (16 bytes, as above)

// One invocation per 4 values of Q·scale, K, V, rounded to f16, rows N..NP-1 zero.
@compute @workgroup_size(256)
fn convert(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * 256u + t;
  let D4 = D / 4u;
  let perMatrix = params.NP * D4;
  if (e >= params.batches * 3u * perMatrix) { return; }
  let matrix = e / perMatrix;        // 3·b + (0: Q, 1: K, 2: V)
  let row = (e % perMatrix) / D4;
  let x = e % D4;
  var v = vec4<f32>(0.0);
  if (row < params.N) {
    v = qkv[(matrix * params.N + row) * D4 + x];
    if (matrix % 3u == 0u) { v *= params.scaleLog2; }
  }
  let at = (matrix * params.NP + row) * D + 4u * x;
  qkv16[at] = f16(v.x);
  qkv16[at + 1u] = f16(v.y);
  qkv16[at + 2u] = f16(v.z);
  qkv16[at + 3u] = f16(v.w);
}

// Vector e of tile jt of K and V in the scratch buffer (kv0: K of the batch, in vectors); e counts 8 f16 at a time
// along the rows of the two matrices, so neighbouring invocations read neighbouring 16 bytes.
fn tileVector(kv0: u32, jt: u32, e: u32) -> vec4<u32> {
  let part = e / (BC * D8);           // 0 K, 1 V: NP rows apart in the scratch buffer
  let row = (e / D8) % BC;
  return qkv16v[kv0 + (part * params.NP + jt * BC + row) * D8 + e % D8];
}

// Where vector e of a tile goes in KV.
fn tileSlot(e: u32) -> u32 {
  return (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
}

// Writes 8 f16 (one vector of the scratch buffer) to KV at `at`.
fn put8(at: u32, w: vec4<u32>) {
  let a = bitcast<vec2<f16>>(w.x);
  let b = bitcast<vec2<f16>>(w.y);
  let c = bitcast<vec2<f16>>(w.z);
  let d = bitcast<vec2<f16>>(w.w);
  KV[at] = a.x;
  KV[at + 1u] = a.y;
  KV[at + 2u] = b.x;
  KV[at + 3u] = b.y;
  KV[at + 4u] = c.x;
  KV[at + 5u] = c.y;
  KV[at + 6u] = d.x;
  KV[at + 7u] = d.y;
}

@compute @workgroup_size(32u * NSG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) lane: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let q0 = 3u * b * params.NP * D;   // Q of batch b in qkv16; K and V follow, NP rows apart
  let kv0 = (q0 + params.NP * D) / 8u;   // K, in vectors of 8 f16

  // Q_i through KV (sized for it): each subgroup keeps the DK fragments of its 16 rows in registers for the whole key
  // loop.
  for (var e = t; e < BR * D8; e += WG) {
    let row = e / D8;
    put8(row * KS + 8u * (e % D8), qkv16v[(q0 + (i * BR + row) * D) / 8u + e % D8]);
  }
  workgroupBarrier();
  let row0 = i * BR + 16u * sg;
  var q: array<L, DK_MAX>;
  for (var k = 0u; k < DK; k++) {
    q[k] = subgroupMatrixLoad<L, row_major>(&KV, 16u * sg * KS + 16u * k, KS);
  }
  workgroupBarrier();  // every subgroup has its Q fragments; KV takes the key tiles

  // This invocation's row r of the subgroup's 16 and its half h of the columns; `rot` turns rows 8-15 by one pair.
  let r = lane / 2u;
  let h = lane % 2u;
  let rot = r / 8u;
  let sBase = 16u * sg * SO + r * SO;   // row r of this subgroup's S tile (and of O, when it passes through)
  let pBase = 16u * sg * PS + r * PS;   // row r of this subgroup's P̃ tiles
  var m = LOWEST;                       // the row's m_i (base 2): moves only past m_i + TAU
  var l = 0.0;                          // this invocation's half of the row's running sum
  var o: array<A, DK_MAX>;              // the subgroup's 16 rows of O since the last flush, DK fragments across d
  for (var n = 0u; n < DK; n++) { o[n] = A(); }
  var oRow: array<f32, 64>;             // row r of O up to the last flush: oRow[8·n0 + k] is column
                                        // 16·n0 + 2·((k + rot) mod OW/2) + h, n0 a multiple of OW/16
  for (var k = 0u; k < D / 2u; k++) { oRow[k] = 0.0; }

  // K_0 into KV now; V_0 and every later tile's vectors through registers, a step ahead (KH: the K half of a tile).
  let Tc = (N + BC - 1u) / BC;
  for (var e = t; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, 0u, e)); }
  var nextK: array<vec4<u32>, PH_MAX>;
  var nextV: array<vec4<u32>, PH_MAX>;
  for (var u = 0u; u < PH; u++) {
    nextV[u] = tileVector(kv0, 0u, KH + t + WG * u);
  }
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // K_j is in KV; every subgroup is done with V_(j−1)

    // V_j into KV (read during the previous tile), then the reads of K_(j+1) and V_(j+1) into registers. (Both copies
    // written out rather than through put8 and tileSlot, as in staged-matrix's loop, where the functions measured
    // slower.)
    for (var u = 0u; u < PH; u++) {
      let e = KH + t + WG * u;
      let at = (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
      let w = nextV[u];
      let a = bitcast<vec2<f16>>(w.x);
      let b = bitcast<vec2<f16>>(w.y);
      let c = bitcast<vec2<f16>>(w.z);
      let d = bitcast<vec2<f16>>(w.w);
      KV[at] = a.x;
      KV[at + 1u] = a.y;
      KV[at + 2u] = b.x;
      KV[at + 3u] = b.y;
      KV[at + 4u] = c.x;
      KV[at + 5u] = c.y;
      KV[at + 6u] = d.x;
      KV[at + 7u] = d.y;
    }
    for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }
    let more = j + 1u < Tc;
    if (more) {
      for (var u = 0u; u < PH; u++) {
        let e = t + WG * u;
        nextK[u] = qkv16v[kv0 + ((e / (BC * D8)) * params.NP + (j + 1u) * BC + (e / D8) % BC) * D8 + e % D8];
        let f = KH + e;
        nextV[u] = qkv16v[kv0 + ((f / (BC * D8)) * params.NP + (j + 1u) * BC + (f / D8) % BC) * D8 + f % D8];
      }
    }

    // S = Q_i K_jᵀ for this subgroup's 16 rows. The NC key fragments' chains of multiply-accumulates are interleaved,
    // so that each one's latency hides behind the others'.
    var s: array<A, NC_MAX>;
    for (var c = 0u; c < NC; c++) { s[c] = A(); }
    for (var k = 0u; k < DK; k++) {
      for (var c = 0u; c < NC; c++) {
        let kc = subgroupMatrixLoad<R, col_major>(&KV, 16u * c * KS + 16u * k, KS);
        s[c] = subgroupMatrixMultiplyAccumulate(q[k], kc, s[c]);
      }
    }
    for (var c = 0u; c < NC; c++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * c, s[c], SO); }
    workgroupBarrier();  // S is in Sf; every subgroup is done with K_j

    // K_(j+1) into KV.
    if (more) {
      for (var u = 0u; u < PH; u++) {
        let e = t + WG * u;
        let at = (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
        let w = nextK[u];
        let a = bitcast<vec2<f16>>(w.x);
        let b = bitcast<vec2<f16>>(w.y);
        let c = bitcast<vec2<f16>>(w.z);
        let d = bitcast<vec2<f16>>(w.w);
        KV[at] = a.x;
        KV[at + 1u] = a.y;
        KV[at + 2u] = b.x;
        KV[at + 3u] = b.y;
        KV[at + 4u] = c.x;
        KV[at + 5u] = c.y;
        KV[at + 6u] = d.x;
        KV[at + 7u] = d.y;
      }
      for (var e = t + WG * PH; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, j + 1u, e)); }
    }

    // Online softmax of row r in f32, lazily: its maximum over both halves (one shuffle); m_i moves only when the
    // row passes it by more than TAU, and then (past the first tile) O must be rescaled by α. P̃ = 2^(S − m_i) as f16,
    // the invocation's half of the row sum. Keys past N do not count. The invocation's BC/2 keys are BC/8 vectors of four
    // neighbouring keys: vector k starts at key 4·(2·((k + rot) mod BC/8) + h).
    var sv: array<vec4<f32>, BC_MAX / 8u>;
    var mx = LOWEST;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let at = sBase + col;
      let key = vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u);
      let v = select(vec4<f32>(LOWEST), vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]), key < vec4<u32>(N));
      sv[k] = v;
      mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
    }
    mx = max(mx, subgroupShuffleXor(mx, 1u));
    var alpha = 1.0;
    if (mx > m + TAU) {
      alpha = exp2(m - mx);
      m = mx;
      l *= alpha;
      if (j > 0u) { movedAt.x = j; }   // O holds earlier tiles: flush it, times α, before this one is added
    }
    var sum = 0.0;
    for (var k = 0u; k < BC / 8u; k++) {
      let at = pBase + 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let p = exp2(sv[k] - m);
      sum += (p.x + p.y) + (p.z + p.w);
      Pt[at] = f16(p.x);
      Pt[at + 1u] = f16(p.y);
      Pt[at + 2u] = f16(p.z);
      Pt[at + 3u] = f16(p.w);
    }
    l += sum;
    // The P̃ tiles and V_j are in workgroup memory and every S tile is read (the barrier in the uniform load). Every
    // FLUSH tiles (if FLUSH > 0), and whenever some row's m_i moved, oRow = α · (oRow + o), OW columns at a time, and o
    // starts again from zero.
    let moved = workgroupUniformLoad(&movedAt).x == j && j > 0u;
    if (moved || (FLUSH > 0u && j % max(FLUSH, 1u) == 0u && j > 0u)) {
      for (var n0 = 0u; n0 < DK; n0 += OW / 16u) {
        if (n0 > 0u) { workgroupBarrier(); }  // the last round is read
        for (var n = 0u; n < OW / 16u; n++) {
          subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, o[n0 + n], SO);
        }
        workgroupBarrier();
        for (var k = 0u; k < OW / 2u; k++) {
          oRow[8u * n0 + k] = (oRow[8u * n0 + k] + Sf[sBase + 2u * ((k + rot) % (OW / 2u)) + h]) * alpha;
        }
      }
      for (var n = 0u; n < DK; n++) { o[n] = A(); }
    }

    // o += P̃ V_j.
    for (var c = 0u; c < NC; c++) {
      let p = subgroupMatrixLoad<L, row_major>(&Pt, 16u * sg * PS + 16u * c, PS);
      for (var n = 0u; n < DK; n++) {
        let v = subgroupMatrixLoad<R, row_major>(&KV, KT + 16u * c * KS + 16u * n, KS);
        o[n] = subgroupMatrixMultiplyAccumulate(p, v, o[n]);
      }
    }
  }

  // O_i = (oRow + o) / ℓ_i, o through the subgroup's Sf rows; rows past N not written.
  let inv = 1.0 / (l + subgroupShuffleXor(l, 1u));
  let row = row0 + r;
  for (var n0 = 0u; n0 < DK; n0 += OW / 16u) {
    workgroupBarrier();  // every subgroup has read its last S tile, or the last round
    for (var n = 0u; n < OW / 16u; n++) {
      subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, o[n0 + n], SO);
    }
    workgroupBarrier();
    if (row < N) {
      for (var k = 0u; k < OW / 2u; k++) {
        let col = 2u * ((k + rot) % (OW / 2u)) + h;
        O[(b * N + row) * D + 16u * n0 + col] = (oRow[8u * n0 + k] + Sf[sBase + col]) * inv;
      }
    }
  }
}
