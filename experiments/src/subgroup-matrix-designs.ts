/**
 * Designs of the f16 FlashAttention tile loop past the softmax round trip, measured before a rung is built on one
 * (docs/subgroup-matrix-bench.md, "Designs past the round trip"). Every design does the work of
 * subgroup-matrix-kernels.ts's `fa` loop: per tile of 64 keys at d = 64, S = Q Kᵀ in 16×16×16 multiply-accumulates,
 * S stored to workgroup memory, P = 2^(S − 1) computed in f16 by the subgroup's invocations, P loaded back and
 * O += P V. Tiles have rows of 72 f16 (the padded stride that removes bank conflicts). Q stays in registers for the
 * whole loop in every design. What they change:
 *   rows:      query fragments (16 rows each) per subgroup: with 2, each K and V fragment loaded from workgroup memory
 *              feeds two multiply-accumulates;
 *   pipeline:  S and P double-buffered; tile j + 1's products are issued before tile j's softmax, and one barrier per
 *              tile orders all of it (instead of two);
 *   barrier:   'none' drops the barriers: each subgroup only reads what it wrote itself, but WGSL orders that only
 *              through a workgroup barrier, so this is not a valid kernel, only the bound on what barriers cost;
 *   softmax:   'exp4' and 'exp8' give each invocation 4 or 8 neighbouring elements per step (a quarter or an eighth of
 *              the index arithmetic, loads and stores the compiler can merge); 'copy' writes P = S without the exp2, 'none' skips the elementwise
 *              pass (S is still stored and P loaded): bounds on what the exponentials and the elementwise pass cost.
 * Launches keep the work fixed: 132·64 query fragments of 512 tiles each, whatever the fragments per workgroup.
 */

/** Tiles of keys per query fragment. */
export const DESIGN_TILES = 512;
/** Query fragments in all (as many as the one-subgroup workgroups of subgroup-matrix-kernels.ts). */
export const FRAGMENTS = 132 * 64;
/** Row stride of every f16 tile, and of the f32 S tile. */
const S = 72;

export interface LoopDesign {
  label: string;
  /** Subgroups per workgroup. */
  NSG: number;
  /** Query fragments per subgroup. */
  rows: 1 | 2;
  pipeline: boolean;
  barrier: 'workgroup' | 'none';
  softmax?: 'exp' | 'exp4' | 'exp8' | 'copy' | 'none';
}

const range = (n: number): number[] => Array.from({ length: n }, (_, k) => k);

/** The WGSL of a design. */
export function designKernel({ NSG, rows, pipeline, barrier, softmax: elementwise = 'exp' }: LoopDesign): string {
  const ROWS = 16 * rows * NSG;
  const buffers = pipeline ? 2 : 1;
  const sync = barrier === 'workgroup' ? 'workgroupBarrier();' : '';
  const base = `sg * ${16 * rows}u`; // this subgroup's first row
  const sOffset = (buf: string, r: number, n: number): string => `${buf} * ${ROWS * S}u + (${base} + ${16 * r}u) * ${S}u + ${16 * n}u`;
  const pOffset = (buf: string, r: number, k: number): string => `${buf} * ${ROWS * S}u + (${base} + ${16 * r}u) * ${S}u + ${16 * k}u`;
  /** S = Q Kᵀ into s_r_n: each K fragment loaded once and used by every query fragment of the subgroup. */
  const products = range(4)
    .flatMap((n) => [
      ...range(rows).map((r) => `    var s${r}${n} = A();`),
      ...range(4).flatMap((k) => [
        `    { let kf = subgroupMatrixLoad<R, col_major>(&Kt, ${n * 16 * S}u + ${16 * k}u, ${S}u);`,
        ...range(rows).map((r) => `      s${r}${n} = subgroupMatrixMultiplyAccumulate(q${r}${k}, kf, s${r}${n});`),
        '    }',
      ]),
    ])
    .join('\n');
  const store = (buf: string): string => range(rows).flatMap((r) => range(4).map((n) => `    subgroupMatrixStore<row_major>(&Sf, ${sOffset(buf, r, n)}, s${r}${n}, ${S}u);`)).join('\n');
  /** P = 2^(S − 1) for `W` neighbouring elements per invocation and step (W a multiple of 4). */
  const neighbours = (W: number, buf: string): string => `    for (var e = ${W}u * (t % 32u); e < ${16 * rows * 64}u; e += ${32 * W}u) {
      let at = ${buf} * ${ROWS * S}u + (${base} + e / 64u) * ${S}u + e % 64u;
${range(W / 4)
  .map((v) => `      { let x = exp2(vec4<f32>(Sf[at + ${4 * v}u], Sf[at + ${4 * v + 1}u], Sf[at + ${4 * v + 2}u], Sf[at + ${4 * v + 3}u]) - 1.0);
        Pt[at + ${4 * v}u] = f16(x.x); Pt[at + ${4 * v + 1}u] = f16(x.y); Pt[at + ${4 * v + 2}u] = f16(x.z); Pt[at + ${4 * v + 3}u] = f16(x.w); }`)
  .join('\n')}
    }`;
  /** P = 2^(S − 1) for this subgroup's rows, by its 32 invocations. */
  const softmax = (buf: string): string =>
    elementwise === 'none'
      ? ''
      : elementwise === 'exp4' || elementwise === 'exp8'
        ? neighbours(elementwise === 'exp4' ? 4 : 8, buf)
        : `    for (var e = t % 32u; e < ${16 * rows * 64}u; e += 32u) {
      let at = ${buf} * ${ROWS * S}u + (${base} + e / 64u) * ${S}u + e % 64u;
      Pt[at] = f16(${elementwise === 'exp' ? 'exp2(Sf[at] - 1.0)' : 'Sf[at]'});
    }`;
  /** O += P V: each V fragment loaded once and used by every P fragment of the subgroup. */
  const accumulate = (buf: string): string =>
    range(4)
      .flatMap((k) => [
        ...range(rows).map((r) => `    let p${r}${k} = subgroupMatrixLoad<L, row_major>(&Pt, ${pOffset(buf, r, k)}, ${S}u);`),
        ...range(4).flatMap((n) => [
          `    { let vf = subgroupMatrixLoad<R, row_major>(&Kt, ${16 * k * S}u + ${16 * n}u, ${S}u);`,
          ...range(rows).map((r) => `      o${r}${n} = subgroupMatrixMultiplyAccumulate(p${r}${k}, vf, o${r}${n});`),
          '    }',
        ]),
      ])
      .join('\n');
  const loop = pipeline
    ? // Prologue: S_0 stored, P_0 written, S_1 stored. Then per tile: O += P_j V, S_{j+2}'s products, P_{j+1}, S_{j+2}
      // stored, one barrier. What a barrier separates lives in the other buffer.
      `  {
${products}
${store('0u')}
  }
  ${sync}
${softmax('0u')}
  {
${products}
${store('1u')}
  }
  ${sync}
  for (var it = 0u; it < ${DESIGN_TILES}u; it++) {
    let cur = it % 2u;
    let other = 1u - cur;
    {
${accumulate('cur')}
    }
${products}
${softmax('other')}
${store('cur')}
    ${sync}
  }`
    : `  for (var it = 0u; it < ${DESIGN_TILES}u; it++) {
${products}
${store('0u')}
    ${sync}
${softmax('0u')}
    ${sync}
    {
${accumulate('0u')}
    }
  }`;
  return `
enable f16;
enable chromium_experimental_subgroup_matrix;
enable subgroups;
alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
var<workgroup> Qt: array<f16, ${ROWS * S}>;   // the workgroup's query rows
var<workgroup> Kt: array<f16, ${64 * S}>;     // 64 keys × d (also used as V)
var<workgroup> Pt: array<f16, ${buffers * ROWS * S}>;
var<workgroup> Sf: array<f32, ${buffers * ROWS * S}>;
@compute @workgroup_size(${32 * NSG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u${NSG > 1 ? ', @builtin(subgroup_id) sg: u32' : ''}) {${NSG > 1 ? '' : '\n  let sg = 0u;'}
  for (var e = t; e < ${64 * S}u; e += ${32 * NSG}u) { Kt[e] = f16(f32(e % 5u) * 0.01); }
  for (var e = t; e < ${ROWS * S}u; e += ${32 * NSG}u) { Qt[e] = f16(f32(e % 7u) * 0.01); }
  workgroupBarrier();
${range(rows)
  .flatMap((r) => range(4).map((k) => `  let q${r}${k} = subgroupMatrixLoad<L, row_major>(&Qt, (${base} + ${16 * r}u) * ${S}u + ${16 * k}u, ${S}u);`))
  .join('\n')}
${range(rows)
  .flatMap((r) => range(4).map((n) => `  var o${r}${n} = A();`))
  .join('\n')}
${loop}
  let first = (wid.x * ${NSG * rows}u + sg * ${rows}u) * 1024u;
${range(rows)
  .flatMap((r) => range(4).map((n) => `  subgroupMatrixStore<row_major>(&out, first + ${r * 1024 + n * 256}u, o${r}${n}, 16u);`))
  .join('\n')}
}`;
}

/** The designs measured, each with the workgroups that do the same work. */
export function loopDesigns(): (LoopDesign & { workgroups: number })[] {
  const designs: LoopDesign[] = [
    { label: 'one round trip per tile, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'workgroup' },
    { label: 'one round trip per tile, 2 subgroups', NSG: 2, rows: 1, pipeline: false, barrier: 'workgroup' },
    { label: '2 query fragments per subgroup, 2 subgroups', NSG: 2, rows: 2, pipeline: false, barrier: 'workgroup' },
    { label: 'pipelined, one barrier per tile, 2 subgroups', NSG: 2, rows: 1, pipeline: true, barrier: 'workgroup' },
    { label: 'pipelined, 2 query fragments per subgroup, 1 subgroup', NSG: 1, rows: 2, pipeline: true, barrier: 'workgroup' },
    { label: 'bound: no barriers, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'none' },
    { label: 'bound: no barriers, 2 query fragments per subgroup, 2 subgroups', NSG: 2, rows: 2, pipeline: false, barrier: 'none' },
    { label: '4 neighbouring elements per invocation in the elementwise pass, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'workgroup', softmax: 'exp4' },
    { label: '4 neighbouring elements, 2 query fragments per subgroup, 2 subgroups', NSG: 2, rows: 2, pipeline: false, barrier: 'workgroup', softmax: 'exp4' },
    { label: '8 neighbouring elements per invocation in the elementwise pass, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'workgroup', softmax: 'exp8' },
    { label: 'bound: 4 neighbouring elements, no barriers, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'none', softmax: 'exp4' },
    { label: 'bound: P = S without exp2, 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'workgroup', softmax: 'copy' },
    { label: 'bound: no elementwise pass (S stored, P loaded), 4 subgroups', NSG: 4, rows: 1, pipeline: false, barrier: 'workgroup', softmax: 'none' },
  ];
  return designs.map((design) => ({ ...design, workgroups: FRAGMENTS / (design.NSG * design.rows) }));
}
