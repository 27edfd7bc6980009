/**
 * The float32 error bound against inputs built to make it tight: every rounding of a score's dot product going the
 * same way (docs/error-bound.md, "Inputs that make it tight"). The CPU rungs compute in exactly emulated float32, so
 * their real error is the error of that arithmetic, and it must never pass the bound.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Rung } from '@fa/core';
import { chunkStats, encodeHeader, generateInput, type Shape } from '@fa/io/node';
import { findRung } from '@fa/ladder';
import { attentionOracle } from '@fa/reference';
import { chooseForAccuracy, errorBound, fp32Risk } from '../src/accuracy.js';
import { ExitError } from '../src/exit-codes.js';
import { cli, tempFolder } from './cli-helpers.js';

const f = Math.fround;
const env = { threads: 1 };
const cpu = findRung('cpu') as Rung;
const float32Rungs = ['seq-attention', 'seq-flash'].map((id) => findRung(id) as Rung);

/**
 * B = 1, N = 2: q = 1; k₁ = 1 + δ in every column, with δ just under half a unit in the last place of the partial sums,
 * so each addition rounds the same way; k₂ = 1 except its last column, chosen so that the float32 sums tie while the
 * exact ones differ. v = ±V in opposite signs for the two keys, so the output is V·tanh(Δs/2): the lost score
 * difference, times V.
 */
function tieInput(d: number, V: number): { input: Float32Array; shape: Shape } {
  const N = 2;
  const k1 = f(1 + 0.99 * 2 ** (Math.floor(Math.log2(d)) - 25));
  let sum = 0;
  for (let x = 0; x < d; x++) sum = f(sum + k1);
  const input = new Float32Array(3 * N * d);
  const [Q, K, Vm] = [0, 1, 2].map((m) => input.subarray(m * N * d, (m + 1) * N * d)) as [Float32Array, Float32Array, Float32Array];
  Q.fill(1);
  K.fill(k1, 0, d);
  K.fill(1, d);
  K[2 * d - 1] = f(sum - (d - 1));
  for (let x = 0; x < d; x++) {
    Vm[x] = x % 2 === 0 ? V : -V;
    Vm[d + x] = -(Vm[x] as number);
  }
  return { input, shape: { B: 1, N, d } };
}

async function maxError(rung: Rung, input: Float32Array, shape: Shape): Promise<number> {
  const runner = await rung.prepare(env, shape);
  const O = new Float32Array(shape.B * shape.N * shape.d);
  await runner.run(input, shape.B, O);
  await runner.dispose();
  const exact = attentionOracle(input, shape);
  return O.reduce((worst, o, i) => Math.max(worst, Math.abs(o - (exact[i] as number))), 0);
}

function boundOf(rung: Rung, input: Float32Array, shape: Shape): number {
  return errorBound(rung, fp32Risk(chunkStats(input, shape.B, shape), shape), env)?.total ?? Number.NaN;
}

describe('the proven float32 error bound', () => {
  const cases = [
    { d: 32, V: 2000 },
    { d: 128, V: 150 },
    { d: 128, V: 2000 },
    { d: 512, V: 150 },
  ];
  it.for(cases)('holds on the tie input at d = $d, |V| = $V, and stops a named rung where it passes 5e-3', async ({ d, V }) => {
    const { input, shape } = tieInput(d, V);
    for (const rung of float32Rungs) {
      const error = await maxError(rung, input, shape);
      const bound = boundOf(rung, input, shape);
      expect(error, `${rung.id}: error ${error} against bound ${bound}`).toBeLessThanOrEqual(bound);
      const risk = fp32Risk(chunkStats(input, shape.B, shape), shape);
      const named = { env, chosen: rung, named: true, allowInaccurate: false, tolerance: 5e-3, accurate: cpu };
      if (bound > 5e-3) expect(() => chooseForAccuracy(named, risk)).toThrow(ExitError);
      else expect(chooseForAccuracy(named, risk).rung).toBe(rung);
    }
  });

  it('catches the tie input the old estimate passed (2.2e-2 real error at d = 128, |V| = 2000)', async () => {
    const { input, shape } = tieInput(128, 2000);
    const seqFlash = findRung('seq-flash') as Rung;
    expect(await maxError(seqFlash, input, shape)).toBeGreaterThan(2e-2);
    expect(boundOf(seqFlash, input, shape)).toBeGreaterThan(2e-2);
  });

  it.for(['large', 'dominant-key', 'negative-scores', 'uniform'] as const)('holds on generated %s data', async (kind) => {
    for (const shape of [{ B: 2, N: 61, d: 64 }, { B: 1, N: 200, d: 36 }]) {
      const input = generateInput({ shape, kind, seed: 5 });
      for (const rung of float32Rungs) {
        expect(await maxError(rung, input, shape)).toBeLessThanOrEqual(boundOf(rung, input, shape));
      }
    }
  });

  it('keeps ordinary data on the named rung', () => {
    const shape = { B: 2, N: 256, d: 64 };
    const input = generateInput({ shape, kind: 'uniform', seed: 3 });
    for (const rung of float32Rungs) expect(boundOf(rung, input, shape)).toBeLessThan(2.5e-3);
  });
});

describe('hw4-cli on the tie input', () => {
  const dir = tempFolder();
  const { input, shape } = tieInput(128, 2000);
  const file = join(dir, 'tie.bin');
  writeFileSync(file, Buffer.concat([Buffer.from(encodeHeader(shape)), Buffer.from(input.buffer)]));

  it('refuses a named float32 rung (exit 2, nothing written), and the default run computes it in float64', () => {
    const named = cli(['--impl', 'seq-flash', file, join(dir, 'named.bin')], { FA_GPU: 'off' });
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/cannot promise the tolerance 0\.005 on this input: .*\(a proven bound\)/);
    expect(cli(['check', '-q', file, join(dir, 'named.bin')]).code).toBe(4);
    const byDefault = cli([file, join(dir, 'default.bin')], { FA_GPU: 'off' });
    expect(byDefault.code).toBe(0);
    expect(cli(['check', '-q', file, join(dir, 'default.bin')]).code).toBe(0);
  });
});
