// attention-matrix: resident-o's matrix-unit loop (rung 24) for attention as models call it, with the heads, groups,
// bands, masks, cache lengths and key ranges of attention-fp32 (whose host runs it: same bindings, same uniform).
//
// Promoted from rung 24 resident-o (packages/tensor/src/24-resident-o) as that file was when this one was made: O
// accumulated in the matrix units between flushes, the lazy rescale, the K and V copies placed for three waits per
// tile, rung 17's high and low f16 parts. The rung is a lesson and stays as it landed (its file has taken changes of
// its own since: docs/sdpa.md's history); this file is the product's and is improved in place, and docs/sdpa.md
// records what it took from which rung and what changed since, and has its measurements.
//
// Changed from resident-o, what a model's attention needs (docs/sdpa.md):
// - No scratch pass: each workgroup reads Q_i, K_j and V_j from the caller's tensors through per-tensor strides (either
//   layout, query head h reading KV head ⌊h / GROUP⌋) and rounds them to f16 as it stages them in workgroup memory,
//   rows past Lq and Lk as zeros. PARTS = 1 keeps one f16 part (f16 tensors lose nothing: they are f16 already);
//   PARTS = 2 keeps rung 17's high and low parts and three products per product (fp32-grade, for f32 tensors).
// - The key tiles a workgroup visits are attention-fp32's: the band of its rows (causal, windows, cache lengths), the
//   host's tile lists under a block mask, and one range of them when the keys are split (merged by `combine`).
// - Where a band edge, Lk or a mask crosses a tile, each score of the softmax gets its exact test (maskedScore); a row
//   that sees no key gets O = 0 and log-sum-exp −∞.
// - With one part, Q is staged unscaled and S is multiplied by scale·log2(e) in f32, so f16 tensors stay exact.
// - Softcap and ALiBi (`softcap`, `alibi` = 1) change each score in f32 before its mask test, in attention-fp32's
//   order; with sinks (`sinks` = 1) each row's ℓ counts its head's sink logit once, where O is normalized (here with
//   one range, else `combine`).
// - Head sizes up to 256 with one part; two parts stop at 128. Above 128, where d is a multiple of 32, two subgroups
//   share each 16 query rows (HALVES = 2, a team: each holds half of d's fragments of Q and of O, so Gemma's 256 takes
//   d = 128's registers); elsewhere the host's wide-head variant of the register arrays (16 fragments of each).
// Taken from rung 25 f16-resident since (docs/sdpa.md has each change's measurements):
// - the softmax reads S and writes P̃ four neighbouring keys at a time;
// - each subgroup's S tile is BC columns wide (always with one part; with two where that fits more subgroups), O
//   passing through it OW columns at a time, and the workgroup's memory kept small (docs/sdpa.md has its sizes);
// - the tile schedule: V_j is read into registers before S_j is computed and staged after it, K_(j+1) read before the
//   softmax and staged after it, so that each read's latency hides behind other work;
// - with one part (FLUSH = 0), O stays in the matrix units for the whole key loop and is rescaled in place (through
//   the subgroup's S rows) only when some row's m_i moves; with two, it is added to f32 registers every FLUSH tiles,
//   so that the fp32-grade sum leaves the matrix units' accumulation as rung 24's did.
// Changed since, for occupancy (docs/sdpa.md): Q_i is staged QR rows at a time in the room of the key tiles, and with
// KV_TILES = 1 V_j is staged in K_j's place once every subgroup has S_j, and K_(j+1) in V_j's once every subgroup has
// added P̃ V_j: a third less memory at d = 128 (two workgroups on an H100 compute unit, not one), one more barrier.
// Changed since, for registers: Q_i's, S's and O's fragments are structs' members reached through a switch, not arrays,
// which the driver's compiler kept in local memory (see QFragments).
// Changed since, for causal bands: the row blocks are dispatched longest first, heads in chunks of 8 (rowBlockOf).
// Why it is fast: the products run on the matrix units (16·16·16 multiply-adds per instruction) and the f16 tensors
// are read once, at half the bytes of f32.

enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

// How Q, K, V and O are held in memory, four elements at a time; the f16 variant replaces these lines (kernel-support.ts).
alias Packed = vec4<f32>;
fn unpack(x: Packed) -> vec4<f32> { return x; }
fn pack(x: vec4<f32>) -> Packed { return x; }

alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;

override D: u32;          // head size, a multiple of 16, at most 256 (128 with PARTS = 2)
override NSG: u32;        // subgroups (of 32 invocations) per workgroup, each with 16 query rows
override PARTS: u32;      // f16 parts per operand: 1 (f16 products) or 2 (high and low: fp32-grade)
override FLUSH: u32 = 0u; // 0: O stays in the matrix units, rescaled in place when some row's m_i moves; else the
                          // tiles accumulated there between additions to O in f32 registers (and at every move)
override CW: u32;         // invocations per workgroup of `combine`
override BC: u32 = 32u;   // keys per tile: 16, 32 or 64
override KV_TILES: u32 = 2u;  // 2: K_j and V_j staged side by side; 1: V_j in K_j's place (less memory, one more
                              // barrier per tile: the host takes it where that fits more workgroups on a compute unit)
override TERMS: u32 = 0u; // 1: softcap, ALiBi or sinks (the uniform's switches say which); 0 compiles them out, since
                          // their code, even switched off, slows the plain loop (docs/sdpa.md has the measurement)
override HALVES: u32 = 1u;  // subgroups per 16 query rows. 1: each holds all of d. 2 (one part): a team of two, each
                            // with half of d's columns of Q and of O, so that d = 256 needs d = 128's registers: each
                            // computes its half's products of S, both sum the two through Sf and run the same online
                            // softmax, each writes the team's P̃ for half of the keys, and ℓ is summed at the end
                            // (the host's team variant: teamRowSum)

override EXACT: u32 = 2u;  // the exact tests of the tiles that need them (`checked`): 2 each score through maskedScore;
                           // 1 the row's band only (no element mask, no block mask read per element); 0 none, where the
                           // host has proved that no tile needs them (no mask, no block mask, no cache lengths, a
                           // band wider than the shape, Lk a multiple of BC): their code, even never run, slowed
                           // Llama's unmasked prefill 0.7% (docs/sdpa.md); the host keeps 2 there at d ≤ 64, faster

const BC_MAX: u32 = 64u;  // most keys per tile
// The register arrays' sizes, for d up to 128; the host's wide-head variant (d up to 256) replaces these two lines, so
// that the arrays of the common head sizes stay their size (larger ones slow d = 64: docs/sdpa.md).
const DK_MAX: u32 = 8u;   // most fragments across d
const O4_MAX: u32 = 16u;  // most vec4 columns of O one invocation keeps: D / 8
const HOLD_MAX: u32 = 8u; // most vec4s of a K or V tile one invocation holds in registers between reading and staging
const TAU: f32 = 8.0;     // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)

// Params, the bindings (q, k, v, O, params, mask, blockFlags, lse, tileLists, Opart, ML), LOWEST, EXCLUDED, bandFirst,
// bandLast, blockKept, headTerms, scoreTerms, sinkTotal, sinkLse and naturalLse are tiled-interface.wgsl's, shared with
// the other tiled kernel and appended by tiledKernel (tiled-host.ts), as is `combine` (combine.wgsl).

override D4V: u32 = D / 4u;          // vec4s per row
override D8: u32 = D / 8u;           // vec4 columns of O per invocation (two invocations per row)
override DK: u32 = D / 16u;          // fragments across d
override KH: u32 = DK / HALVES;      // of those, a subgroup's (of Q and of O)
override BR: u32 = 16u * NSG / HALVES;  // query rows per workgroup
override SR: u32 = 16u * NSG;        // rows of the S and P̃ tiles: 16 per subgroup
override WG: u32 = 32u * NSG;        // invocations per workgroup
override KS: u32 = D + 8u;           // row stride of the staged tiles (f16)
override KT: u32 = BC * KS;          // one part of one K or V tile
override QR: u32 = min(BR, KV_TILES * BC);  // rows of Q_i staged at once, in the room of the K and V tiles
override QL: u32 = QR * KS;          // where Q_i's low parts are staged in KV (PARTS = 2)
override VT: u32 = (KV_TILES - 1u) * PARTS * KT;  // where V_j's parts start in KV
override NC: u32 = BC / 16u;         // key fragments per tile
override TV: u32 = BC * D4V;         // vec4s of one K or V tile
override HOLD: u32 = min(HOLD_MAX, (TV + WG - 1u) / WG);  // of those, held in registers per invocation (the rest
                                                           // are read as they are staged)
override QIN: u32 = BR * D4V / WG;    // vec4s of Q_i's rows per invocation (D / 8 / HALVES ≤ O4_MAX)
// Columns of O that pass through a subgroup's S tile at once (a flush takes D / OW rounds): D, or where that costs
// subgroups per workgroup, BC (16 where BC does not divide D), so that the S tiles are BC columns wide, not D (the host
// chooses; rung 25's page has why narrow tiles pay).
override OW: u32 = D;
override R8: u32 = OW / 8u;          // vec4 columns of O per invocation in one round
override SO: u32 = max(BC, OW) + 4u;  // row stride of a subgroup's S tile, and of O when it passes through (f32)
override PS: u32 = BC + 8u;           // row stride of the P̃ tiles (f16)
override PL: u32 = BR * PS;          // where P̃'s low parts start in P (PARTS = 2)

// Every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their arrays 16-byte aligned.
var<workgroup> KV: array<f16, KV_TILES * PARTS * KT>;  // K_j's parts, then (from VT) V_j's, BC rows of KS each
                                                      // (first Q_i's parts, QR rows at a time)
var<workgroup> Sf: array<f32, SR * SO>;          // per subgroup: its S tile, or O when it passes through (16 rows)
var<workgroup> P: array<f16, PARTS * PL>;        // per 16 rows: P̃ (with PARTS = 2 its high part, then from PL its
                                                 // low part)
var<workgroup> shared4: vec4<u32>;               // x, y: the tile list's start and count; z: the step at which some
                                                 // row's m_i last moved; w: the batch's cache length

/** x rounded to 11 significant bits (f16's precision) on its bits: x − hi(x) is exact and cannot be folded to 0. */
fn hi(x: vec4<f32>) -> vec4<f32> {
  return bitcast<vec4<f32>>((bitcast<vec4<u32>>(x) + vec4<u32>(0x1000u)) & vec4<u32>(0xffffe000u));
}

// Four values into KV at `at` as f16; with PARTS = 2 their high parts there and their low parts `low` halves later.
fn put4(at: u32, x: vec4<f32>, low: u32) {
  var h = x;
  if (PARTS == 2u) {
    h = hi(x);
    let lo = x - h;
    KV[at + low] = f16(lo.x);
    KV[at + low + 1u] = f16(lo.y);
    KV[at + low + 2u] = f16(lo.z);
    KV[at + low + 3u] = f16(lo.w);
  }
  KV[at] = f16(h.x);
  KV[at + 1u] = f16(h.y);
  KV[at + 2u] = f16(h.z);
  KV[at + 3u] = f16(h.w);
}

// Score s of row i with key j: the additive mask added (the host's base-2 values, so that a finite mask value, however
// large, stays a finite score: tiled-interface.wgsl), LOWEST where the key is excluded. Rows past Lq (the last tile's
// padding) read no mask.
fn maskedScore(s: f32, b: u32, hq: u32, i: u32, j: u32, Lk: u32) -> f32 {
  var kept = j < Lk && i32(j) >= bandFirst(i, Lk) && i32(j) <= bandLast(i, Lk);
  if (i >= params.Lq) { return select(LOWEST, s, kept); }
  if (kept && params.blocks == 1u && params.blockTiles == 0u) { kept = blockKept(b, hq, i, j); }
  var r = s;
  if (kept && params.mask == 1u) {
    let add = mask[b * params.maskB + hq * params.maskH + i * params.maskI + j * params.maskJ];
    kept = add > EXCLUDED;
    r += select(0.0, add, kept);
  }
  return select(LOWEST, r, kept);
}

// Four consecutive f32 of Sf.
fn sf4(at: u32) -> vec4<f32> { return vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]); }

// With HALVES = 2, a row's ℓ over the team: `mine` (this member's sum over its keys) plus the teammate's, through the
// first column of the two members' S rows. Called only by the host's team variant of the kernel (attention-matrix.ts,
// TEAM_KERNEL), so that the one-subgroup kernel is compiled without it: written in that kernel, even behind
// `HALVES == 2u` or in a function that returns at once with HALVES = 1, it left the sinks variant at d = 64 with local
// memory on an H200 (docs/sdpa.md).
fn teamRowSum(mine: f32, sBase: u32, sOther: u32) -> f32 {
  workgroupBarrier();   // every subgroup has read its last S tile
  Sf[sBase] = mine;
  workgroupBarrier();
  return mine + Sf[sOther];   // l₀ + l₁ in one member, l₁ + l₀ in the other: the same sum
}

// Tile n of the range's list: the n-th from jFirst, or the host's list's n-th under a block mask.
fn tileAt(n: u32, jFirst: u32, listStart: u32) -> u32 {
  if (params.blocks == 1u) { return tileLists[listStart + n]; }
  return jFirst + n;
}

// Vector e (row e / D4V) of the K or V tile that starts at key0, without a test: for a vector in the tile and before
// Lk. The loop reads a tile's vectors into `held` through these where the whole tile lies before Lk and `held` holds
// none past it (`whole`: WG divides TV, so that e < TV). With the mask's tests in a loop of their own (below), the
// test on each vector cost the H200 1% at Llama's unmasked prefill and 2.5% at the BERT batch (docs/sdpa.md).
fn kWhole(kvBase: u32, key0: u32, e: u32) -> Packed { return k[params.kStart + kvBase + (key0 + e / D4V) * params.kvRow + e % D4V]; }
fn vWhole(kvBase: u32, key0: u32, e: u32) -> Packed { return v[params.vStart + kvBase + (key0 + e / D4V) * params.kvRow + e % D4V]; }
fn whole(key0: u32, Lk: u32) -> bool { return TV % WG == 0u && key0 + BC <= Lk; }
// Where WG is a multiple of D4V, invocation t's vector u of a tile (e = t + WG·u) sits in the tile's row t / D4V +
// u·(WG / D4V), column t % D4V: its address is the invocation's first (laneOf) plus u steps of (WG / D4V) rows, one
// add per vector instead of kWhole's multiply by the row stride. Reading whole tiles this way
// ran Llama's d = 128 prefills 2-4% faster on an H200 (docs/sdpa.md).
override STRIDED: bool = WG % D4V == 0u;
fn laneOf(start: u32, kvBase: u32, t: u32) -> u32 { return start + kvBase + (t / D4V) * params.kvRow + t % D4V; }
// The same with the test: zero past the batch's Lk keys (or past the tile).
fn kVector(kvBase: u32, key0: u32, e: u32, Lk: u32) -> Packed {
  if (e >= TV || key0 + e / D4V >= Lk) { return Packed(); }
  return kWhole(kvBase, key0, e);
}
fn vVector(kvBase: u32, key0: u32, e: u32, Lk: u32) -> Packed {
  if (e >= TV || key0 + e / D4V >= Lk) { return Packed(); }
  return vWhole(kvBase, key0, e);
}

// Where vector e of a K or V tile goes in KV (its first part).
fn tileSlot(e: u32) -> u32 { return (e / D4V) * KS + 4u * (e % D4V); }

// K_(j+1) into KV: the vectors `held` has (read while the softmax ran), then the rest, read now.
fn putNextK(t: u32, kvBase: u32, key0: u32, Lk: u32, held: ptr<function, array<Packed, HOLD_MAX>>) {
  for (var u = 0u; u < HOLD; u++) {
    let e = t + WG * u;
    if (e < TV) { put4(tileSlot(e), unpack((*held)[u]), KT); }
  }
  for (var e = t + WG * HOLD; e < TV; e += WG) { put4(tileSlot(e), unpack(kVector(kvBase, key0, e, Lk)), KT); }
}

// The register fragments (Q_i's and O's across d, the S tile's across its keys): the members of a struct, each reached
// through a switch on its index (getQ, setS, ...), not an array. Indexed by a loop's counter, an array of them was kept
// in local memory by NVIDIA's compiler, every product into O a load and a store there (docs/kernel-registers.md); the
// switch folds away where the loop is unrolled. The host writes these blocks (attention-matrix.ts, fragmentStruct), and
// its wide-head variant (d above 128) gives O 16 members and Q an array of DK_MAX = 16 behind the same accessors.
struct QFragments {
  f0: L, f1: L, f2: L, f3: L, f4: L, f5: L, f6: L, f7: L,
}
fn getQ(f: ptr<function, QFragments>, n: u32) -> L {
  switch n {
    case 0u: { return (*f).f0; }
    case 1u: { return (*f).f1; }
    case 2u: { return (*f).f2; }
    case 3u: { return (*f).f3; }
    case 4u: { return (*f).f4; }
    case 5u: { return (*f).f5; }
    case 6u: { return (*f).f6; }
    default: { return (*f).f7; }
  }
}
fn setQ(f: ptr<function, QFragments>, n: u32, x: L) {
  switch n {
    case 0u: { (*f).f0 = x; }
    case 1u: { (*f).f1 = x; }
    case 2u: { (*f).f2 = x; }
    case 3u: { (*f).f3 = x; }
    case 4u: { (*f).f4 = x; }
    case 5u: { (*f).f5 = x; }
    case 6u: { (*f).f6 = x; }
    default: { (*f).f7 = x; }
  }
}
struct SFragments {
  f0: A, f1: A, f2: A, f3: A,
}
fn getS(f: ptr<function, SFragments>, n: u32) -> A {
  switch n {
    case 0u: { return (*f).f0; }
    case 1u: { return (*f).f1; }
    case 2u: { return (*f).f2; }
    default: { return (*f).f3; }
  }
}
fn setS(f: ptr<function, SFragments>, n: u32, x: A) {
  switch n {
    case 0u: { (*f).f0 = x; }
    case 1u: { (*f).f1 = x; }
    case 2u: { (*f).f2 = x; }
    default: { (*f).f3 = x; }
  }
}
struct OFragments {
  f0: A, f1: A, f2: A, f3: A, f4: A, f5: A, f6: A, f7: A,
}
fn getO(f: ptr<function, OFragments>, n: u32) -> A {
  switch n {
    case 0u: { return (*f).f0; }
    case 1u: { return (*f).f1; }
    case 2u: { return (*f).f2; }
    case 3u: { return (*f).f3; }
    case 4u: { return (*f).f4; }
    case 5u: { return (*f).f5; }
    case 6u: { return (*f).f6; }
    default: { return (*f).f7; }
  }
}
fn setO(f: ptr<function, OFragments>, n: u32, x: A) {
  switch n {
    case 0u: { (*f).f0 = x; }
    case 1u: { (*f).f1 = x; }
    case 2u: { (*f).f2 = x; }
    case 3u: { (*f).f3 = x; }
    case 4u: { (*f).f4 = x; }
    case 5u: { (*f).f5 = x; }
    case 6u: { (*f).f6 = x; }
    default: { (*f).f7 = x; }
  }
}

// The (batch, head) pair and row block of the `rows`-th (pair, row block) in dispatch order: pairs in chunks of
// ROW_ORDER_CHUNK, and within a chunk the last row block of each pair first, then the one before, and so on. Under a
// causal band a row block sees more tiles the later it sits, so the GPU starts the longest first and finishes on short
// ones, instead of ending on the longest of the last pairs (docs/sdpa.md has the measurement); a chunk of pairs reads few heads' K and V at a time.
// `rows` < bh·Tr (the caller returns first past it).
const ROW_ORDER_CHUNK: u32 = 8u;
fn rowBlockOf(rows: u32, Tr: u32) -> vec2<u32> {
  let chunk = rows / (ROW_ORDER_CHUNK * Tr);
  let pairs = min(ROW_ORDER_CHUNK, params.bh - chunk * ROW_ORDER_CHUNK);   // the last chunk's may be fewer
  let inChunk = rows - chunk * ROW_ORDER_CHUNK * Tr;
  return vec2<u32>(chunk * ROW_ORDER_CHUNK + inChunk % pairs, Tr - 1u - inChunk / pairs);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) lane: u32) {
  let Lq = params.Lq;
  let Tr = (Lq + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query head, query tile, range of its tiles)
  let split = w % params.splits;
  if (w / params.splits >= params.bh * Tr) { return; }
  let block = rowBlockOf(w / params.splits, Tr);   // the longest row blocks first
  let pair = block.x;
  let i = block.y;
  let b = pair / params.Hq;
  let hq = pair % params.Hq;
  let qBase = b * params.qBatch + hq * params.qHead;   // Q of (b, hq), in vec4s
  let oBase = b * params.oBatch + hq * params.oHead;   // O of (b, hq)
  let kvBase = b * params.kvBatch + (hq / params.GROUP) * params.kvHead;
  let bm = b + params.batch0;        // the batch in the masks
  if (params.cached == 1u && t == 0u) { shared4.w = min(tileLists[bm], params.Lk); }
  let Lk = select(params.Lk, workgroupUniformLoad(&shared4).w, params.cached == 1u);   // this batch's valid keys
  var terms = vec2<f32>(0.0);        // this query head's ALiBi slope and sink logit (base 2)
  if (TERMS == 1u && (params.alibi == 1u || params.sinks == 1u)) { terms = headTerms(hq); }

  // Q_i through KV (its first BR rows; the low parts from row 2·BC on): each subgroup keeps its KH fragments of each
  // part of its 16 rows in registers for the whole key loop. With one part Q is staged unscaled, so f16 tensors stay
  // exact, and the scale multiplies S in f32 (rounding Q·scale·log2(e) to f16 would add up to 2^-12 of each score's
  // size to its error); with two, the parts of Q·scale·log2(e) carry 22 bits and S needs no further rounding.
  let team = sg / HALVES;            // the subgroup's 16 query rows are the team's
  let half = sg % HALVES;            // and its fragments of Q and O are those from KH·half on
  let qScale = select(1.0, params.scaleLog2, PARTS == 2u);
  let sScale = select(params.scaleLog2, 1.0, PARTS == 2u);
  var qh: QFragments;
  var ql: QFragments;
  // Every round's vectors read first (vector t + WG·u of Q_i's BR rows: QIN of them, D / 8 / HALVES), so that the
  // rounds wait on memory once between them, not once each.
  var qIn: array<Packed, O4_MAX>;
  for (var u = 0u; u < QIN; u++) {
    let e = t + WG * u;
    let row = e / D4V;
    qIn[u] = Packed();
    if (i * BR + row < Lq) { qIn[u] = q[qBase + (i * BR + row) * params.qRow + e % D4V]; }
  }
  for (var q0 = 0u; q0 < BR; q0 += QR) {
    if (q0 > 0u) { workgroupBarrier(); }   // every subgroup has its fragments of the last round
    for (var u = 0u; u < QIN; u++) {
      let e = t + WG * u;
      let row = e / D4V;
      if (row >= q0 && row < q0 + QR) { put4((row - q0) * KS + 4u * (e % D4V), unpack(qIn[u]) * qScale, QL); }
    }
    workgroupBarrier();
    let mine = 16u * team - q0 < QR;   // this round holds the subgroup's rows (u32: false below q0)
    let at = ((16u * team) % QR) * KS + 16u * KH * half;
    for (var kk = 0u; kk < KH; kk++) {
      let fh = subgroupMatrixLoad<L, row_major>(&KV, at + 16u * kk, KS);
      if (mine) { setQ(&qh, kk, fh); }
      if (PARTS == 2u) {
        let fl = subgroupMatrixLoad<L, row_major>(&KV, QL + at + 16u * kk, KS);
        if (mine) { setQ(&ql, kk, fl); }
      }
    }
  }

  // The tiles any row of this workgroup sees, as in attention-fp32: from the first key of its first row's band to
  // the last of its last's, or the host's list of them under a block mask; this workgroup takes range `split`.
  let rowFirst = i * BR;
  let rowLast = min(Lq, rowFirst + BR) - 1u;
  let keyFirst = max(bandFirst(rowFirst, Lk), 0);
  let keyLast = min(bandLast(rowLast, Lk), i32(Lk) - 1);
  var jFirst = 0u;
  var count = 0u;
  var listStart = 0u;
  if (params.blocks == 1u) {
    let entry = 2u * ((bm * params.Hq + hq) * Tr + i);
    if (t == 0u) { shared4.x = tileLists[entry]; shared4.y = tileLists[entry + 1u]; }
    let list = workgroupUniformLoad(&shared4);
    listStart = list.x;
    count = list.y;
  } else if (keyFirst <= keyLast) {
    jFirst = u32(keyFirst) / BC;
    count = u32(keyLast) / BC + 1u - jFirst;
  }
  var nBegin = split * count / params.splits;
  var nEnd = (split + 1u) * count / params.splits;
  if (params.perSplit > 0u) {
    nBegin = min(split * params.perSplit, count);
    nEnd = min(nBegin + params.perSplit, count);
  }
  let allFirst = bandFirst(rowLast, Lk);   // keys every row of the workgroup sees
  let allLast = bandLast(rowFirst, Lk);
  let reversed = TERMS == 1u && params.alibi == 1u;   // ALiBi visits the range from its last tile (visited)

  // This invocation's row r of the subgroup's 16 and its half h of the columns; `rot` turns rows by a bank offset.
  let r = lane / 2u;
  let h = lane % 2u;
  let rot = r / 4u;
  let rowQ = i * BR + 16u * team + r;   // the query row
  let sBase = 16u * sg * SO + r * SO;   // row r of this subgroup's S tile (and of O, when it passes through)
  let sOther = 16u * (sg ^ 1u) * SO + r * SO;   // with HALVES = 2, the same row of its teammate's S tile
  // The keys row rowQ sees where no mask is read per element (EXACT = 1): its band, before Lk.
  let rowFirstKey = bandFirst(rowQ, Lk);
  let rowLastKey = min(bandLast(rowQ, Lk), i32(Lk) - 1);
  let pBase = 16u * team * PS + r * PS;   // row r of the team's P̃ tiles (each member writes half of its keys)
  var m = LOWEST;                       // the row's m_i (base 2): moves only past m_i + TAU
  var l = 0.0;                          // this invocation's half of the row's running sum
  var o: OFragments;                    // the subgroup's 16 rows of O (since the last flush, with FLUSH > 0)
  for (var n = 0u; n < KH; n++) { setO(&o, n, A()); }
  var oRow: array<vec4<f32>, O4_MAX>;   // with FLUSH > 0, row r of O up to the last flush, vec4 columns as in the final write
  if (FLUSH > 0u) { for (var x = 0u; x < D8; x++) { oRow[x] = vec4<f32>(0.0); } }

  // The first tile's K into KV now. In the loop, V_j is read into registers before S_j is computed and written to KV
  // after it, and K_(j+1) is read before the softmax and written after it (with KV_TILES = 1, after P̃ V_j, into V_j's
  // place): each read's latency hides behind other work.
  var held: array<Packed, HOLD_MAX>;   // this invocation's vec4s of the V or K tile it is staging
  var key0 = 0u;                       // the tile's first key: the next tile's, carried from the step before
  let kLane = laneOf(params.kStart, kvBase, t);   // the whole tiles' reads (STRIDED)
  let vLane = laneOf(params.vStart, kvBase, t);
  let stride = (WG / D4V) * params.kvRow;
  workgroupBarrier();  // every subgroup has its Q fragments; KV takes the key tiles
  if (nBegin < nEnd) {
    key0 = tileAt(visited(nBegin, nBegin, nEnd, reversed), jFirst, listStart) * BC;
    for (var e = t; e < TV; e += WG) { put4(tileSlot(e), unpack(kVector(kvBase, key0, e, Lk)), KT); }
  }

  for (var step = nBegin; step < nEnd; step++) {
    workgroupBarrier();  // K_j is in KV; every subgroup is done with V_(j−1) and P̃_(j−1) (and with Q_i's staging)

    // V_j read into the registers while S_j is computed.
    if (whole(key0, Lk) && STRIDED) {
      let at = vLane + key0 * params.kvRow;
      for (var u = 0u; u < HOLD; u++) { held[u] = v[at + u * stride]; }
    } else if (whole(key0, Lk)) {
      for (var u = 0u; u < HOLD; u++) { held[u] = vWhole(kvBase, key0, t + WG * u); }
    } else {
      for (var u = 0u; u < HOLD; u++) { held[u] = vVector(kvBase, key0, t + WG * u, Lk); }
    }

    // S = Q_i K_jᵀ for this subgroup's 16 rows (with PARTS = 2, the three products from the smallest up); the key
    // fragments' chains are interleaved so that each one's latency hides behind the others'.
    var s: SFragments;
    for (var c = 0u; c < NC; c++) { setS(&s, c, A()); }
    for (var kk = 0u; kk < KH; kk++) {
      for (var c = 0u; c < NC; c++) {
        let kh = subgroupMatrixLoad<R, col_major>(&KV, 16u * c * KS + 16u * (KH * half + kk), KS);
        if (PARTS == 2u) {
          let kl = subgroupMatrixLoad<R, col_major>(&KV, KT + 16u * c * KS + 16u * (KH * half + kk), KS);
          setS(&s, c, subgroupMatrixMultiplyAccumulate(getQ(&ql, kk), kh, getS(&s, c)));
          setS(&s, c, subgroupMatrixMultiplyAccumulate(getQ(&qh, kk), kl, getS(&s, c)));
        }
        setS(&s, c, subgroupMatrixMultiplyAccumulate(getQ(&qh, kk), kh, getS(&s, c)));
      }
    }
    for (var c = 0u; c < NC; c++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * c, getS(&s, c), SO); }
    if (KV_TILES == 1u) { workgroupBarrier(); }  // every subgroup is done with K_j: V_j takes its place

    // V_j into KV (every subgroup is done with V_(j−1): the barrier at the top), the vectors past the registers read now.
    for (var u = 0u; u < HOLD; u++) {
      let e = t + WG * u;
      if (e < TV) { put4(VT + tileSlot(e), unpack(held[u]), KT); }
    }
    for (var e = t + WG * HOLD; e < TV; e += WG) { put4(VT + tileSlot(e), unpack(vVector(kvBase, key0, e, Lk)), KT); }
    if (KV_TILES == 2u) { workgroupBarrier(); }  // S is in Sf and V_j in KV; every subgroup is done with K_j

    // K_(j+1) read into the registers while the softmax runs, written to KV after it.
    let more = step + 1u < nEnd;
    var nextKey0 = 0u;
    if (more) {
      nextKey0 = tileAt(visited(step + 1u, nBegin, nEnd, reversed), jFirst, listStart) * BC;
      if (whole(nextKey0, Lk) && STRIDED) {
        let at = kLane + nextKey0 * params.kvRow;
        for (var u = 0u; u < HOLD; u++) { held[u] = k[at + u * stride]; }
      } else if (whole(nextKey0, Lk)) {
        for (var u = 0u; u < HOLD; u++) { held[u] = kWhole(kvBase, nextKey0, t + WG * u); }
      } else {
        for (var u = 0u; u < HOLD; u++) { held[u] = kVector(kvBase, nextKey0, t + WG * u, Lk); }
      }
    }

    // Online softmax of row r in f32, lazily, on the scores (scaled by scale·log2(e)): their maximum over both halves
    // (one shuffle); m_i moves only when the row passes it by more than TAU, and then (past the range's first tile) O
    // must be rescaled by α. Where a band edge, Lk or a mask crosses the tile, each score gets its exact test.
    let checked = params.mask == 1u || (params.blocks == 1u && params.blockTiles == 0u) || key0 + BC > Lk ||
                  i32(key0) < allFirst || i32(key0 + BC - 1u) > allLast;
    // The invocation's BC / 2 keys are vectors of four neighbouring keys, as rung 25 reads them: a quarter of the
    // index arithmetic, and loads and stores the compiler can merge. An array, unlike the fragments: as a struct behind
    // a switch it left local memory at 64-key tiles but made the loop slower (docs/sdpa.md).
    var sv: array<vec4<f32>, BC_MAX / 8u>;
    var mx = LOWEST;
    for (var x = 0u; x < BC / 8u; x++) {
      let col = 4u * (2u * ((x + rot) % (BC / 8u)) + h);
      var s4 = sf4(sBase + col);
      if (HALVES == 2u) { s4 += sf4(sOther + col); }   // the same sum in both: x + y = y + x exactly
      s4 *= sScale;
      // Softcap, then ALiBi: the head's slope times each key's distance from the row's bottom-right diagonal.
      if (TERMS == 1u) { s4 = scoreTerms(s4, rowQ, key0 + col, Lk, terms.x); }
      sv[x] = s4;
    }
    // The exact tests in a loop of their own, so that the loop above reads its vectors without a branch between them:
    // with the branch in it, Llama's prefills ran 8-10% slower on an H200 (docs/sdpa.md).
    // With EXACT = 1 (no element mask, no block mask read per element) the test is the row's band: four compares a
    // vector against the row's first and last key, found once (causal Llama's prefill 2.5% faster on an H200 than
    // through maskedScore: docs/sdpa.md).
    if (EXACT == 1u && checked) {
      for (var x = 0u; x < BC / 8u; x++) {
        let j = vec4<i32>(i32(key0 + 4u * (2u * ((x + rot) % (BC / 8u)) + h))) + vec4<i32>(0, 1, 2, 3);
        sv[x] = select(vec4<f32>(LOWEST), sv[x], (j >= vec4<i32>(rowFirstKey)) & (j <= vec4<i32>(rowLastKey)));
      }
    } else if (EXACT == 2u && checked) {
      for (var x = 0u; x < BC / 8u; x++) {
        let j = key0 + 4u * (2u * ((x + rot) % (BC / 8u)) + h);
        let s4 = sv[x];
        sv[x] = vec4<f32>(maskedScore(s4.x, bm, hq, rowQ, j, Lk), maskedScore(s4.y, bm, hq, rowQ, j + 1u, Lk),
                          maskedScore(s4.z, bm, hq, rowQ, j + 2u, Lk), maskedScore(s4.w, bm, hq, rowQ, j + 3u, Lk));
      }
    }
    for (var x = 0u; x < BC / 8u; x++) { mx = max(mx, max(max(sv[x].x, sv[x].y), max(sv[x].z, sv[x].w))); }
    mx = max(mx, subgroupShuffleXor(mx, 1u));
    var alpha = 1.0;
    if (mx > m + TAU) {
      alpha = exp2(m - mx);
      m = mx;
      l *= alpha;
      if (step > nBegin) { shared4.z = step; }   // O holds earlier tiles: rescale it by α before this one is added
    }
    var sum = 0.0;   // of this invocation's P̃; with HALVES = 2 its teammate's same invocation has the other keys'
    for (var x = 0u; x < BC / 8u; x++) {
      // With HALVES = 2 the team's two members write P̃ for alternate vectors of keys. (Written as a skip, so that with
      // HALVES = 1 this is the loop as it was: a form with sv's index chosen by a select left the sinks variant 64 bytes
      // of local memory on an H200, 1.600 → 1.922 ms: docs/sdpa.md.)
      if (HALVES == 2u && x % 2u != half) { continue; }
      let at = pBase + 4u * (2u * ((x + rot) % (BC / 8u)) + h);
      let p = exp2(sv[x] - m);
      sum += (p.x + p.y) + (p.z + p.w);
      if (PARTS == 2u) {
        let ph = hi(p);
        let pl = p - ph;
        P[at] = f16(ph.x);
        P[at + 1u] = f16(ph.y);
        P[at + 2u] = f16(ph.z);
        P[at + 3u] = f16(ph.w);
        P[PL + at] = f16(pl.x);
        P[PL + at + 1u] = f16(pl.y);
        P[PL + at + 2u] = f16(pl.z);
        P[PL + at + 3u] = f16(pl.w);
      } else {
        P[at] = f16(p.x);
        P[at + 1u] = f16(p.y);
        P[at + 2u] = f16(p.z);
        P[at + 3u] = f16(p.w);
      }
    }
    l += sum;
    if (KV_TILES == 2u && more) { putNextK(t, kvBase, nextKey0, Lk, &held); }

    // The P̃ tiles are in workgroup memory and every S tile is read (the barrier in the uniform load). Where some
    // row's m_i moved, O is rescaled by α: with FLUSH = 0 in place, through the subgroup's Sf rows; with FLUSH > 0 by
    // a flush, oRow = α · (oRow + o), as every FLUSH tiles, and o starts again from zero.
    let moved = workgroupUniformLoad(&shared4).z == step && step > nBegin;
    let flush = FLUSH > 0u && (moved || ((step - nBegin) % max(FLUSH, 1u) == 0u && step > nBegin));
    if (moved || flush) {
      for (var n0 = 0u; n0 < KH; n0 += OW / 16u) {
        if (n0 > 0u) { workgroupBarrier(); }  // the last round is read
        for (var n = 0u; n < OW / 16u; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, getO(&o, n0 + n), SO); }
        workgroupBarrier();
        for (var y = 0u; y < R8; y++) {
          let at = sBase + 4u * (2u * ((y + rot) % R8) + h);
          if (FLUSH > 0u) {
            let x = n0 / (OW / 16u) * R8 + y;
            oRow[x] = (oRow[x] + sf4(at)) * alpha;
          } else {
            let scaled = sf4(at) * alpha;
            Sf[at] = scaled.x;
            Sf[at + 1u] = scaled.y;
            Sf[at + 2u] = scaled.z;
            Sf[at + 3u] = scaled.w;
          }
        }
        if (FLUSH == 0u) {
          workgroupBarrier();
          for (var n = 0u; n < OW / 16u; n++) { setO(&o, n0 + n, subgroupMatrixLoad<A, row_major>(&Sf, 16u * sg * SO + 16u * n, SO)); }
        }
      }
      if (FLUSH > 0u) { for (var n = 0u; n < KH; n++) { setO(&o, n, A()); } }
    }

    // o += P̃ V_j (with PARTS = 2, the three products from the smallest up).
    for (var c = 0u; c < NC; c++) {
      let ph = subgroupMatrixLoad<L, row_major>(&P, 16u * team * PS + 16u * c, PS);
      var pl = ph;
      if (PARTS == 2u) { pl = subgroupMatrixLoad<L, row_major>(&P, PL + 16u * team * PS + 16u * c, PS); }
      for (var n = 0u; n < KH; n++) {
        let vh = subgroupMatrixLoad<R, row_major>(&KV, VT + 16u * c * KS + 16u * (KH * half + n), KS);
        if (PARTS == 2u) {
          let vl = subgroupMatrixLoad<R, row_major>(&KV, VT + KT + 16u * c * KS + 16u * (KH * half + n), KS);
          setO(&o, n, subgroupMatrixMultiplyAccumulate(pl, vh, getO(&o, n)));
          setO(&o, n, subgroupMatrixMultiplyAccumulate(ph, vl, getO(&o, n)));
        }
        setO(&o, n, subgroupMatrixMultiplyAccumulate(ph, vh, getO(&o, n)));
      }
    }
    if (KV_TILES == 1u && more) {
      workgroupBarrier();  // every subgroup is done with V_j: K_(j+1) takes its place
      putNextK(t, kvBase, nextKey0, Lk, &held);
    }
    key0 = nextKey0;
  }

  // The row's O (o, plus oRow with FLUSH > 0) through the subgroup's Sf rows, OW columns a round, and ℓ_i over both
  // halves: O_i = O / ℓ_i (0 for a row that saw no key) and its log-sum-exp (−∞), or with several ranges this range's
  // unnormalized O, m and ℓ for `combine`.
  // With HALVES = 2 the host's team variant of this line also adds the teammate's sum of the row's other keys
  // (teamRowSum).
  let lRow = l + subgroupShuffleXor(l, 1u);
  let seen = m > LOWEST;
  // With sinks and one range, ℓ counts the head's sink logit once, 2^(sink − m) (held at 2^126, as attention-fp32's
  // finish holds it); with several, `combine` counts it.
  var total = lRow;
  let sinks = TERMS == 1u && params.sinks == 1u;
  if (sinks) { total = sinkTotal(lRow, m, terms.y); }
  let part = (pair * params.splits + split) * Lq + rowQ;
  for (var n0 = 0u; n0 < KH; n0 += OW / 16u) {
    workgroupBarrier();  // every subgroup has read its last S tile, or the last round
    for (var n = 0u; n < OW / 16u; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, getO(&o, n0 + n), SO); }
    workgroupBarrier();
    if (rowQ < Lq) {
      for (var y = 0u; y < R8; y++) {
        let turned = 2u * ((y + rot) % R8) + h;
        var value = sf4(sBase + 4u * turned);
        if (FLUSH > 0u) { value += oRow[n0 / (OW / 16u) * R8 + y]; }
        let c4 = (KH * half + n0) * 4u + turned;   // the vec4 column of O
        if (params.splits == 1u) {
          O[oBase + rowQ * params.oRow + c4] = pack(select(vec4<f32>(0.0), value / total, seen));
        } else {
          Opart[part * D4V + c4] = value;
        }
      }
    }
  }
  if (rowQ >= Lq || h != 0u || half != 0u) { return; }
  if (params.splits == 1u) {
    if (params.writeLse == 1u) {
      var x = m + log2(lRow);
      if (sinks) { x = sinkLse(lRow, m, terms.y); }
      lse[pair * Lq + rowQ] = select(bitcast<f32>(params.minusInfinity), naturalLse(x), seen || sinks);
    }
  } else {
    ML[part] = vec2<f32>(m, lRow);
  }
}
