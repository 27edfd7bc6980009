/**
 * Hardening of the measuring commands and the attention CPU path: signals during `sdpa --impl cpu-fp32` (defect 7),
 * `sdpa --bench --json` on an adapter whose binding limit is below the copy kernel's 256 MiB (defect 8), an unusable
 * `--out` refused before anything is measured (defect 9), sweep sizes the hw4 header cannot hold (defect 10), and
 * empty or repeated `--shapes` and `--impl` (defect 17).
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy } from '@fa/io';
import { copyBytes, SDPA_BENCH_CASES } from '../src/bench/sdpa.js';
import { benchTableHeader, benchTableRow } from '../src/sdpa/bench.js';
import { benchShapesOf, distinctRungs } from '../src/commands/bench.js';
import { pointShapes } from '../src/commands/sweep.js';
import { CLI, cli, ownLines, tempFolder, testCacheHome } from './cli-helpers.js';

const dir = tempFolder();
const cpuOnly = { FA_GPU: 'off' };
let counter = 0;

/** A fresh folder inside the test's folder. */
function freshFolder(): string {
  const folder = join(dir, `folder-${counter++}`);
  mkdirSync(folder);
  return folder;
}

/** Deterministic values in [−1, 1). */
function values(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let state = seed >>> 0;
  for (let e = 0; e < count; e++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[e] = (state / 2 ** 32) * 2 - 1;
  }
  return out;
}

describe('signals end sdpa on the CPU at once (defect 7)', () => {
  // [1, 8, 2048, 64] f32: 8-10 s of float32 work on one thread.
  const shape = [1, 8, 2048, 64];
  const count = shape.reduce((a, n) => a * n, 1);
  const [q, k, v] = ['q', 'k', 'v'].map((name, seed) => {
    const path = join(dir, `${name}.npy`);
    writeFileSync(path, encodeNpy(shape, values(count, seed + 1)));
    return path;
  }) as [string, string, string];

  it.each([
    ['SIGTERM', 143, {}],
    ['SIGINT', 130, {}],
    ['SIGHUP', 129, { FA_STDERR_FILTER: 'always' }],
  ] as const)('%s while it computes ends the run long before the computation would, exit %i, nothing written', async (signal, code, env) => {
    const folder = freshFolder();
    const out = join(folder, 'out.npy');
    const run = spawn(process.execPath, [CLI, 'sdpa', '--impl', 'cpu-fp32', q, k, v, out], { env: { ...process.env, ...cpuOnly, ...env, XDG_CACHE_HOME: testCacheHome() } });
    let stderr = '';
    run.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const closed = new Promise<number | null>((resolve) => run.on('close', resolve));
    // Started, the files read, and some way into the computation.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const signalled = performance.now();
    run.kill(signal);
    const timeout = setTimeout(() => run.kill('SIGKILL'), 10_000);
    const exit = await closed;
    clearTimeout(timeout);
    expect(exit, stderr).toBe(code);
    // Well under the seconds of work left (a loaded machine may take a second or two to schedule the exit).
    expect(performance.now() - signalled).toBeLessThan(4_000);
    expect(stderr).toMatch(new RegExp(`\\(${signal}\\); no output was written`));
    expect(readdirSync(folder)).toEqual([]);
  }, 30_000);
});

describe('the copy kernel of sdpa --bench fits the adapter (defect 8)', () => {
  it('moves 256 MiB, or the largest buffer the adapter binds and allocates, in whole vec4s', () => {
    const MiB = 2 ** 20;
    expect(copyBytes({ maxStorageBufferBindingSize: 4096 * MiB, maxBufferSize: 4096 * MiB })).toBe(256 * MiB);
    expect(copyBytes({ maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB })).toBe(128 * MiB);
    expect(copyBytes({ maxStorageBufferBindingSize: 2 ** 31 - 1, maxBufferSize: 100 * MiB + 7 })).toBe(100 * MiB);
  });

  const listing = JSON.parse(cli(['sdpa', '--list', '--json']).stdout || '{"implementations":[]}') as { implementations: { id: string; available: boolean }[] };
  const decodeHere = listing.implementations.some((i) => i.id === 'attention-decode' && i.available);
  const smallest = SDPA_BENCH_CASES.findIndex((c) => c.name === 'decode f32: 1 row, 4096 keys');

  it.skipIf(!decodeHere)(`sdpa --bench --json on the smallest case prints JSON alone on standard output, PyTorch's backends by name${decodeHere ? '' : ' (skipped: no GPU with the decode kernel here)'}`, () => {
    expect(smallest).toBeGreaterThanOrEqual(0);
    // A stand-in for a CUDA PyTorch: per case, SDPA's own dispatch in fp32 and fp16, and each fp16 backend by name.
    const python = join(tempFolder(), 'fake-python');
    const times = { fp32: 2, fp16: 0.5, fp16FA2: 0.25, fp16cuDNN: 0.125, fp16Flex: 'failed: not compiled' };
    writeFileSync(python, `#!${process.execPath}\nconst cases = JSON.parse(process.argv[4]);\nconsole.log(JSON.stringify({ torch: 'fake', device: 'fake gpu', rows: cases.map(() => (${JSON.stringify(times)})) }));\n`);
    chmodSync(python, 0o755);
    const run = cli(['sdpa', '--bench', '--json', '--python', python, '--cases', String(smallest)], { FA_BENCH_WARM_MS: '0' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/validation|Invalid|While /);
    const report = JSON.parse(run.stdout) as { copyGBs?: number | null; rows: { name: string; maxError: number; ms: number; msBackToBack?: number; torch: unknown }[] };
    expect(report.rows.map((r) => r.name)).toEqual(['decode f32: 1 row, 4096 keys']);
    expect(report.rows[0]?.torch).toEqual(times);
    expect(report.rows[0]?.maxError).toBeLessThan(1e-5);
    if (report.copyGBs !== null && report.copyGBs !== undefined) {
      // With timestamps (the copy kernel's rate says so), calls back to back are timed too.
      expect(report.copyGBs).toBeGreaterThan(0);
      expect(report.rows[0]?.msBackToBack).toBeGreaterThan(0);
    }
  }, 300_000);

});

describe("sdpa --bench's table", () => {
  it("names PyTorch's fp16 backends in a column of their own, a dash where one has no time", () => {
    expect(benchTableHeader()[0]).toContain('| PyTorch fp32 | PyTorch fp16 | fp16 FA2 / cuDNN / Flex | ONNX Runtime WebGPU |');
    const row = { name: 'case', impl: 'attention-fp32', ms: 1, msMin: 0.9, msMax: 1.1, tflops: 10, kvGBs: 100, maxError: 1e-6, ort: { ms: 3 } };
    const torch = { fp32: 2, fp16: 0.5, fp16FA2: 0.25, fp16cuDNN: 0.125, fp16Flex: 'failed: not compiled' };
    expect(benchTableRow({ ...row, torch })).toBe('| case | attention-fp32 | 1.000 (0.900-1.100) | — | 10.0 | 100 | 1.0e-6 | 2.000 | 0.500 | 0.250 / 0.125 / — | 3.000 | 2.00 |');
    expect(benchTableRow({ ...row, msBackToBack: 0.95, torch })).toContain('| 1.000 (0.900-1.100) | 0.950 | 10.0 |');
  });
});

/** A bench of one CPU rung on a tiny shape into `out` (extra arguments after). */
const bench = (out: string, ...more: string[]): ReturnType<typeof cli> =>
  cli(['bench', '--impl', 'seq-attention', '--shapes', '1,16,8', '--repeats', '1', '--no-torch', '--out', out, ...more], cpuOnly);
/** A sweep of one CPU rung over two tiny shapes into `out`. */
const sweep = (out: string): ReturnType<typeof cli> =>
  cli(['sweep', '--over', 'n', '--values', '16,32', '--base', '1,*,8', '--impl', 'seq-attention', '--repeats', '1', '--no-torch', '--out', out], cpuOnly);

/** Exit 4 with one line matching `message`, and nothing measured (the bench says each shape it measures). */
function refusedUpFront(run: ReturnType<typeof cli>, message: RegExp): void {
  expect(run.code, run.stderr).toBe(4);
  expect(ownLines(run.stderr)).toEqual([expect.stringMatching(message)]);
  expect(run.stderr).not.toMatch(/GFLOP|internal error/);
  expect(run.stdout).toBe('');
}

describe('an unusable --out is refused before anything is measured (defect 9)', () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'mine');

  it.each([
    ['a regular file', file, /^hw4-cli: error: --out .*a-file: is a file, not a folder; give a folder for the report files/],
    ['/dev/null', '/dev/null', /^hw4-cli: error: --out \/dev\/null: is a device, not a folder; give a folder/],
    ['a path under a regular file', join(file, 'reports'), /--out .*a-file\/reports: .*a-file is a file, not a folder, so the folder cannot be created; give another --out/],
  ])('bench and sweep refuse %s as --out with exit 4', (_what, out, message) => {
    refusedUpFront(bench(out), message);
    refusedUpFront(sweep(out), message);
    expect(readFileSync(file, 'utf8')).toBe('mine');
  });

  const root = process.getuid?.() === 0;
  it.skipIf(root)(`a folder this user cannot write in${root ? ' (skipped: root may write in any folder)' : ''}`, () => {
    const folder = freshFolder();
    chmodSync(folder, 0o555);
    refusedUpFront(bench(folder), /is not writable by this user; make it writable \(chmod u\+w\) or give another --out/);
    refusedUpFront(sweep(join(folder, 'sub')), /is not writable by this user/);
  });

  it('report files in the way: a folder where a file goes, a file marked read-only', () => {
    const folder = freshFolder();
    const first = bench(folder);
    expect(first.code, first.stderr).toBe(0);
    const json = readdirSync(folder).find((f) => f.endsWith('.json')) as string;
    const base = join(folder, json.replace(/\.json$/, ''));
    chmodSync(`${base}.md`, 0o444);
    refusedUpFront(bench(folder), /\.md is read-only \(mode 444\); make it writable \(chmod u\+w\) or give another --out/);
    chmodSync(`${base}.md`, 0o644);
    // A folder named like the chart.
    rmSync(`${base}.svg`);
    mkdirSync(`${base}.svg`);
    refusedUpFront(bench(folder), /\.svg is a folder where the report's svg file goes; move it away or give another --out/);
  });

  it('a corrupt earlier bench report is named, kept as it was, and must be moved away by the user', () => {
    const folder = freshFolder();
    const first = bench(folder);
    expect(first.code, first.stderr).toBe(0);
    const json = join(folder, readdirSync(folder).find((f) => f.endsWith('.json')) as string);
    for (const text of ['{ "adapter": "x", "shapes": [', '{"results": []}']) {
      writeFileSync(json, text);
      refusedUpFront(bench(folder), /\.json is not a bench report \(.*\); this run would replace it: move it away or delete it, then run again$/);
      expect(readFileSync(json, 'utf8')).toBe(text);
      const render = cli(['bench', '--render', '--out', folder], cpuOnly);
      expect(render.code, render.stderr).toBe(4);
      expect(ownLines(render.stderr)).toEqual([expect.stringMatching(/\.json is not a bench report .*; --render would rewrite it/)]);
      expect(readFileSync(json, 'utf8')).toBe(text);
    }
  });

  it('an earlier report of the same adapter is still extended with the shapes of a later run', () => {
    const folder = freshFolder();
    const first = bench(folder);
    expect(first.code, first.stderr).toBe(0);
    const later = cli(['bench', '--impl', 'seq-attention', '--shapes', '1,24,8', '--repeats', '1', '--no-torch', '--out', folder, '-q'], cpuOnly);
    expect(later.code, later.stderr).toBe(0);
    const json = join(folder, readdirSync(folder).find((f) => f.endsWith('.json')) as string);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { shapes: { shape: { N: number } }[] };
    expect(report.shapes.map((s) => s.shape.N)).toEqual([16, 24]);
  });
});

describe('sweep sizes the hw4 header cannot hold are refused up front (defect 10)', () => {
  it('as bench refuses them in --shapes: exit 2, one line, before measuring', () => {
    for (const [values, message] of [
      ['64,3000000000', /^hw4-cli: error: --values 64,3000000000: shape 4×3000000000×64: N = 3000000000 does not fit the header's int32; give B, N and d of at most 2147483647$/],
      ['64,100000000', /--values 64,100000000: shape 4×100000000×64: one batch .* at most 2\.00 GiB per batch is supported/],
    ] as const) {
      const run = cli(['sweep', '--over', 'n', '--values', values, '--impl', 'seq-attention', '--no-torch', '--out', freshFolder()], cpuOnly);
      expect(run.code, run.stderr).toBe(2);
      expect(ownLines(run.stderr)).toEqual([expect.stringMatching(message)]);
    }
    const batch = cli(['sweep', '--over', 'batch', '--values', '1,2147483648', '--base', '*,16,8', '--impl', 'seq-attention', '--no-torch', '--out', freshFolder()], cpuOnly);
    expect(batch.code, batch.stderr).toBe(2);
    expect(ownLines(batch.stderr)).toEqual([expect.stringMatching(/B = 2147483648 does not fit the header's int32/)]);
    const shapes = cli(['bench', '--shapes', '4,3000000000,64', '--impl', 'seq-attention', '--no-torch', '--out', freshFolder()], cpuOnly);
    expect(shapes.code).toBe(2);
    expect(shapes.stderr).toMatch(/N = 3000000000 does not fit the header's int32/);
  });

  it('checks every point of the study, as the bench checks a shape', () => {
    expect(pointShapes('d', { B: 1, N: 8, d: 0 }, [16, 32], '16,32')).toEqual([{ B: 1, N: 8, d: 16 }, { B: 1, N: 8, d: 32 }]);
    expect(() => pointShapes('n', { B: 4, N: 0, d: 64 }, [64, 2 ** 31], '64,2147483648')).toThrow(/^--values 64,2147483648: shape 4×2147483648×64: N = 2147483648 does not fit/);
  });
});

describe('empty and repeated --shapes and --impl are refused (defect 17)', () => {
  it.each([
    ['--shapes ""', ['bench', '--shapes', ''], /^hw4-cli: error: --shapes "" names no shape; give shapes B,N,d separated by spaces or ';'/],
    ['--shapes " ; "', ['bench', '--shapes', ' ; '], /--shapes " ; " names no shape/],
    ['a shape twice', ['bench', '--shapes', '1,16,8 2,16,8;1x16x8'], /^hw4-cli: error: --shapes "1,16,8 2,16,8;1x16x8" gives 1,16,8 more than once; give each shape once$/],
    ['a rung twice', ['bench', '--impl', 'seq-attention,seq-flash,seq-attention', '--shapes', '1,16,8'], /^hw4-cli: error: --impl seq-attention,seq-flash,seq-attention names seq-attention more than once; name each rung once$/],
    ['a rung twice in a sweep', ['sweep', '--over', 'n', '--values', '16,32', '--impl', 'seq-flash,seq-flash'], /--impl seq-flash,seq-flash names seq-flash more than once/],
  ])('%s: exit 2 in one line, nothing written', (_what, args, message) => {
    const out = join(dir, `never-${counter++}`);
    const run = cli([...args, '--no-torch', '--out', out], cpuOnly);
    expect(run.code, run.stderr).toBe(2);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(message)]);
    expect(existsSync(out)).toBe(false);
  });

  it('parses shapes and rungs for the bench', () => {
    expect(benchShapesOf('1,16,8;2x32x4')).toEqual([{ B: 1, N: 16, d: 8 }, { B: 2, N: 32, d: 4 }]);
    expect(distinctRungs('seq-flash,seq-attention').map((r) => r.id)).toEqual(['seq-flash', 'seq-attention']);
    expect(() => distinctRungs('cpu,cpu')).toThrow(/names cpu more than once/);
  });
});
