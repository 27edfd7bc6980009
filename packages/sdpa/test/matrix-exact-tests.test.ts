/**
 * Which exact tests attention-matrix compiles (exactTests, its EXACT). None must be dropped where some tile needs one:
 * the kernel runs only on a GPU with subgroup matrices (`hw4-cli sdpa --conformance` checks its results there), so
 * the proof that a problem needs no test is checked here, against every (row, key) pair of small shapes, and against a
 * model of the kernel's tile loop (which tiles it visits, which it tests, the key it carries from step to step).
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, type SdpaDims, type SdpaOptions } from '@fa/core';
import { exactTests, exactTestsCompiled } from '../src/matrix/attention-matrix.js';

const dims = (Lq: number, Lk: number): SdpaDims => ({ B: 1, Hq: 2, Hkv: 1, Lq, Lk, d: 64 });
const exact = (Lq: number, Lk: number, options: SdpaOptions = {}, BC = 32, blockTiles = false): number =>
  exactTests(sdpaProblem(dims(Lq, Lk), options), BC, blockTiles);

/** Whether row i sees key j under the problem's band (diagonal i + Lk − Lq): the band read once, asked of every pair. */
function bandOf(Lq: number, Lk: number, options: SdpaOptions): (i: number, j: number) => boolean {
  const { left, right } = sdpaProblem(dims(Lq, Lk), options);
  return (i, j) => j >= i + Lk - Lq - left && j <= i + Lk - Lq + right;
}
const sees = (Lq: number, Lk: number, options: SdpaOptions, i: number, j: number): boolean => bandOf(Lq, Lk, options)(i, j);

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
  it('keeps exactly each row\'s band in a model of the kernel\'s tile loop, key ranges and ALiBi\'s order included', () => {
    // The kernel's band (tiled-interface.wgsl: bandFirst, bandLast; unbounded as 0x3fffffff), its tile range of a row
    // block, its key ranges, `visited`, the key carried from step to step, `checked`, and the tests EXACT compiles.
    const UNBOUNDED = 0x3fffffff;
    function keptKeys(Lq: number, Lk: number, options: SdpaOptions, BR: number, BC: number, splits: number, reversed: boolean): Set<number>[] {
      const problem = sdpaProblem(dims(Lq, Lk), options);
      const EXACT = exactTestsCompiled(exactTests(problem, BC, false), 128);
      const left = Math.min(problem.left, UNBOUNDED);
      const right = Math.min(problem.right, UNBOUNDED);
      const bandFirst = (i: number): number => i + Lk - Lq - left;
      const bandLast = (i: number): number => i + Lk - Lq + right;
      const kept = Array.from({ length: Lq }, () => new Set<number>());
      for (let rowFirst = 0; rowFirst < Lq; rowFirst += BR) {
        const rowLast = Math.min(Lq, rowFirst + BR) - 1;
        const keyFirst = Math.max(bandFirst(rowFirst), 0);
        const keyLast = Math.min(bandLast(rowLast), Lk - 1);
        const jFirst = keyFirst <= keyLast ? Math.floor(keyFirst / BC) : 0;
        const count = keyFirst <= keyLast ? Math.floor(keyLast / BC) + 1 - jFirst : 0;
        for (let split = 0; split < splits; split++) {
          const nBegin = Math.floor((split * count) / splits);
          const nEnd = Math.floor(((split + 1) * count) / splits);
          const visited = (n: number): number => (reversed && n < nEnd ? nBegin + nEnd - 1 - n : n);
          let key0 = nBegin < nEnd ? (jFirst + visited(nBegin)) * BC : 0;
          for (let step = nBegin; step < nEnd; step++) {
            const nextKey0 = step + 1 < nEnd ? (jFirst + visited(step + 1)) * BC : 0;
            const checked = key0 + BC > Lk || key0 < bandFirst(rowLast) || key0 + BC - 1 > bandLast(rowFirst);
            for (let i = rowFirst; i <= rowLast; i++) {
              for (let j = key0; j < key0 + BC; j++) {
                const inBand = j < Lk && j >= bandFirst(i) && j <= bandLast(i);
                if (!checked || EXACT === 0 || inBand) (kept[i] as Set<number>).add(j);
              }
            }
            key0 = nextKey0;
          }
        }
      }
      return kept;
    }
    for (const BC of [16, 32]) {
      for (const BR of [16, 64]) {
        for (let Lq = 1; Lq <= 70; Lq += 13) {
          for (let Lk = 1; Lk <= 140; Lk += 17) {
            const bands: SdpaOptions[] = [{}, { causal: true }, { window: [Lk - 1, Lq - 1] }, { window: [Lk - 2, Lq - 1] }, { window: [Lk - 1, Lq - 2] }, { window: [3, 2] }];
            for (const options of bands) {
              if (options.window && Math.min(...options.window) < -1) continue;
              for (const [splits, reversed] of [[1, false], [3, false], [3, true]] as const) {
                const kept = keptKeys(Lq, Lk, options, BR, BC, splits, reversed);
                const inBand = bandOf(Lq, Lk, options);
                for (let i = 0; i < Lq; i++) {
                  const band = Array.from({ length: Lk }, (_, j) => j).filter((j) => inBand(i, j)).join();
                  const got = [...(kept[i] as Set<number>)].sort((x, y) => x - y).join();
                  if (got !== band) expect(got, `Lq ${Lq} Lk ${Lk} ${JSON.stringify(options)} BR ${BR} BC ${BC} row ${i}`).toBe(band);
                }
              }
            }
          }
        }
      }
    }
  });
});

