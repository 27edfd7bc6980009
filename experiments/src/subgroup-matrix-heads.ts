/**
 * attention-matrix's f16 tile loop at head sizes 64 to 256, measured in the subgroup-matrix microbenchmark
 * (docs/subgroup-matrix-bench.md, "The product's loop at d = 64-256"): what the loop's design can reach at each d,
 * apart from the product's bookkeeping (tile lists, masks, the lazy rescale of O, the final write).
 *
 * Each design does the product's work per tile of BC keys, for NSG subgroups of 16 query rows sharing the tile:
 * S = Q_i K_jᵀ in 16×16×16 multiply-accumulates (Q_i's d/16 fragments held in registers), S stored to workgroup memory
 * (rows of BC + 4 f32), P̃ = 2^(S·c − m) written in f16 four neighbouring keys per invocation and step (two invocations
 * per row, each row's vectors in the product's order turned by a bank offset, m the row's running maximum, moved
 * lazily as the product moves it), P̃ loaded back and O += P̃ V_j into d/16
 * fragments held in the matrix units. K_j and V_j have rows of d + 8 f16. What the designs change:
 *   NSG, BC:  subgroups per workgroup (each K/V tile staged once for 16·NSG rows) and keys per tile;
 *   kvTiles:  1: V_j staged where K_j was, as the product does where that fits more workgroups (four barriers per
 *             tile); 2: K_j and V_j side by side (three);
 *   stage:    K_j and V_j read from a 16 MiB storage buffer (L2-resident, as the product's heads are) and staged each
 *             tile on the product's schedule (V_j read into registers before S_j, K_(j+1) before the elementwise
 *             pass); without it the tiles stay as first written;
 *   softmax:  'none' stores S and loads P̃ with nothing between: the bound on what the elementwise pass costs;
 *   barrier:  'none' drops the barriers: not a valid kernel (each subgroup reads what others wrote), a bound;
 *   pipeline: S_(j+1)'s products issued before tile j's elementwise pass, two S and P̃ tiles, one barrier per tile
 *             (K and V side by side, not staged);
 *   oShared:  the last oShared of O's d/16 fragments accumulated in workgroup memory (loaded, multiplied, stored each
 *             tile) instead of the matrix units' registers.
 * Launches keep the work fixed per head size: HEAD_FRAGMENTS query fragments of HEAD_KEYS keys (or the run's count),
 * however grouped.
 */

/** Query fragments (16 rows) in all: 64 per SM of an H100 or H200. */
export const HEAD_FRAGMENTS = 132 * 64;
/** Keys per query fragment, unless the run names another count. */
export const HEAD_KEYS = 8192;
/** f16 vectors of four in the storage buffer the staged designs read (16 MiB). */
const SOURCE_VECTORS = 2 * 1024 * 1024;
export const HEAD_SOURCE_BYTES = SOURCE_VECTORS * 8;

export interface HeadDesign {
  label: string;
  /** Head size, a multiple of 16. */
  D: number;
  /** Keys per tile: 16, 32 or 64. */
  BC: number;
  /** Subgroups (16 query rows each) per workgroup. */
  NSG: number;
  kvTiles: 1 | 2;
  stage: boolean;
  softmax: 'exp4' | 'none';
  barrier: 'workgroup' | 'none';
  pipeline?: boolean;
  oShared?: number;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, k) => k);
const lines = (n: number, line: (k: number) => string): string => range(n).map(line).join('\n');

/** Bytes of workgroup memory a design declares (what decides how many of its workgroups share a compute unit). */
export function headDesignBytes({ D, BC, NSG, kvTiles, pipeline = false, oShared = 0 }: HeadDesign): number {
  const ROWS = 16 * NSG;
  const buffers = pipeline ? 2 : 1;
  return 2 * kvTiles * BC * (D + 8) + buffers * (4 * ROWS * (BC + 4) + 2 * ROWS * (BC + 8)) + (oShared > 0 ? 4 * ROWS * (16 * oShared + 4) : 0);
}

/** FLOPs of one launch, counted as the sdpa bench counts them: 4·rows·keys·d. */
export function headDesignFlops({ D }: HeadDesign, keys = HEAD_KEYS): number {
  return HEAD_FRAGMENTS * 16 * keys * 4 * D;
}

/** Why a design cannot be generated, or undefined. */
export function headDesignProblem({ D, BC, NSG, kvTiles, stage, pipeline = false, oShared = 0 }: HeadDesign): string | undefined {
  if (D % 16 !== 0 || D < 16 || D > 256) return `d = ${D}: a multiple of 16 up to 256`;
  if (![16, 32, 64].includes(BC)) return `BC = ${BC}: 16, 32 or 64 keys`;
  if ((BC * D) / 4 % (32 * NSG) !== 0) return `a tile of ${BC}×${D} is not a whole number of vectors per invocation`;
  if (pipeline && (kvTiles !== 2 || stage)) return 'the pipelined design keeps K and V side by side, not staged';
  if (oShared < 0 || oShared >= D / 16) return `oShared = ${oShared}: fewer than d/16 fragments`;
  return undefined;
}

/** The WGSL of a design, each query fragment against `keys` keys (a multiple of 64). */
export function headDesignKernel(design: HeadDesign, keys = HEAD_KEYS): string {
  const problem = headDesignProblem(design);
  if (problem) throw new Error(`${design.label}: ${problem}`);
  const { D, BC, NSG, kvTiles, stage, softmax, barrier, pipeline = false, oShared = 0 } = design;
  const DK = D / 16; // fragments across d
  const NC = BC / 16; // fragments across the tile's keys
  const WG = 32 * NSG;
  const ROWS = 16 * NSG;
  const HOLD = (BC * D) / 4 / WG; // vectors of a tile per invocation
  const TILES = keys / BC;
  const DR = DK - oShared; // O's fragments in registers
  const sync = barrier === 'workgroup' ? 'workgroupBarrier();' : '';
  const buf = (b: string, size: string): string => (pipeline ? `${b} * ${size}` : '0u');

  /** S = Q_i K_jᵀ into s0…, the key fragments' chains interleaved. */
  const products = `${lines(NC, (c) => `    var s${c} = A();`)}
${range(DK)
  .flatMap((kk) => range(NC).map((c) => `    s${c} = subgroupMatrixMultiplyAccumulate(q${kk}, subgroupMatrixLoad<R, col_major>(&KV, ${16 * c}u * KS + ${16 * kk}u, KS), s${c});`))
  .join('\n')}`;
  const storeS = (b: string): string =>
    lines(NC, (c) => `    subgroupMatrixStore<row_major>(&Sf, ${buf(b, 'SF')} + 16u * sg * SO + ${16 * c}u, s${c}, SO);`);
  /** P̃ = 2^(S·c − m) four keys per invocation and step, m moved lazily, ℓ summed. */
  const elementwise = (b: string): string =>
    softmax === 'none'
      ? ''
      : `    {
      var mx = -3.0e38;
${lines(NC * 2, (x) => `      let a${x} = ${buf(b, 'SF')} + sAt + 8u * ((${x}u + rot) % ${NC * 2}u);
      let v${x} = vec4<f32>(Sf[a${x}], Sf[a${x} + 1u], Sf[a${x} + 2u], Sf[a${x} + 3u]) * 1.4426950408889634;
      mx = max(mx, max(max(v${x}.x, v${x}.y), max(v${x}.z, v${x}.w)));`)}
      mx = max(mx, subgroupShuffleXor(mx, 1u));
      if (mx > m + 8.0) { m = mx; }
${lines(NC * 2, (x) => `      { let p = exp2(v${x} - m);
        l += (p.x + p.y) + (p.z + p.w);
        let at = ${buf(b, 'PF')} + pAt + 8u * ((${x}u + rot) % ${NC * 2}u);
        P[at] = f16(p.x); P[at + 1u] = f16(p.y); P[at + 2u] = f16(p.z); P[at + 3u] = f16(p.w); }`)}
    }`;
  /** O += P̃ V_j: each V fragment loaded once per key fragment; the last oShared of O through workgroup memory. */
  const accumulate = (b: string): string =>
    range(NC)
      .map((c) => `    {
      let pf = subgroupMatrixLoad<L, row_major>(&P, ${buf(b, 'PF')} + 16u * sg * PS + ${16 * c}u, PS);
${lines(DK, (n) => {
  const vf = `subgroupMatrixLoad<R, row_major>(&KV, VT + ${16 * c}u * KS + ${16 * n}u, KS)`;
  if (n < DR) return `      o${n} = subgroupMatrixMultiplyAccumulate(pf, ${vf}, o${n});`;
  const at = `16u * sg * OS + ${16 * (n - DR)}u`;
  return `      subgroupMatrixStore<row_major>(&Ow, ${at}, subgroupMatrixMultiplyAccumulate(pf, ${vf}, subgroupMatrixLoad<A, row_major>(&Ow, ${at}, OS)), OS);`;
})}
    }`)
      .join('\n');
  /** The staged designs' reads of a tile into h0… and their stores into KV at `base`. */
  const read = (tile: string): string => lines(HOLD, (u) => `    h${u} = src[${tile} + t + ${WG * u}u];`);
  const put = (base: string): string =>
    lines(HOLD, (u) => `    { let e = t + ${WG * u}u; let at = ${base} + (e / ${D / 4}u) * KS + 4u * (e % ${D / 4}u);
      KV[at] = h${u}.x; KV[at + 1u] = h${u}.y; KV[at + 2u] = h${u}.z; KV[at + 3u] = h${u}.w; }`);
  const kTile = (step: string): string => `((wid.x * 7u + ${step}) % ${Math.floor(SOURCE_VECTORS / 2 / (HOLD * WG))}u) * ${HOLD * WG}u`;
  const vTile = (step: string): string => `${SOURCE_VECTORS / 2}u + ${kTile(step)}`;

  const step = `    ${stage ? `\n${read(vTile('it'))}` : ''}
    ${sync}  // K_j is in KV; every subgroup is done with V_(j−1) and P̃_(j−1)
${products}
${storeS('0u')}
    ${kvTiles === 1 ? sync : ''}  // (one tile) every subgroup is done with K_j: V_j takes its place
${stage ? put('VT') : ''}
    ${kvTiles === 2 ? sync : ''}  // (two tiles) S is in Sf, V_j in KV
${stage ? read(kTile('it + 1u')) : ''}
${elementwise('0u')}
${stage && kvTiles === 2 ? put('0u') : ''}
    ${sync}  // P̃ is in P (the product's workgroupUniformLoad)
${accumulate('0u')}
    ${kvTiles === 1 ? sync : ''}  // (one tile) every subgroup is done with V_j: K_(j+1) takes its place
${stage && kvTiles === 1 ? put('0u') : ''}`;
  const loop = pipeline
    ? `  {
${products}
${storeS('0u')}
  }
  ${sync}
${elementwise('0u')}
  {
${products}
${storeS('1u')}
  }
  ${sync}
  for (var it = 0u; it < ${TILES}u; it++) {
    let cur = it % 2u;
    let other = 1u - cur;
${accumulate('cur')}
    {
${products}
${elementwise('other')}
${storeS('cur')}
    }
    ${sync}
  }`
    : `  for (var it = 0u; it < ${TILES}u; it++) {
${step}
  }`;
  const buffers = pipeline ? 2 : 1;
  return `
enable f16;
enable chromium_experimental_subgroup_matrix;
enable subgroups;
alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
${stage ? '@group(0) @binding(1) var<storage, read> src: array<vec4<f16>>;' : ''}
const KS = ${D + 8}u;   // K_j and V_j rows
const SO = ${BC + 4}u;  // S rows (f32)
const PS = ${BC + 8}u;  // P̃ rows
const OS = ${16 * oShared + 4}u;  // rows of O's fragments in workgroup memory
const SF = ${ROWS * (BC + 4)}u;  // one S tile
const PF = ${ROWS * (BC + 8)}u;  // one P̃ tile
const VT = ${kvTiles === 2 ? BC * (D + 8) : 0}u;  // where V_j starts in KV
var<workgroup> KV: array<f16, ${kvTiles * BC * (D + 8)}>;
var<workgroup> Sf: array<f32, ${buffers * ROWS * (BC + 4)}>;
var<workgroup> P: array<f16, ${buffers * ROWS * (BC + 8)}>;
${oShared > 0 ? `var<workgroup> Ow: array<f32, ${ROWS * (16 * oShared + 4)}>;` : ''}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u, @builtin(subgroup_id) sg: u32) {
  for (var e = t; e < ${kvTiles * BC * (D + 8)}u; e += ${WG}u) { KV[e] = f16(f32(e % 5u) * 0.01); }
${oShared > 0 ? `  for (var e = t; e < ${ROWS * (16 * oShared + 4)}u; e += ${WG}u) { Ow[e] = 0.0; }` : ''}
  workgroupBarrier();
${lines(DK, (k) => `  let q${k} = subgroupMatrixLoad<L, row_major>(&KV, ${16 * k}u, KS);`)}
${lines(DR, (n) => `  var o${n} = A();`)}
${stage ? lines(HOLD, (u) => `  var h${u} = vec4<f16>();`) : ''}
  let lane = t % 32u;
  let sAt = (16u * sg + lane / 2u) * SO + 4u * (lane % 2u);
  let pAt = (16u * sg + lane / 2u) * PS + 4u * (lane % 2u);
  let rot = lane / 8u;   // the row's vectors taken in a turned order, as the product turns them by a bank offset
  var m = -3.0e38;
  var l = 0.0;
  ${sync}
${loop}
  let first = ((wid.x * ${NSG}u + sg) % 512u) * ${16 * D}u;
${lines(DR, (n) => `  subgroupMatrixStore<row_major>(&out, first + ${16 * n}u, o${n}, ${D}u);`)}
${lines(oShared, (n) => `  subgroupMatrixStore<row_major>(&out, first + ${16 * (DR + n)}u, subgroupMatrixLoad<A, row_major>(&Ow, 16u * sg * OS + ${16 * n}u, OS), ${D}u);`)}
  if (l < 0.0) { out[0] = m; }
}`;
}

const AS_THE_PRODUCT = { NSG: 4, kvTiles: 1, stage: true, softmax: 'exp4', barrier: 'workgroup' } as const;

/** The designs measured, d = 128 (the Llama prefills') first, each with its workgroups. */
export function headDesigns(): (HeadDesign & { workgroups: number })[] {
  const d128 = { ...AS_THE_PRODUCT, D: 128, BC: 32 };
  const designs: HeadDesign[] = [
    { ...d128, label: 'd = 128: the product\'s loop (32-key tiles, V where K was, staged from a buffer)' },
    { ...d128, label: 'd = 128: the same, tiles not staged', stage: false },
    { ...d128, label: 'd = 128: bound: no elementwise pass', softmax: 'none' },
    { ...d128, label: 'd = 128: bound: no elementwise pass, tiles not staged', softmax: 'none', stage: false },
    { ...d128, label: 'd = 128: bound: no barriers, tiles not staged', barrier: 'none', stage: false },
    { ...d128, label: 'd = 128: K and V side by side', kvTiles: 2 },
    { ...d128, label: 'd = 128: 16-key tiles', BC: 16 },
    { ...d128, label: 'd = 128: 2 subgroups per workgroup', NSG: 2 },
    { ...d128, label: 'd = 128: O\'s last 2 of 8 fragments in workgroup memory', oShared: 2 },
    { ...d128, label: 'd = 128: S_(j+1)\'s products before tile j\'s elementwise pass (tiles side by side, not staged)', kvTiles: 2, stage: false, pipeline: true },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: the product\'s loop (16-key tiles)' },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: bound: no elementwise pass', softmax: 'none' },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: the same loop, tiles not staged', stage: false },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: 8 subgroups per workgroup (each K/V tile staged for 128 rows)', NSG: 8 },
    { ...AS_THE_PRODUCT, D: 64, BC: 32, label: 'd = 64: 32-key tiles' },
    { ...AS_THE_PRODUCT, D: 64, BC: 32, label: 'd = 64: 32-key tiles, 8 subgroups per workgroup', NSG: 8 },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: K and V side by side', kvTiles: 2 },
    { ...AS_THE_PRODUCT, D: 64, BC: 16, label: 'd = 64: K and V side by side, 8 subgroups per workgroup', kvTiles: 2, NSG: 8 },
    { ...AS_THE_PRODUCT, D: 96, BC: 32, label: 'd = 96: the product\'s loop (32-key tiles)' },
    { ...AS_THE_PRODUCT, D: 256, BC: 16, label: 'd = 256: one subgroup per 16 rows (16-key tiles)' },
    { ...AS_THE_PRODUCT, D: 256, BC: 16, label: 'd = 256: bound: no elementwise pass', softmax: 'none' },
  ];
  return designs.map((design) => ({ ...design, workgroups: HEAD_FRAGMENTS / design.NSG }));
}
