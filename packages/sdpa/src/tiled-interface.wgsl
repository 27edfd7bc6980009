// The interface of the tiled attention kernels (attention-fp32 and attention-matrix), appended to each by tiledKernel
// (tiled-host.ts), whose host fills it: the uniform, the bindings, and the band and block tests both kernels make.
// Each kernel declares `Packed` (how q, k, v and O are held in memory).

struct Params {
  Lq: u32,
  Lk: u32,
  Hq: u32,
  GROUP: u32,              // query heads per KV head
  bh: u32,                 // B·Hq: (batch, head) pairs in this run
  batch0: u32,             // the run's first batch, for the masks (which cover every batch)
  qBatch: u32,             // strides of Q and O in vec4s: batch, head, row
  qHead: u32,
  qRow: u32,
  kvBatch: u32,            // strides of K and V in vec4s
  kvHead: u32,
  kvRow: u32,
  kStart: u32,             // where K and V begin in their bindings, in vec4s: 0, unless Q, K and V share one buffer
  vStart: u32,             // (hw4's file layout, each batch Q then K then V: hw4-adapter.ts)
  oBatch: u32,             // strides of O in vec4s: Q's, unless Q lies packed with K and V
  oHead: u32,
  oRow: u32,
  scaleLog2: f32,          // scale·log2(e)
  left: i32,               // keys before the diagonal a row sees (a large number when unbounded)
  right: i32,              // keys after it (0 when causal)
  maskB: u32,              // element mask strides in f32s (0 along broadcast dimensions)
  maskH: u32,
  maskI: u32,
  maskJ: u32,
  blockRows: u32,          // rows and keys of a block of the block mask
  blockKeys: u32,
  blocksB: u32,            // block mask strides in flags
  blocksH: u32,
  blocksI: u32,
  blocksJ: u32,
  minusInfinity: u32,      // 0xff800000, the bits of −∞ (WGSL has no constant for it), the lse of a row with no key
  splits: u32,             // workgroups per row block, each a range of its tiles; 1: O is written directly
  perSplit: u32,           // tiles per range (0: count / splits each)
  mask: u32,               // 1: an element mask is bound
  blocks: u32,             // 1: a block mask is bound
  blockTiles: u32,         // 1: every kernel tile lies inside one block (blocks are whole tiles): no per-score test
  writeLse: u32,           // 1: write each row's log-sum-exp
  cached: u32,             // 1: batch b holds only its first tileLists[b] keys (no block mask then)
  softcap: u32,            // 1: each score s becomes c·tanh(s/c), in natural units (softcapped)
  alibi: u32,              // 1: each score of query head h loses slope_h·|i + Lk − Lq − j| (headTerms)
  sinks: u32,              // 1: each row's ℓ counts its query head's sink logit, 2^(sink − m) (headTerms)
  capIn: f32,              // ln(2)/c, at most 2^26: a score in base 2 times capIn is s/c in natural units
  capOut: f32,             // c·log2(e): c·tanh(·) back in base 2
  headTerms: u32,          // where `mask` holds each query head's (slope, sink) pair, base 2, after the mask's values
}

@group(0) @binding(0) var<storage, read> q: array<Packed>;
@group(0) @binding(1) var<storage, read> k: array<Packed>;
@group(0) @binding(2) var<storage, read> v: array<Packed>;
@group(0) @binding(3) var<storage, read_write> O: array<Packed>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> mask: array<f32>;          // additive in base 2 (maskBase2), ≤ EXCLUDED where excluded;
                                                                    // then, with ALiBi or sinks, 2·Hq floats from headTerms
@group(0) @binding(6) var<storage, read> blockFlags: array<u32>;   // 1: the block is computed
@group(0) @binding(7) var<storage, read_write> lse: array<f32>;     // B·Hq·Lq: log-sum-exp of each row
@group(0) @binding(8) var<storage, read> tileLists: array<u32>;     // per (batch, head, query tile): start, count; then tiles.
                                                                    // Without a block mask: each batch's cache length
                                                                    // when `cached` is 1
@group(0) @binding(9) var<storage, read_write> Opart: array<vec4<f32>>;  // per (pair, split, row): unnormalized O
@group(0) @binding(10) var<storage, read_write> ML: array<vec2<f32>>;    // per (pair, split, row): m, ℓ

// Scores in base 2 (s = scale·log2(e)·q·k, |s| < 2^101 by the host's overflow check, float32-range.ts) plus the mask's
// values, which the host writes in base 2 within ±MASK_TOP (maskBase2 in tiled-host.ts: x·log2(e) up to ±MASK_KNEE,
// past it brought linearly within ±MASK_TOP, so that the most negative float32, −3.4e38, stays a finite value, not an
// exclusion, and +3e38 does not overflow to +∞). So every finite score t has |t| < 2^127 − 2^109.
// LOWEST stands for −∞ in m_i (no key yet) and in excluded scores: below every finite t, and any difference of two of
// t, m_i and LOWEST stays below 2^128 − 2^109, within float32's range: exp2 never sees ∞ − ∞, and a row sees a key
// exactly when its m_i > LOWEST.
const LOWEST: f32 = -1.7014118346046923e+38;    // −2^127
const EXCLUDED: f32 = -3.0e38;                  // mask values at or below it exclude the key (the host writes −3.4e38)
const MASK_KNEE: f32 = 8.507059173023462e+37;   // 2^126
const MASK_TOP: f32 = 1.701398853862546e+38;    // 2^127 − 2^110: where the host puts ±3.4028235e38·log2(e)
const MASK_SPAN_INV: f32 = 1.1755122874426309e-38;  // 1 / (MASK_TOP − MASK_KNEE)
const KNEE_LN2: f32 = 5.896644096840839e+37;    // MASK_KNEE·ln 2, rounded
const TAIL_SPAN: f32 = 2.8131590567012047e+38;  // float32's largest value − KNEE_LN2, rounded down

// A row's log-sum-exp in natural units from x = m_i + log2 ℓ_i (base 2): x·ln 2, except past ±MASK_KNEE, where the
// row's maximum is a mask value the host compressed; there the compression is undone (MASK_TOP gives float32's largest
// value, and the result is at most KNEE_LN2 + TAIL_SPAN, which does not round past it). Scores alone stay below 2^101.
fn naturalLse(x: f32) -> f32 {
  let a = abs(x);
  if (a <= MASK_KNEE) { return x * 0.6931471805599453; }
  return sign(x) * (KNEE_LN2 + min((a - MASK_KNEE) * MASK_SPAN_INV, 1.0) * TAIL_SPAN);
}

// Query head hq's ALiBi slope and sink logit in base 2 (×log2 e), which the host writes after the mask's values, so
// that they take no binding of their own (the tiled kernels bind 10 storage buffers already).
fn headTerms(hq: u32) -> vec2<f32> { return vec2<f32>(mask[params.headTerms + 2u * hq], mask[params.headTerms + 2u * hq + 1u]); }

// The step of a key range that visits its n-th tile (n from nBegin, before nEnd): n, or with `reversed` (ALiBi) the
// range run backwards. ALiBi's scores fall away from each row's diagonal, so that visited from the diagonal back a
// causal row meets its largest scores first and m_i rarely moves: each move rescales O (in attention-matrix, a round
// trip through workgroup memory). The sum is the same in any order. An empty range (n = nEnd) gives n.
fn visited(n: u32, nBegin: u32, nEnd: u32, reversed: bool) -> u32 { return select(n, nBegin + nEnd - 1u - n, reversed && n < nEnd); }

// The softcap on scores s in base 2, in natural units: s·ln 2 / c (one multiply by capIn), tanh, times c·log2(e)
// (capOut). tanh's argument is clamped to ±10, where tanh rounds to ±1 in float32 anyway, so that no implementation's
// tanh meets an argument whose exponentials overflow; capIn ≤ 2^26 keeps s·capIn finite (|s| < 2^101).
fn softcapped(s: vec4<f32>) -> vec4<f32> {
  return params.capOut * tanh(clamp(s * params.capIn, vec4<f32>(-10.0), vec4<f32>(10.0)));
}

// Scores s of row i with keys j0 .. j0 + 3 (base 2), softcapped, then less the ALiBi slope times each key's distance
// from the row's bottom-right diagonal, i + Lk − Lq (Lk: the batch's valid keys); the mask comes after (applyMask).
fn scoreTerms(s: vec4<f32>, i: u32, j0: u32, Lk: u32, slope: f32) -> vec4<f32> {
  var r = s;
  if (params.softcap == 1u) { r = softcapped(r); }
  if (params.alibi == 1u) {
    let diagonal = i32(i) + i32(Lk) - i32(params.Lq) - i32(j0);
    r -= slope * vec4<f32>(abs(vec4<i32>(diagonal) - vec4<i32>(0, 1, 2, 3)));
  }
  return r;
}

// A row's ℓ with its head's sink logit counted once, 2^(sink − m), held at 2^126 (past it O is below 2^-118 of max|v|
// either way): the denominator of O where it is normalized (attention-fp32's finish, attention-matrix's last write with
// one key range, or `combine`).
fn sinkTotal(l: f32, m: f32, sink: f32) -> f32 { return l + exp2(min(sink - m, 126.0)); }

// The same row's log-sum-exp in base 2, taken from the larger of m and the sink: a row that saw no key (m = LOWEST,
// ℓ = 0) gets log e^sink = sink.
fn sinkLse(l: f32, m: f32, sink: f32) -> f32 {
  let top = max(m, sink);
  return top + log2(l * exp2(m - top) + exp2(sink - top));
}

// The band of keys row i sees in a batch of Lk valid keys: [i + Lk − Lq − left, i + Lk − Lq + right], signed.
fn bandFirst(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) - params.left; }
fn bandLast(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) + params.right; }

// The flag of the block that holds (row i, key j) of (batch b, head hq).
fn blockKept(b: u32, hq: u32, i: u32, j: u32) -> bool {
  return blockFlags[b * params.blocksB + hq * params.blocksH + (i / params.blockRows) * params.blocksI + (j / params.blockKeys) * params.blocksJ] != 0u;
}
