import { describe, expect, it } from 'vitest';
import { compareOutputs, formatComparison, generateInput, matrixFloats, type DataKind, type Shape } from '@fa/io';
import { runAll, type RungDefinition } from '@fa/core';
import { attentionOracle, cpu, seqAttention, seqFlash, seqFlashKernel } from '../src/node.js';

const env = { threads: 2 };

async function outputOf(rung: RungDefinition, shape: Shape, input: Float32Array): Promise<Float32Array> {
  const runner = await rung.prepare(env, shape);
  try {
    return (await runAll(runner, input, shape)).output;
  } finally {
    await runner.dispose();
  }
}

describe('attentionOracle', () => {
  it('returns V when N = 1 (softmax of one score is 1)', () => {
    const shape = { B: 2, N: 1, d: 8 };
    const input = generateInput({ shape, seed: 3 });
    const O = attentionOracle(input, shape);
    for (let b = 0; b < 2; b++) {
      const V = input.subarray((b * 3 + 2) * 8, (b * 3 + 3) * 8);
      expect([...O.subarray(b * 8, b * 8 + 8)]).toEqual([...V]);
    }
  });

  it('averages V uniformly when every key is the same (constant rows)', () => {
    const shape = { B: 1, N: 9, d: 4 };
    const input = generateInput({ shape, kind: 'constant-rows', seed: 5 });
    const O = attentionOracle(input, shape);
    const V = input.subarray(2 * matrixFloats(shape));
    for (let x = 0; x < 4; x++) {
      let mean = 0;
      for (let j = 0; j < 9; j++) mean += (V[j * 4 + x] as number) / 9;
      for (let i = 0; i < 9; i++) expect(O[i * 4 + x]).toBeCloseTo(mean, 12);
    }
  });
});

describe.each([seqAttention, seqFlash, cpu])('$id', (rung) => {
  it.each([
    [{ B: 1, N: 1, d: 16 }, 'uniform'],
    [{ B: 3, N: 77, d: 32 }, 'uniform'],
    [{ B: 1, N: 100, d: 80 }, 'dominant-key'],
    [{ B: 2, N: 45, d: 128 }, 'constant-rows'],
    [{ B: 1, N: 70, d: 64 }, 'negative-scores'],
  ] as const)('stays within 2× the fp32 baseline error on %o %s', async (shape: Shape, kind: DataKind) => {
    const input = generateInput({ shape, kind, seed: 7 });
    const oracle = attentionOracle(input, shape);
    const baseline = compareOutputs(await outputOf(seqAttention, shape, input), oracle, shape);
    const comparison = compareOutputs(await outputOf(rung, shape, input), oracle, shape);
    expect(comparison.pass, formatComparison(comparison)).toBe(true);
    expect(comparison.maxAbsError).toBeLessThanOrEqual(Math.max(2 * baseline.maxAbsError, 1e-6));
  });

  it('stays finite and within 0.1 on inputs of magnitude 40', async () => {
    const shape = { B: 2, N: 50, d: 32 };
    const input = generateInput({ shape, kind: 'large', seed: 9 });
    const output = await outputOf(rung, shape, input);
    expect(output.every(Number.isFinite)).toBe(true);
    expect(compareOutputs(output, attentionOracle(input, shape), shape).maxAbsError).toBeLessThan(0.1);
  });
});

describe('seq-flash with m starting at FLT_MIN instead of −∞', () => {
  const shape = { B: 1, N: 40, d: 32 };
  const input = generateInput({ shape, kind: 'negative-scores', seed: 1 });
  const run = (initialMax: number): Float32Array => {
    const output = new Float32Array(matrixFloats(shape));
    const size = matrixFloats(shape);
    seqFlashKernel(undefined, initialMax)(
      input.subarray(0, size),
      input.subarray(size, 2 * size),
      input.subarray(2 * size),
      output,
      shape,
    );
    return output;
  };

  it('divides 0 by 0 when every score is very negative (the assignment bug)', () => {
    expect(run(1.1754943508222875e-38).every(Number.isNaN)).toBe(true);
  });

  it('is finite and correct when m starts at −∞', () => {
    const comparison = compareOutputs(run(Number.NEGATIVE_INFINITY), attentionOracle(input, shape), shape);
    expect(comparison.pass, formatComparison(comparison)).toBe(true);
  });
});

describe('the cpu rung on many cores', () => {
  it('runs 24 workers without piping them into standard output and error (Node warned of a listener leak at exit)', async () => {
    const { execFileSync } = await import('node:child_process');
    // A script of its own (CommonJS, as the workers' eval'd source is), run from this package's folder.
    const script = `(async () => {
      const { cpu } = await import('@fa/reference/node');
      const { runAll } = await import('@fa/core');
      const { generateInput } = await import('@fa/io');
      let warnings = 0;
      process.on('warning', () => { warnings++; });
      const shape = { B: 24, N: 8, d: 4 };
      const runner = await cpu.prepare({ threads: 24 }, shape);
      await runAll(runner, generateInput({ shape, seed: 1 }), shape);
      await runner.dispose();
      // What hw4-cli's exit does: wait for standard output and error to flush, with a listener for their errors.
      process.stdout.once('error', () => {});
      process.stderr.once('error', () => {});
      await new Promise((resolve) => setTimeout(resolve, 50));
      console.log(JSON.stringify({ warnings }));
    })();`;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: new URL('..', import.meta.url), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(JSON.parse(out.trim().split('\n').pop() ?? '{}')).toEqual({ warnings: 0 });
  });
});
