/**
 * hw4-cli on the GPU: streaming in chunks, failures late in a run, the adapter's report, bounds checks, the refusals,
 * the default rung and bench. Each rung through the CLI, cold in a process of its own, is
 * cli-gpu-rungs.conformance.test.ts (`npm run test:conformance`).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHeader } from '@fa/io/node';
import { CLI, cli, ownLines, tempFolder, testCacheHome } from './cli-helpers.js';
import { fp32Rungs, gpuMissing, gpuRungs, listing } from './cli-gpu-helpers.js';

const dir = tempFolder();

describe.skipIf(gpuMissing !== undefined)(`hw4-cli on the GPU${gpuMissing ? ` (skipped: ${gpuMissing})` : ''}`, () => {
  const input = join(dir, 'in.bin');
  cli(['gen', '--shape', '3,77,32', '--seed', '4', input, '-q']);

  it('a failure in a late chunk (NaN in batch 7 of 9, five chunks) leaves the old output untouched and no temporary file', () => {
    const shape = { B: 9, N: 40, d: 16 };
    const floats = 3 * shape.N * shape.d;
    const data = new Float32Array(shape.B * floats).map((_, i) => Math.sin(i));
    data[7 * floats + 5] = Number.NaN;
    const late = join(dir, 'late-nan.bin');
    writeFileSync(late, Buffer.concat([encodeHeader(shape), Buffer.from(data.buffer)]));
    const folder = join(dir, 'late');
    mkdirSync(folder);
    const output = join(folder, 'out.bin');
    writeFileSync(output, 'the old output');
    const impl = fp32Rungs[fp32Rungs.length - 1]?.id ?? 'naive';
    // One batch is 7680 bytes: 0.015 MiB holds two, so the NaN sits in the fourth of five chunks.
    const run = cli(['--impl', impl, '--chunk-mb', '0.015', late, output]);
    expect(run.code).toBe(3);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/1 non-finite value \(NaN or ±Inf\), the first at batch 7/)]);
    expect(readFileSync(output, 'utf8')).toBe('the old output');
    expect(readdirSync(folder)).toEqual(['out.bin']);
  });

  it('a stream on standard input that ends early fails after the chunks before it, writing nothing', () => {
    const five = join(dir, 'five-stream.bin');
    cli(['gen', '--shape', '5,40,16', '--seed', '8', five, '-q']);
    const bytes = readFileSync(five);
    const folder = join(dir, 'short');
    mkdirSync(folder);
    const output = join(folder, 'out.bin');
    writeFileSync(output, 'the old output');
    const impl = fp32Rungs[fp32Rungs.length - 1]?.id ?? 'naive';
    const run = spawnSync(process.execPath, [CLI, '--impl', impl, '--chunk-mb', '0.015', '-', output], { input: bytes.subarray(0, bytes.length - 100), encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: testCacheHome() } });
    expect(run.status).toBe(3);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/stream is truncated/)]);
    expect(readFileSync(output, 'utf8')).toBe('the old output');
    expect(readdirSync(folder)).toEqual(['out.bin']);
  });

  it('--list --json names the adapter', () => {
    const report = JSON.parse(cli(['--list', '--json']).stdout) as { adapter: { name: string; vendor: string; limits: Record<string, number> } | null };
    expect(report.adapter?.name).toMatch(/\S/);
    expect(report.adapter?.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
  });

  it('runs without Dawn\'s bounds checks unless --bounds-checks or FA_BOUNDS_CHECKS=1 asks for them, and says which', () => {
    expect(cli(['--list']).stdout).toContain('  bounds checks: off (FA_BOUNDS_CHECKS=1 or --bounds-checks turns them on)');
    expect(cli(['--bounds-checks', '--list']).stdout).toContain('  bounds checks: on');
    expect(cli(['--list'], { FA_BOUNDS_CHECKS: '1' }).stdout).toContain('  bounds checks: on');
    const checked = cli(['--bounds-checks', '--impl', 'fused', '-q', input, join(dir, 'checked.out')]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(ownLines(checked.stderr)).toEqual([]);
    expect(cli(['check', '-q', input, join(dir, 'checked.out')]).code).toBe(0);
  });

  it('a GPU rung named with --impl refuses ±40 data where float32 cannot meet 5e-3 (exit 2, nothing written)', () => {
    const large = join(dir, 'large.bin');
    cli(['gen', '--shape', '1,256,32', '--kind', 'large', large, '-q']);
    const impl = fp32Rungs[fp32Rungs.length - 1]?.id ?? 'naive';
    const output = join(dir, 'large.out');
    const run = cli(['--impl', impl, large, output]);
    expect(run.code).toBe(2);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(new RegExp(`rung ${impl} computes in float32 and cannot promise the tolerance`))]);
  });

  it('the default rung is the highest float32 GPU rung on the ladder, or cpu on a software GPU', () => {
    const software = cli(['--list']).stdout.includes('(software adapter');
    const run = cli(['--json', '-q', input, join(dir, 'default.out')]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { impl: string }).impl).toBe(software ? 'cpu' : fp32Rungs[fp32Rungs.length - 1]?.id);
  });

  it('a batch too large for a GPU binding ends with a one-line error, exit 1, and no output', () => {
    // N = 2^23, d = 4: the naive rung's score buffer alone needs N·64·4 bytes = 2 GiB per batch, over any binding limit
    // (on a GPU with a small limit, Q, K and V trip it first). A sparse file: the header is all that is ever read.
    const big = join(dir, 'big.bin');
    writeFileSync(big, encodeHeader({ B: 1, N: 2 ** 23, d: 4 }));
    truncateSync(big, 12 + 12 * 2 ** 23 * 4);
    const output = join(dir, 'kept.out');
    writeFileSync(output, 'kept');
    const run = cli(['--impl', 'naive', big, output]);
    expect(run.code).toBe(1);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/^hw4-cli: error: naive: one batch of B=1, N=8388608, d=4 needs [\d.]+ [MG]iB for (S|Q, K and V), over this GPU's maxStorageBufferBindingSize/)]);
    expect(readFileSync(output, 'utf8')).toBe('kept');
  });

  it('bench measures rungs, the copy floor, and writes JSON, markdown and SVG', () => {
    const out = join(dir, 'bench');
    const run = cli(['bench', '--shapes', '2,40,16', '--impl', 'cpu,fused-split-q', '--repeats', '2', '--no-torch', '--out', out, '-q']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\| 7 `fused-split-q` \| [\d.]+ ms · /);
    const base = listJson(out).replace(/\.json$/, '');
    const files = ['json', 'md', 'svg'].map((ext) => readFileSync(join(out, `${base}.${ext}`), 'utf8'));
    const report = JSON.parse(files[0] ?? '{}') as { shapes: { floorWallMs?: number; cells: { id: string; ran: boolean; gpuMs?: number; maxError?: number }[] }[] };
    expect(report.shapes[0]?.floorWallMs).toBeGreaterThan(0);
    const splitQ = report.shapes[0]?.cells.find((c) => c.id === 'fused-split-q');
    expect(splitQ).toMatchObject({ ran: true });
    expect(splitQ?.maxError).toBeLessThan(1e-5);
    expect(files[2]).toMatch(/^<svg/);
  });
});

/** Mesa's lavapipe, whose compile behaviour the next test depends on. */
const lavapipe = gpuMissing === undefined && listing.adapter?.isFallbackAdapter === true && listing.adapter.architecture === 'software';
const benchSkip = !lavapipe ? 'not on Mesa lavapipe, whose compile times it depends on' : !gpuRungs.some((r) => r.id === 'lean-loop') ? 'lean-loop cannot run here' : undefined;
describe.skipIf(benchSkip !== undefined)(`bench on the software GPU${benchSkip ? ` (skipped: ${benchSkip})` : ''}`, () => {
  // lavapipe compiles this kernel (lean-loop at d = 64, H = 2) at its first dispatch: a few seconds with the shader
  // cache off (about 20 s with Dawn's bounds checks on), over half of a 2 s budget, while a run after it takes a few
  // milliseconds. That check run must not become the cell's only sample.
  it('times a GPU rung again when its first run paid for compiling the kernel', () => {
    const out = join(dir, 'bench-cold');
    const run = cli(['bench', '--shapes', '2,77,64', '--impl', 'lean-loop', '--repeats', '2', '--budget-s', '2', '--no-torch', '--out', out, '-q'], {
      MESA_SHADER_CACHE_DISABLE: 'true',
    });
    expect(run.code, run.stderr).toBe(0);
    const base = join(out, listJson(out).replace(/\.json$/, ''));
    const report = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as { shapes: { cells: { id: string; ran: boolean; ms?: number; timing?: string; repeats?: number }[] }[] };
    const cell = report.shapes[0]?.cells.find((c) => c.id === 'lean-loop');
    expect(cell).toMatchObject({ ran: true, timing: 'steady', repeats: 2 });
    expect(cell?.ms).toBeLessThan(1000);
    expect(readFileSync(`${base}.md`, 'utf8')).toMatch(/This software adapter compiles a kernel at its first dispatch/);
  }, 120_000);
});

function listJson(dirPath: string): string {
  const name = readdirSync(dirPath).find((f) => f.endsWith('.json'));
  if (!name) throw new Error(`no JSON in ${dirPath}`);
  return name;
}

