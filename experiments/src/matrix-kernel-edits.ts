/**
 * Edits of the tensor-core rungs' kernel texts, for `matrix-variants`: designs that no override constant of a rung
 * expresses (rung 24 with its softmax one key at a time or one product per multiply; rung 25 with O rescaled in place,
 * fragments from the storage buffer, O between flushes in the output buffer, a leaner softmax, unused workgroup
 * memory, P̃ where K_j was, the exponential in f16, each workgroup's key loop from its own tile) and two bounds (rung 25
 * without its K/V copies, and with three products per multiply). Each edit replaces exact passages of the kernel
 * and throws, naming the function to update, when one of them has changed.
 */

/**
 * `code` with each `[from, to]` of `edits` replaced, or an error naming `file` and `editor` when some `from` is not in
 * it (the kernel changed under the edit).
 */
export function editKernel(code: string, edits: readonly (readonly [string, string])[], file: string, editor: string): string {
  const missing = edits.find(([from]) => !code.includes(from));
  if (missing) throw new Error(`${file}: no \`${missing[0].trim().split('\n')[0] ?? ''}\`; update ${editor}`);
  return edits.reduce((text, [from, to]) => text.replace(from, to), code);
}

/**
 * `code` with the passage from `from` up to (not including) the next `to` replaced by `by`, or an error naming `file`
 * and `editor` when either is not in it.
 */
function cutBetween(code: string, from: string, to: string, file: string, editor: string, by = ''): string {
  const a = code.indexOf(from);
  const b = code.indexOf(to, a);
  if (a < 0 || b < 0) throw new Error(`${file}: no \`${(a < 0 ? from : to).trim()}\`; update ${editor}`);
  return code.slice(0, a) + by + code.slice(b);
}

/**
 * resident-o with its softmax one key at a time, as it was before it took rung 25's four neighbouring keys per read:
 * each invocation's 16 keys of its row one by one (the same halves, the rotation by pair). Edits the kernel's text;
 * throws if the loops it replaces have changed.
 */
export function oneKeySoftmax(code: string): string {
  return editKernel(code, [
    [`    var sv: array<vec4<f32>, BC_MAX / 8u>;
    var mx = LOWEST;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let at = sBase + col;
      let key = vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u);
      let v = select(vec4<f32>(LOWEST), vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]), key < vec4<u32>(N));
      sv[k] = v;
      mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
    }`,
      `    var sv: array<f32, 16>;   // BC / 2
    var mx = LOWEST;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      sv[k] = LOWEST;
      if (j * BC + col < N) { sv[k] = Sf[sBase + col]; }
      mx = max(mx, sv[k]);
    }`],
    [`    var sum = 0.0;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let p = exp2(sv[k] - m);
      sum += (p.x + p.y) + (p.z + p.w);
      let ph = hi(p);
      let pl = p - ph;
      let at = pBase + col;
      Ph[at] = f16(ph.x); Ph[at + 1u] = f16(ph.y); Ph[at + 2u] = f16(ph.z); Ph[at + 3u] = f16(ph.w);
      Pl[at] = f16(pl.x); Pl[at + 1u] = f16(pl.y); Pl[at + 2u] = f16(pl.z); Pl[at + 3u] = f16(pl.w);
    }`,
      `    var sum = 0.0;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      let p = exp2(sv[k] - m);
      sum += p;
      let ph = hi(vec4<f32>(p)).x;
      Ph[pBase + col] = f16(ph);
      Pl[pBase + col] = f16(p - ph);
    }`],
  ], 'resident-o.wgsl', 'oneKeySoftmax');
}

/**
 * resident-o with one product per multiply instead of three (Qh·Khᵀ and P̃h·Vh, the low parts staged but not
 * used): what rung 24's loop would reach as a plain f16 kernel, an error of f16's order. Edits the kernel's text.
 */
export function plainF16(code: string): string {
  const lowProducts = [
    'subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);',
    'subgroupMatrixMultiplyAccumulate(ql[k], kh1, s1);',
    'subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);',
    'subgroupMatrixMultiplyAccumulate(qh[k], kl1, s1);',
    'subgroupMatrixMultiplyAccumulate(pl, vh, o[n]);',
    'subgroupMatrixMultiplyAccumulate(ph, vl, o[n]);',
  ];
  const lines = code.split('\n');
  const missing = lowProducts.find((product) => !lines.some((line) => line.endsWith(product)));
  if (missing) throw new Error(`resident-o.wgsl: no \`${missing}\`; update plainF16`);
  return lines.filter((line) => !lowProducts.some((product) => line.endsWith(product))).join('\n');
}

/**
 * A bound, not a kernel: f16-resident without the copies of K_j and V_j into workgroup memory (every tile multiplies
 * whatever the tiles hold), to measure what staging them costs. Its errors are meaningless.
 */
export function withoutStaging(code: string): string {
  const barrier = code.indexOf('    workgroupBarrier();  // S is in Sf');
  const softmax = code.indexOf('    // Online softmax');
  if (barrier < 0 || softmax < barrier) throw new Error('f16-resident.wgsl: the loop has changed; update withoutStaging');
  return code.slice(0, code.indexOf('\n', barrier) + 1) + '\n' + code.slice(softmax);
}

/**
 * f16-resident with O kept in the matrix units for the whole key loop: no oRow registers and no periodic flush. When a
 * row's m_i moves, o passes through the S tiles, each invocation multiplies its own elements by α there, and the
 * fragments are loaded back. Edits the kernel's text; throws if the parts it replaces have changed.
 */
export function inPlaceRescale(code: string): string {
  const flushStart = code.indexOf('    if (moved || (FLUSH > 0u && j % max(FLUSH, 1u) == 0u && j > 0u)) {');
  const flushEnd = code.indexOf('    // o += P̃ V_j.');
  const rowDeclaration = code.indexOf('  var oRow: array<f32, 64>;');
  const rowInit = code.indexOf('  for (var k = 0u; k < D / 2u; k++) { oRow[k] = 0.0; }\n');
  const output = '(oRow[8u * n0 + k] + Sf[sBase + col]) * inv';
  if (flushStart < 0 || flushEnd < flushStart || rowDeclaration < 0 || rowInit < rowDeclaration || !code.includes(output)) {
    throw new Error('f16-resident.wgsl: the flush has changed; update inPlaceRescale');
  }
  const rescale = `    if (moved) {
      for (var n0 = 0u; n0 < DK; n0 += OW / 16u) {
        if (n0 > 0u) { workgroupBarrier(); }
        for (var n = 0u; n < OW / 16u; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, o[n0 + n], SO); }
        workgroupBarrier();
        for (var k = 0u; k < OW / 2u; k++) {
          let at = sBase + 2u * ((k + rot) % (OW / 2u)) + h;
          Sf[at] = Sf[at] * alpha;
        }
        workgroupBarrier();
        for (var n = 0u; n < OW / 16u; n++) { o[n0 + n] = subgroupMatrixLoad<A, row_major>(&Sf, 16u * sg * SO + 16u * n, SO); }
      }
    }

`;
  const rowEnd = rowInit + '  for (var k = 0u; k < D / 2u; k++) { oRow[k] = 0.0; }\n'.length;
  return (code.slice(0, rowDeclaration) + code.slice(rowEnd, flushStart) + rescale + code.slice(flushEnd)).replace(output, 'Sf[sBase + col] * inv');
}

/**
 * f16-resident without workgroup tiles of K and V: every subgroup loads its Q, K_j and V_j fragments straight from the
 * scratch buffer with subgroupMatrixLoad (as rung 16 does), so the copies, their index arithmetic and the 16-bit stores
 * go. Measures what matrix loads from a storage buffer cost without Dawn's bounds checks. Binds `qkv16` in `main`.
 */
export function directFragments(code: string): string {
  const cut = (text: string, from: string, to: string, by = ''): string => cutBetween(text, from, to, 'f16-resident.wgsl', 'directFragments', by);
  let text = cut(code, '  // Q_i through KV', '  // This invocation', `  let row0 = i * BR + 16u * sg;
  var q: array<L, DK_MAX>;
  for (var k = 0u; k < DK; k++) { q[k] = subgroupMatrixLoad<L, row_major>(&qkv16, q0 + row0 * D + 16u * k, D); }

`);
  text = cut(text, '  // K_0 into KV now', '  for (var j = 0u; j < Tc; j++) {', '  let Tc = (N + BC - 1u) / BC;\n');
  text = cut(text, '    // V_j into KV', '    // S = Q_i K_jᵀ');
  text = cut(text, '    // K_(j+1) into KV.', '    // Online softmax');
  return editKernel(text, [
    ['subgroupMatrixLoad<R, col_major>(&KV, 16u * c * KS + 16u * k, KS)',
      'subgroupMatrixLoad<R, col_major>(&qkv16, q0 + params.NP * D + (j * BC + 16u * c) * D + 16u * k, D)'],
    ['subgroupMatrixLoad<R, row_major>(&KV, KT + 16u * c * KS + 16u * n, KS)',
      'subgroupMatrixLoad<R, row_major>(&qkv16, q0 + 2u * params.NP * D + (j * BC + 16u * c) * D + 16u * n, D)'],
  ], 'f16-resident.wgsl', 'directFragments');
}

/**
 * f16-resident (or resident-o, whose flush is the same text) with O between flushes kept in the output buffer instead
 * of in oRow registers (32 per invocation at d = 64, 64 at d = 128): a flush adds o to the row's O in memory, times
 * α, and the end adds the last o and divides by ℓ. In f16-resident flushes are rare (only when some row's m_i moves),
 * so the memory traffic is too; in resident-o they come every FLUSH tiles. Edits the kernel's text; throws if the
 * parts it replaces have changed.
 */
export function outputAsAccumulator(code: string, file = 'f16-resident.wgsl'): string {
  const edits: [string, string][] = [
    ['  var oRow: array<f32, 64>;', '  var flushed = false;                  // whether O in memory holds earlier flushes (uniform)\n  // '],
    ['  for (var k = 0u; k < D / 2u; k++) { oRow[k] = 0.0; }\n', ''],
    [`        for (var k = 0u; k < OW / 2u; k++) {
          oRow[8u * n0 + k] = (oRow[8u * n0 + k] + Sf[sBase + 2u * ((k + rot) % (OW / 2u)) + h]) * alpha;
        }
      }
      for (var n = 0u; n < DK; n++) { o[n] = A(); }
`, `        if (row0 + r < N) {
          for (var k = 0u; k < OW / 2u; k++) {
            let col = 2u * ((k + rot) % (OW / 2u)) + h;
            let at = (b * N + row0 + r) * D + 16u * n0 + col;
            var sum = Sf[sBase + col];
            if (flushed) { sum += O[at]; }
            O[at] = sum * alpha;
          }
        }
      }
      flushed = true;
      for (var n = 0u; n < DK; n++) { o[n] = A(); }
`],
    ['        O[(b * N + row) * D + 16u * n0 + col] = (oRow[8u * n0 + k] + Sf[sBase + col]) * inv;',
      '        let at = (b * N + row) * D + 16u * n0 + col;\n        var sum = Sf[sBase + col];\n        if (flushed) { sum += O[at]; }\n        O[at] = sum * inv;'],
  ];
  return editKernel(code, edits, file, 'outputAsAccumulator');
}

/**
 * f16-resident with a leaner softmax: the keys past N are masked only in the last tile (a uniform branch), and P̃ is
 * converted to f16 as one vector. Edits the kernel's text; throws if the loops it replaces have changed.
 */
export function leanSoftmax(code: string): string {
  const edits: [string, string][] = [
    ['      let key = vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u);\n      let v = select(vec4<f32>(LOWEST), vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]), key < vec4<u32>(N));',
      '      var v = vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]);\n      if (j * BC + BC > N) { v = select(vec4<f32>(LOWEST), v, vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(N)); }'],
    ['      Pt[at] = f16(p.x);\n      Pt[at + 1u] = f16(p.y);\n      Pt[at + 2u] = f16(p.z);\n      Pt[at + 3u] = f16(p.w);',
      '      let p16 = vec4<f16>(p);\n      Pt[at] = p16.x;\n      Pt[at + 1u] = p16.y;\n      Pt[at + 2u] = p16.z;\n      Pt[at + 3u] = p16.w;'],
  ];
  return editKernel(code, edits, 'f16-resident.wgsl', 'leanSoftmax');
}

/**
 * f16-resident with PAD floats of workgroup memory it does not otherwise use (read and written only when N = 0, so
 * that no compiler drops them): the workgroup's memory grows, nothing else changes. Maps how the speed falls with the
 * memory a workgroup declares, apart from bank layouts (which `so-44` and `ks-88` also change).
 */
export function withPadding(code: string): string {
  return editKernel(code, [
    ['var<workgroup> movedAt: vec4<u32>;', 'var<workgroup> movedAt: vec4<u32>;\noverride PAD: u32 = 4u;\nvar<workgroup> padding: array<f32, PAD>;'],
    ['  if (b >= params.batches) { return; }\n', '  if (b >= params.batches) { return; }\n  if (N == 0u) { padding[t % PAD] = 1.0; workgroupBarrier(); O[t] = padding[(t + 1u) % PAD]; }\n'],
  ], 'f16-resident.wgsl', 'withPadding');
}

/**
 * f16-resident with each subgroup's P̃ written where K_j was, not in a tile of its own: at d = 64 the workgroup's memory
 * falls from 23.0 to 18.5 KiB. K_j and V_j are then both copied at the top of the tile (K_(j+1) cannot be written
 * during the softmax, where P̃ now lies), so the loop takes a fourth barrier, between the copies and S = Q_i K_jᵀ.
 * The memory it frees lets 5 subgroups (80 query rows) fit in 22.5 KiB (`nsg-5`; `nsg-6` takes 27.0 KiB). Rows past
 * the scratch buffer's NP read the next matrix of the buffer (Q_i is staged whole); they are not written.
 * Edits the kernel's text; throws if the parts it replaces have changed.
 */
export function pInKeyTile(code: string): string {
  const edits: [string, string][] = [
    ['var<workgroup> KV: array<f16, max(2u * KT, BR * KS)>;',
      'override VO: u32 = max(KT, BR * PS);   // where V starts in KV: after K_j, or the P̃ tiles that take its place\nvar<workgroup> KV: array<f16, max(VO + KT, BR * KS)>;'],
    ['var<workgroup> Pt: array<f16, BR * PS>;       // per subgroup: P̃ (16 rows of PS)\n', ''],
    ['  for (var e = t; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, 0u, e)); }\n', ''],
    ['    nextV[u] = tileVector(kv0, 0u, KH + t + WG * u);\n  }',
      '    nextK[u] = tileVector(kv0, 0u, t + WG * u);\n    nextV[u] = tileVector(kv0, 0u, KH + t + WG * u);\n  }'],
    ['    for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }',
      '    for (var u = 0u; u < PH; u++) { put8(tileSlot(t + WG * u), nextK[u]); }\n    for (var e = t + WG * PH; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }\n    for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }'],
    ['    // S = Q_i K_jᵀ for this subgroup', '    workgroupBarrier();  // K_j and V_j are in KV\n\n    // S = Q_i K_jᵀ for this subgroup'],
    ['    workgroupBarrier();  // K_j is in KV; every subgroup is done with V_(j−1)', '    workgroupBarrier();  // every subgroup is done with P̃ (where K_j goes) and V_(j−1)'],
    ['&KV, KT + 16u * c * KS', '&KV, VO + 16u * c * KS'],
  ];
  // K_(j+1) is no longer copied during the softmax (P̃ lies where it would go).
  const withoutNextK = cutBetween(code, '    // K_(j+1) into KV.', '    // Online softmax', 'f16-resident.wgsl', 'pInKeyTile');
  return editKernel(withoutNextK, edits, 'f16-resident.wgsl', 'pInKeyTile')
    .replaceAll('* KT +', '* VO +')
    .replaceAll('Pt[', 'KV[')
    .replaceAll('&Pt,', '&KV,');
}

/**
 * f16-resident with P̃ = 2^(S − m_i) taken in f16: the argument is clamped at −30 (2^−30 is below f16's smallest
 * subnormal, so the weight is 0 as before) and converted, the exponential runs on four f16 lanes, and the row sum adds
 * the same rounded weights that P̃ V_j multiplies. Half the exponential's work where the GPU takes two f16 lanes per
 * instruction. Edits the kernel's text; throws if the loop it replaces has changed.
 */
export function halfExponential(code: string): string {
  return editKernel(code, [
    ['      let p = exp2(sv[k] - m);\n      sum += (p.x + p.y) + (p.z + p.w);\n      Pt[at] = f16(p.x);\n      Pt[at + 1u] = f16(p.y);\n      Pt[at + 2u] = f16(p.z);\n      Pt[at + 3u] = f16(p.w);',
      '      let p = exp2(vec4<f16>(max(sv[k] - m, vec4<f32>(-30.0))));\n      let pf = vec4<f32>(p);\n      sum += (pf.x + pf.y) + (pf.z + pf.w);\n      Pt[at] = p.x;\n      Pt[at + 1u] = p.y;\n      Pt[at + 2u] = p.z;\n      Pt[at + 3u] = p.w;'],
  ], 'f16-resident.wgsl', 'halfExponential');
}

/**
 * f16-resident with each workgroup's key loop starting at its own tile: tile (j + ROTATE·i) mod Tc at step j, so the
 * workgroups of a batch read different K/V tiles at the same moment instead of all the same one. The sum over tiles is
 * the same in any order (the online softmax is exact up to rounding). The tile index is counted on and wrapped at Tc,
 * not divided for at every step. ROTATE = 0 is the rung's order with the edit's index arithmetic.
 */
export function rotatedStart(code: string): string {
  return editKernel(code, [
    ['override BC: u32 = 32u;    // keys per tile: 32 or 64\n',
      'override BC: u32 = 32u;    // keys per tile: 32 or 64\noverride ROTATE: u32 = 1u; // tiles between the first tiles of neighbouring workgroups\n'],
    ['  let Tc = (N + BC - 1u) / BC;\n  for (var e = t; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, 0u, e)); }',
      '  let Tc = (N + BC - 1u) / BC;\n  let j0 = (i * ROTATE) % Tc;           // this workgroup\'s first tile\n  for (var e = t; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, j0, e)); }'],
    ['    nextV[u] = tileVector(kv0, 0u, KH + t + WG * u);', '    nextV[u] = tileVector(kv0, j0, KH + t + WG * u);'],
    ['  for (var j = 0u; j < Tc; j++) {\n',
      '  var jt = j0;                          // the tile of this step, counted on rather than divided for\n  for (var j = 0u; j < Tc; j++) {\n    let jn = select(jt + 1u, 0u, jt + 1u == Tc);  // the tile of the next step\n'],
    ['        o[n] = subgroupMatrixMultiplyAccumulate(p, v, o[n]);\n      }\n    }\n  }\n',
      '        o[n] = subgroupMatrixMultiplyAccumulate(p, v, o[n]);\n      }\n    }\n    jt = jn;\n  }\n'],
    ['for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }',
      'for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, jt, e)); }'],
    ['params.NP + (j + 1u) * BC + (e / D8) % BC)', 'params.NP + jn * BC + (e / D8) % BC)'],
    ['params.NP + (j + 1u) * BC + (f / D8) % BC)', 'params.NP + jn * BC + (f / D8) % BC)'],
    ['put8(tileSlot(e), tileVector(kv0, j + 1u, e));', 'put8(tileSlot(e), tileVector(kv0, jn, e));'],
    ['let key = vec4<u32>(j * BC + col)', 'let key = vec4<u32>(jt * BC + col)'],
  ], 'f16-resident.wgsl', 'rotatedStart');
}

/**
 * A bound, not a kernel: f16-resident with every multiply-accumulate done three times on the same fragments, as many
 * products as rung 24's fp32-grade split (high·high, high·low, low·high) needs, without its low parts' workgroup
 * memory, copies and fragment loads: about what three products per multiply cost in this loop. S and O come out three
 * times too large (so m_i may move, and o be flushed, more often than in a real kernel): its errors are meaningless.
 */
export function tripleProducts(code: string): string {
  return editKernel(code, [
    ['        s[c] = subgroupMatrixMultiplyAccumulate(q[k], kc, s[c]);',
      '        s[c] = subgroupMatrixMultiplyAccumulate(q[k], kc, subgroupMatrixMultiplyAccumulate(q[k], kc, subgroupMatrixMultiplyAccumulate(q[k], kc, s[c])));'],
    ['        o[n] = subgroupMatrixMultiplyAccumulate(p, v, o[n]);',
      '        o[n] = subgroupMatrixMultiplyAccumulate(p, v, subgroupMatrixMultiplyAccumulate(p, v, subgroupMatrixMultiplyAccumulate(p, v, o[n])));'],
  ], 'f16-resident.wgsl', 'tripleProducts');
}
