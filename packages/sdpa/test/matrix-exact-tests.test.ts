/**
 * Which exact tests attention-matrix compiles (exactTests, its EXACT). None must be dropped where some tile needs one:
 * the kernel runs only on a GPU with subgroup matrices (`hw4-cli sdpa --conformance` checks its results there), so
 * the proof that a problem needs no test is checked here, against every (row, key) pair of small shapes.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, type SdpaDims, type SdpaOptions } from '@fa/core';
import { exactTests, exactTestsCompiled } from '../src/matrix/attention-matrix.js';

const dims = (Lq: number, Lk: number): SdpaDims => ({ B: 1, Hq: 2, Hkv: 1, Lq, Lk, d: 64 });
const exact = (Lq: number, Lk: number, options: SdpaOptions = {}, BC = 32, blockTiles = false): number =>
  exactTests(sdpaProblem(dims(Lq, Lk), options), BC, blockTiles);

/** Whether row i sees key j under the problem's band (the kernel's bandFirst and bandLast, diagonal i + Lk − Lq). */
function sees(Lq: number, Lk: number, options: SdpaOptions, i: number, j: number): boolean {
  const { left, right } = sdpaProblem(dims(Lq, Lk), options);
  const diagonal = i + Lk - Lq;
  return j >= diagonal - left && j <= diagonal + right;
}

describe('exactTests', () => {
  it('drops the tests only where every row sees every key in whole tiles', () => {
    expect(exact(64, 128)).toBe(0);
    expect(exact(100, 96)).toBe(0);   // rows past Lq pad the last row block; their O is not written
    expect(exact(64, 100)).toBe(1);   // the last tile crosses Lk
    expect(exact(64, 128, { causal: true })).toBe(1);
    expect(exact(64, 128, { window: [8, 8] })).toBe(1);
    expect(exact(64, 128, { cacheLengths: [128] })).toBe(1);   // each batch's Lk is read on the GPU
  });
  it('keeps the band\'s test for a window exactly one key short of the shape', () => {
    for (const [Lq, Lk] of [[64, 128], [128, 64], [96, 96]] as const) {
      const wide: SdpaOptions = { window: [Lk - 1, Lq - 1] };
      const short: SdpaOptions[] = [{ window: [Lk - 2, Lq - 1] }, { window: [Lk - 1, Lq - 2] }];
      expect(exact(Lq, Lk, wide)).toBe(0);
      for (let i = 0; i < Lq; i++) for (let j = 0; j < Lk; j++) expect(sees(Lq, Lk, wide, i, j)).toBe(true);
      for (const options of short) {
        expect(exact(Lq, Lk, options)).toBe(1);
        let hidden = 0;
        for (let i = 0; i < Lq; i++) for (let j = 0; j < Lk; j++) hidden += sees(Lq, Lk, options, i, j) ? 0 : 1;
        expect(hidden).toBeGreaterThan(0);
      }
    }
  });
  it('reads each score\'s mask where one is read per element', () => {
    const mask = { kind: 'bool' as const, data: new Uint8Array(64 * 128).fill(1), shape: [64, 128] };
    expect(exact(64, 128, { mask })).toBe(2);
    const blockMask = { rows: 32, keys: 32, data: new Uint8Array(2 * 4).fill(1), shape: [2, 4] };
    expect(exact(64, 128, { blockMask }, 32, false)).toBe(2);
    expect(exact(64, 128, { blockMask }, 32, true)).toBe(1);   // whole tiles kept or skipped by the tile lists
  });
  it('keeps maskedScore\'s code at d ≤ 64 where no test is needed, and nothing else changes', () => {
    expect(exactTestsCompiled(0, 64)).toBe(2);
    expect(exactTestsCompiled(0, 80)).toBe(0);
    for (const d of [16, 64, 128, 256]) {
      expect(exactTestsCompiled(1, d)).toBe(1);
      expect(exactTestsCompiled(2, d)).toBe(2);
    }
  });
});
