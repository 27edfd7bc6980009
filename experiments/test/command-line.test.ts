/** The command line's argument handling, on stand-in experiments and on the real ones' parsers (no GPU). */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.js';
import { runCommandLine } from '../src/command-line.js';
import type { Experiment } from '../src/experiment.js';
import { EXPERIMENTS } from '../src/experiments.js';
import { parseFp32TilesArgs } from '../src/fp32-tiles-sweep.js';
import { NotHereError } from '../src/harness.js';
import { parseMatrixVariantArgs } from '../src/matrix-variants.js';
import { parseMicrotileArgs } from '../src/microtiles-variants.js';
import { DEFAULT_SIZES, KERNEL_SIZES, parseResidentArgs } from '../src/resident-workgroups.js';
import { parseKeys, parseStrides } from '../src/subgroup-matrix-bench.js';

function capture(): { out: string[]; err: string[]; output: { out: (l: string) => void; err: (l: string) => void } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (l) => out.push(l), err: (l) => err.push(l) } };
}

const echo: Experiment = {
  name: 'echo',
  summary: 'prints its arguments',
  usage: 'WORD ...',
  page: 'docs/echo.md',
  run: (args, print) => {
    if (args[0] === 'bad') throw new UsageError('bad word');
    if (args[0] === 'here') throw new NotHereError('no GPU here');
    if (args[0] === 'fail') throw new Error('broken');
    print(args.join(' '));
    return Promise.resolve();
  },
};

describe('runCommandLine', () => {
  it('lists the experiments on --help (0) and without arguments (2)', async () => {
    const a = capture();
    expect(await runCommandLine(['--help'], EXPERIMENTS, a.output)).toBe(0);
    for (const e of EXPERIMENTS) expect(a.out.join('\n')).toContain(e.name);
    expect(await runCommandLine([], EXPERIMENTS, capture().output)).toBe(2);
  });
  it('shows an experiment\'s usage and page on <name> --help', async () => {
    const c = capture();
    expect(await runCommandLine(['echo', '--help'], [echo], c.output)).toBe(0);
    expect(c.out.join('\n')).toContain('usage: experiments echo WORD ...');
    expect(c.out.join('\n')).toContain('docs/echo.md');
  });
  it('runs an experiment with its arguments', async () => {
    const c = capture();
    expect(await runCommandLine(['echo', 'a', 'b'], [echo], c.output)).toBe(0);
    expect(c.out).toEqual(['a b']);
  });
  it('exits 2 on an unknown experiment, a usage error or a GPU without what is needed, 1 on a failure', async () => {
    expect(await runCommandLine(['nope'], [echo], capture().output)).toBe(2);
    const c = capture();
    expect(await runCommandLine(['echo', 'bad'], [echo], c.output)).toBe(2);
    expect(c.err[0]).toBe('echo: bad word');
    expect(await runCommandLine(['echo', 'here'], [echo], capture().output)).toBe(2);
    expect(await runCommandLine(['echo', 'fail'], [echo], capture().output)).toBe(1);
  });
  it('checks the real experiments\' arguments before any GPU work', async () => {
    for (const [name, args] of [['fp32-tiles-sweep', ['128,32']], ['matrix-variants', ['resident-o', 'no-copy']], ['microtiles-variants', ['kernel', '1,64,48']],
      ['subgroup-matrix-bench', ['60']], ['lds-pattern-bench', ['extra']]] as const) {
      const c = capture();
      expect(await runCommandLine([name, ...args], EXPERIMENTS, c.output)).toBe(2);
      expect(c.err[0]).toMatch(new RegExp(`^${name}: `));
    }
  });
});

describe('parsers', () => {
  it('fp32-tiles-sweep: defaults and checks', () => {
    expect(parseFp32TilesArgs([])).toEqual({ tiles: { WG: 128, BC: 32, PREFETCH: 0 }, shape: { B: 500, N: 2048, d: 64 }, rung: 'split-softmax' });
    expect(parseFp32TilesArgs(['64,16,1', '4,256,32', 'lean-loop']).rung).toBe('lean-loop');
    expect(() => parseFp32TilesArgs(['0,32,0'])).toThrow(UsageError);
    expect(() => parseFp32TilesArgs(['128,32,0', '1,2,6'])).toThrow(UsageError);
    expect(() => parseFp32TilesArgs(['128,32,0', '1,2,64', 'row-split'])).toThrow(UsageError);
  });
  it('matrix-variants: rung, variant and shape', () => {
    expect(parseMatrixVariantArgs(['resident-o', 'flush-4'])).toEqual({ rung: 'resident-o', variant: 'flush-4', shape: { B: 100, N: 2048, d: 64 } });
    expect(() => parseMatrixVariantArgs(['staged-matrix', 'flush-4'])).toThrow(UsageError);
    expect(parseMatrixVariantArgs(['f16-resident', 'kernel', '4,8192,128']).shape).toEqual({ B: 4, N: 8192, d: 128 });
    expect(() => parseMatrixVariantArgs(['resident-o', 'kernel', '1,64,144'])).toThrow(UsageError);
    expect(() => parseMatrixVariantArgs(['resident-o', 'kernel', '1,64,40'])).toThrow(UsageError);
  });
  it('microtiles-variants: variant and d = 32 or 64', () => {
    expect(parseMicrotileArgs([])).toEqual({ variant: 'kernel', shape: { B: 100, N: 2048, d: 64 } });
    expect(() => parseMicrotileArgs(['no-such'])).toThrow(UsageError);
    expect(() => parseMicrotileArgs(['kernel', '1,64,16'])).toThrow(UsageError);
  });
  it('resident-workgroups: sizes in bytes (multiples of 4) and invocations', () => {
    expect(parseResidentArgs([])).toEqual({ sizes: DEFAULT_SIZES, invocations: 128 });
    expect(DEFAULT_SIZES).toContain(48 * 1024);
    for (const bytes of KERNEL_SIZES) expect(DEFAULT_SIZES).toContain(bytes);
    expect(parseResidentArgs(['31712,31760', '256'])).toEqual({ sizes: [31712, 31760], invocations: 256 });
    expect(() => parseResidentArgs(['1023'])).toThrow(UsageError);
    expect(() => parseResidentArgs(['1024', '2048'])).toThrow(UsageError);
    expect(() => parseResidentArgs(['1024', '128', 'x'])).toThrow(UsageError);
  });
  it('subgroup-matrix-bench: strides', () => {
    expect(parseStrides([])).toEqual([64, 72]);
    expect(parseStrides(['64', '80'])).toEqual([64, 80]);
    expect(() => parseStrides(['66'])).toThrow(UsageError);
  });
  it('subgroup-matrix-bench heads: keys per query fragment', () => {
    expect(parseKeys([])).toBe(8192);
    expect(parseKeys(['4096'])).toBe(4096);
    for (const wrong of [['100'], ['0'], ['131072'], ['4096', '64'], ['x']]) expect(() => parseKeys(wrong), wrong.join(' ')).toThrow(UsageError);
  });
});
