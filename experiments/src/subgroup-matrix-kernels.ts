/**
 * The kernels of the subgroup-matrix microbenchmark (subgroup-matrix-bench.ts): a FlashAttention-shaped loop on
 * Dawn's subgroup matrices, generated per element type, tile row stride and subgroups per workgroup. One subgroup
 * (32 invocations) owns 16 query rows; per tile of 64 keys at d = 64 it does 16 multiply-accumulates for S = Q Kᵀ and
 * 16 for O += P V, every operand loaded from workgroup memory whose tiles have rows of `S` elements (64: unpadded).
 *   mma: S stays in registers and P is a fixed matrix (the loads are loop-invariant, so the compiler may keep them
 *        in registers): close to the matrix units' own rate;
 *   fa:  S goes to workgroup memory, the 32 invocations turn it into P = 2^(S − 1) in f16, and P comes back as a
 *        left matrix: the round trip a plain f16 FlashAttention tile needs for its softmax.
 */

/** Tiles of keys per workgroup. */
export const TILES = 512;
/** Workgroups of one subgroup (a quarter as many of four): 64 per SM of an H100. */
export const WORKGROUPS = 132 * 64;

type Block = [offset: string, major: 'row_major' | 'col_major'];

interface ElementLoop {
  enables: string;
  types: string;
  out: string;
  tile: string;
  scores: (S: number, NSG: number) => string;
  value: (expression: string) => string;
  steps: number;
  /** Elements of d (and keys) per multiply-accumulate. */
  step: number;
  scoreRow: (S: number) => number;
  sBlock: (S: number, n: number, k: string) => Block;
  vBlock: (S: number, n: number, k: string, transposedV: boolean) => Block;
  toP: (S: number) => string;
}

/**
 * What the f16 and the 8-bit integer loops differ in. f16 → f32, 16×16×16: per tile 16 multiply-accumulates for S
 * and 16 for O, tile rows of S f16. i8 → i32, 16×16×32 (the only integer shape besides 16×8×32): the same tile takes
 * 8 + 8 of twice the depth (the same operations), and a fragment of 16×32 i8 is as many bytes as one of 16×16 f16, so
 * each load brings twice the products; tiles hold 4 i8 per i32 word (offsets and strides count words), rows S words
 * apart (16 unpadded), and with `transposedV` the tile holds Vᵀ (d × keys) so that V loads col_major like K: a
 * row_major right operand of 8-bit elements is the other way round from what the matrix units take. In `fa`, the i8
 * loop turns 4 neighbouring scores into 4 i8 of P = 127 · 2^(S / 2^12 − 1), packed into one word (`pack4xI8`).
 */
const ELEMENTS: Readonly<Record<'f16' | 'i8', ElementLoop>> = {
  f16: {
    enables: 'enable f16;\n',
    types: 'alias L = subgroup_matrix_left<f16, 16, 16>;\nalias R = subgroup_matrix_right<f16, 16, 16>;\nalias A = subgroup_matrix_result<f32, 16, 16>;',
    out: 'f32',
    tile: 'f16',
    scores: (S, NSG) => `array<f32, ${16 * NSG} * ${S}>`,
    value: (expression) => `f16(f32(${expression}) * 0.01)`,
    steps: 4,
    step: 16,
    scoreRow: (S) => S,
    sBlock: (S, n, k) => [`${n}u * 16u * ${S}u + 16u * ${k}`, 'col_major'],
    vBlock: (S, n, k) => [`(16u * ${k}) * ${S}u + ${16 * n}u`, 'row_major'],
    toP: (S) => `for (var e = sg * ${16 * S}u + t % 32u; e < (sg + 1u) * ${16 * S}u; e += 32u) { Pt[e] = f16(exp2(Sf[e] - 1.0)); }`,
  },
  i8: {
    enables: '',
    types: 'alias L = subgroup_matrix_left<i8, 32, 16>;\nalias R = subgroup_matrix_right<i8, 16, 32>;\nalias A = subgroup_matrix_result<i32, 16, 16>;',
    out: 'i32',
    tile: 'i32',
    scores: (_S, NSG) => `array<i32, ${1024 * NSG}>`,
    value: (expression) => `i32(pack4xI8(vec4<i32>(i32(${expression}), 1, -2, 0)))`,
    steps: 2,
    step: 8,
    scoreRow: () => 64,
    sBlock: (S, n, k) => [`${n}u * 16u * ${S}u + 8u * ${k}`, 'col_major'],
    vBlock: (S, n, k, transposedV) =>
      (transposedV ? [`${n}u * 16u * ${S}u + 8u * ${k}`, 'col_major'] : [`(32u * ${k}) * ${S}u + ${4 * n}u`, 'row_major']),
    toP: (S) => `for (var w = t % 32u; w < 256u; w += 32u) {   // 16 rows × 16 words of P for this subgroup
      let e = sg * 1024u + (w / 16u) * 64u + (w % 16u) * 4u;
      let x = vec4<f32>(f32(Sf[e]), f32(Sf[e + 1u]), f32(Sf[e + 2u]), f32(Sf[e + 3u]));
      Pt[sg * 16u * ${S}u + (w / 16u) * ${S}u + w % 16u] = i32(pack4xI8(vec4<i32>(round(127.0 * exp2(x * 0.000244140625 - 1.0)))));
    }`,
  },
};

/** The loop of `variant` (mma or fa) with `element` (f16 or i8) tiles of row stride S, NSG subgroups per workgroup. */
export function subgroupMatrixKernel(variant: 'mma' | 'fa', S = 64, NSG = 1, element: 'f16' | 'i8' = 'f16', transposedV = false): string {
  const e = ELEMENTS[element];
  const load = (type: string, array: string, [offset, major]: Block): string => `subgroupMatrixLoad<${type}, ${major}>(&${array}, ${offset}, ${S}u)`;
  const sBlock = (n: number, k: string): string => load('R', 'Kt', e.sBlock(S, n, k));
  const vBlock = (n: number, k: string): string => load('R', 'Kt', e.vBlock(S, n, k, transposedV));
  const row = e.scoreRow(S);
  const roundTrip = `
    subgroupMatrixStore<row_major>(&Sf, sg * ${16 * row}u, s0, ${row}u);
    subgroupMatrixStore<row_major>(&Sf, sg * ${16 * row}u + 16u, s1, ${row}u);
    subgroupMatrixStore<row_major>(&Sf, sg * ${16 * row}u + 32u, s2, ${row}u);
    subgroupMatrixStore<row_major>(&Sf, sg * ${16 * row}u + 48u, s3, ${row}u);
    workgroupBarrier();
    ${e.toP(S)}
    workgroupBarrier();`;
  const keep = `
    if (it == 0xffffffffu) {
      subgroupMatrixStore<row_major>(&out, 0u, s0, 16u);
      subgroupMatrixStore<row_major>(&out, 0u, s1, 16u);
      subgroupMatrixStore<row_major>(&out, 0u, s2, 16u);
      subgroupMatrixStore<row_major>(&out, 0u, s3, 16u);
    }`;
  return `
${e.enables}enable chromium_experimental_subgroup_matrix;
enable subgroups;
${e.types}
@group(0) @binding(0) var<storage, read_write> out: array<${e.out}>;
var<workgroup> Qt: array<${e.tile}, ${16 * NSG} * ${S}>;   // 16 query rows × d = 64 per subgroup, rows ${S} apart
var<workgroup> Kt: array<${e.tile}, 64 * ${S}>;   // 64 keys × d (also used as V)
var<workgroup> Pt: array<${e.tile}, ${16 * NSG} * ${S}>;   // P: 16 rows × 64 keys per subgroup
var<workgroup> Sf: ${e.scores(S, NSG)};   // S, 16 rows per subgroup
@compute @workgroup_size(${32 * NSG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u${NSG > 1 ? ', @builtin(subgroup_id) sg: u32' : ''}) {${NSG > 1 ? '' : '\n  let sg = 0u;'}
  for (var e = t; e < 64u * ${S}u; e += ${32 * NSG}u) {
    Kt[e] = ${e.value('e % 5u')};
    if (e < ${16 * NSG}u * ${S}u) {
      Qt[e] = ${e.value('e % 7u')};
      Pt[e] = ${e.value('e % 3u')};
    }
  }
  workgroupBarrier();
  var o0 = A(); var o1 = A(); var o2 = A(); var o3 = A();
  for (var it = 0u; it < ${TILES}u; it++) {
    var s0 = A(); var s1 = A(); var s2 = A(); var s3 = A();
    for (var k = 0u; k < ${e.steps}u; k++) {
      let q = ${load('L', 'Qt', [`sg * ${16 * S}u + ${e.step}u * k`, 'row_major'])};
      s0 = subgroupMatrixMultiplyAccumulate(q, ${sBlock(0, 'k')}, s0);
      s1 = subgroupMatrixMultiplyAccumulate(q, ${sBlock(1, 'k')}, s1);
      s2 = subgroupMatrixMultiplyAccumulate(q, ${sBlock(2, 'k')}, s2);
      s3 = subgroupMatrixMultiplyAccumulate(q, ${sBlock(3, 'k')}, s3);
    }
    ${variant === 'fa' ? roundTrip : keep}
    for (var k = 0u; k < ${e.steps}u; k++) {
      let p = ${load('L', 'Pt', [`sg * ${16 * S}u + ${e.step}u * k`, 'row_major'])};
      o0 = subgroupMatrixMultiplyAccumulate(p, ${vBlock(0, 'k')}, o0);
      o1 = subgroupMatrixMultiplyAccumulate(p, ${vBlock(1, 'k')}, o1);
      o2 = subgroupMatrixMultiplyAccumulate(p, ${vBlock(2, 'k')}, o2);
      o3 = subgroupMatrixMultiplyAccumulate(p, ${vBlock(3, 'k')}, o3);
    }
  }
  let base = (wid.x * ${NSG}u + sg) * 1024u;
  subgroupMatrixStore<row_major>(&out, base, o0, 16u);
  subgroupMatrixStore<row_major>(&out, base + 256u, o1, 16u);
  subgroupMatrixStore<row_major>(&out, base + 512u, o2, 16u);
  subgroupMatrixStore<row_major>(&out, base + 768u, o3, 16u);
}`;
}

/** The same 32 multiply-accumulates per tile with every operand loaded into registers before the loop. */
export function residentKernel(): string {
  const load = (type: string, array: string, offset: string, major: string): string => `subgroupMatrixLoad<${type}, ${major}>(&${array}, ${offset}, 64u)`;
  const sBlock = (n: number, k: string): string => load('R', 'Kt', `${n}u * 16u * 64u + 16u * ${k}`, 'col_major');
  const lefts = [0, 1, 2, 3].map((k) => `  let q${k} = ${load('L', 'Qt', `${16 * k}u`, 'row_major')};`).join('\n');
  const rights = [0, 1, 2, 3].flatMap((n) => [0, 1, 2, 3].map((k) => `  let k${n}${k} = ${sBlock(n, `${k}u`)};`)).join('\n');
  const step = [0, 1, 2, 3].flatMap((n) => [0, 1, 2, 3].map((k) => `    s${n} = subgroupMatrixMultiplyAccumulate(q${k}, k${n}${k}, s${n});`)).join('\n');
  return subgroupMatrixKernel('mma')
    .replace(/var o0 = A\(\);[^\n]*\n[\s\S]*\n {2}let base/, `var s0 = A(); var s1 = A(); var s2 = A(); var s3 = A();\n${lefts}\n${rights}\n  for (var it = 0u; it < ${TILES}u; it++) {\n${step}\n${step}\n  }\n  let o0 = s0; let o1 = s1; let o2 = s2; let o3 = s3;\n  let base`);
}

export interface SubgroupMatrixRun {
  label: string;
  code: string;
  workgroups: number;
}

/**
 * The runs for these f16 tile strides: `resident`, then per stride mma and fa with one subgroup per workgroup, then
 * with four subgroups sharing the K tile (each its own 16 query rows, chosen by @builtin(subgroup_id), which WGSL
 * accepts as uniform for the matrix builtins where local_invocation_index / 32 is not), over a quarter of the
 * workgroups: the same work. Then i8 with rows of 16 words (unpadded: every row of a fragment in the same banks), 20
 * and 24, with V as it is and transposed.
 */
export function subgroupMatrixRuns(strides: readonly number[]): SubgroupMatrixRun[] {
  return [
    { label: 'resident', code: residentKernel(), workgroups: WORKGROUPS },
    ...strides.flatMap((S) => [
      { label: `mma, stride ${S}`, code: subgroupMatrixKernel('mma', S), workgroups: WORKGROUPS },
      { label: `fa, stride ${S}`, code: subgroupMatrixKernel('fa', S), workgroups: WORKGROUPS },
      { label: `mma, stride ${S}, 4 subgroups per workgroup`, code: subgroupMatrixKernel('mma', S, 4), workgroups: WORKGROUPS / 4 },
      { label: `fa, stride ${S}, 4 subgroups per workgroup`, code: subgroupMatrixKernel('fa', S, 4), workgroups: WORKGROUPS / 4 },
    ]),
    ...[16, 20, 24].flatMap((W) => [false, true].flatMap((transposedV) => [
      { label: `i8 mma, ${W} words per row${transposedV ? ', Vᵀ' : ''}, 4 subgroups per workgroup`, code: subgroupMatrixKernel('mma', W, 4, 'i8', transposedV), workgroups: WORKGROUPS / 4 },
      { label: `i8 fa, ${W} words per row${transposedV ? ', Vᵀ' : ''}, 4 subgroups per workgroup`, code: subgroupMatrixKernel('fa', W, 4, 'i8', transposedV), workgroups: WORKGROUPS / 4 },
    ])),
  ];
}
