/**
 * Edits of the fp32 row-group rungs' kernel texts, for `fp32-tiles-sweep`: designs that no override constant expresses.
 * Each edit replaces exact passages of the kernel and throws, naming the function to update, when one has changed.
 */
import { editKernel } from './matrix-kernel-edits.js';

/**
 * lean-loop with each workgroup's key range starting at its own tile: at step jj of its range jBegin .. jEnd − 1 it
 * takes tile jBegin + (jj − jBegin + i) mod (jEnd − jBegin), i its query tile, so the workgroups of a batch read
 * different K/V tiles at the same moment instead of all the same one. The sum over tiles is the same in any order.
 */
export function rotatedKeyStart(code: string): string {
  return editKernel(code, [
    ['  var kNext: array<vec4<f32>, LD_MAX>;\n',
      '  let span = max(jEnd - jBegin, 1u);\n  let turn = i % span;                   // this workgroup\'s first tile: jBegin + turn\n  var kNext: array<vec4<f32>, LD_MAX>;\n'],
    ['if (e < BC * D4V && jBegin * BC + e / D4V < N) {\n        kNext[n] = qkv[kBase + jBegin * BC * D4V + e];\n        vNext[n] = qkv[vBase + jBegin * BC * D4V + e];',
      'if (e < BC * D4V && (jBegin + turn) * BC + e / D4V < N) {\n        kNext[n] = qkv[kBase + (jBegin + turn) * BC * D4V + e];\n        vNext[n] = qkv[vBase + (jBegin + turn) * BC * D4V + e];'],
    ['  for (var j = jBegin; j < jEnd; j++) {\n',
      '  for (var jj = jBegin; jj < jEnd; jj++) {\n    let j = jBegin + (jj - jBegin + turn) % span;        // the tile of this step\n    let jn = jBegin + (jj - jBegin + turn + 1u) % span;  // and of the next\n'],
    ['if (PREFETCH == 1u && j + 1u < jEnd) {', 'if (PREFETCH == 1u && jj + 1u < jEnd) {'],
    ['if (e < BC * D4V && (j + 1u) * BC + e / D4V < N) {\n          kNext[n] = qkv[kBase + (j + 1u) * BC * D4V + e];\n          vNext[n] = qkv[vBase + (j + 1u) * BC * D4V + e];',
      'if (e < BC * D4V && jn * BC + e / D4V < N) {\n          kNext[n] = qkv[kBase + jn * BC * D4V + e];\n          vNext[n] = qkv[vBase + jn * BC * D4V + e];'],
  ], 'lean-loop.wgsl', 'rotatedKeyStart');
}

/** The copy of tile `tile` into the K/V buffer that starts at `into` (vec4s), rows past N as 0. */
const copyTile = (tile: string, into: string, indent: string): string =>
  [
    'for (var n = 0u; n < LD; n++) {',
    '  let e = t + n * WG;',
    '  if (e < BC * D4V) {',
    '    var kv = vec4<f32>(0.0);',
    '    var vv = vec4<f32>(0.0);',
    `    if (${tile} * BC + e / D4V < N) {`,
    `      kv = qkv[kBase + ${tile} * BC * D4V + e];`,
    `      vv = qkv[vBase + ${tile} * BC * D4V + e];`,
    '    }',
    `    Kj[${into} + onChip(e)] = kv;`,
    `    Vj[${into} + onChip(e)] = vv;`,
    '  }',
    '}',
  ].map((line) => indent + line).join('\n');

/**
 * lean-loop with two K/V buffers and one barrier per tile instead of two: after the barrier that ends tile j − 1,
 * each invocation copies its share of tile j + 1 into the buffer tile j − 1 used, then scores tile j from the other.
 * Twice the workgroup memory (32 KiB at d = 64, Bc = 32); the prefetch through registers is not used (run it with
 * PREFETCH 0).
 */
export function doubleBuffered(code: string): string {
  const loopHead = '  for (var j = jBegin; j < jEnd; j++) {\n    workgroupBarrier();  // everyone is done with K_j, V_j of the previous tile\n';
  const afterCopy = '    let keys = min(BC, N - j * BC);';
  const at = code.indexOf(loopHead);
  const end = code.indexOf(afterCopy, at);
  if (at < 0 || end < 0) throw new Error('lean-loop.wgsl: no key loop head; update doubleBuffered');
  const head =
    `${copyTile('jBegin', '0u', '  ').replace('if (e < BC * D4V) {', 'if (e < BC * D4V && jBegin < jEnd) {')}\n` +
    '  for (var j = jBegin; j < jEnd; j++) {\n' +
    '    workgroupBarrier();  // tile j is in buffer `cur`; everyone is done with the other (tile j − 1)\n' +
    '    let cur = ((j - jBegin) & 1u) * BC * KS;\n' +
    '    if (j + 1u < jEnd) {\n' +
    `${copyTile('(j + 1u)', '(BC * KS - cur)', '      ')}\n` +
    '    }\n';
  let edited = code.slice(0, at) + head + code.slice(end);
  edited = editKernel(edited, [
    ['var<workgroup> Kj: array<vec4<f32>, BC * KS>;\nvar<workgroup> Vj: array<vec4<f32>, BC * KS>;',
      'var<workgroup> Kj: array<vec4<f32>, 2u * BC * KS>;  // two tiles: j and j + 1\nvar<workgroup> Vj: array<vec4<f32>, 2u * BC * KS>;'],
    ['  for (var e = t; e < BC * PAD; e += WG) {', '  for (var e = t; e < 2u * BC * PAD; e += WG) {'],
  ], 'lean-loop.wgsl', 'doubleBuffered');
  const reads = /([KV]j)\[(c \* KS|\(c \+ \d+u\) \* KS) \+ col\]/g;
  if ((edited.match(reads) ?? []).length !== 32) throw new Error('lean-loop.wgsl: not 32 tile reads; update doubleBuffered');
  return edited.replace(reads, '$1[cur + $2 + col]');
}
