import { describe, expect, it } from 'vitest';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, tempFolder } from './cli-helpers.js';

const dir = tempFolder();

/**
 * A stand-in for `python3` with a CUDA PyTorch: answers the probe, and for the timing script prints what the real one
 * would, with a time that says which dtype it was given (float32: 2 ms, float16: 0.5 ms) and O = 0 on the sampled rows.
 */
const python = join(dir, 'fake-python');
writeFileSync(
  python,
  `#!${process.execPath}
const [, , flag, script, ...args] = process.argv;
if (flag !== '-c') process.exit(2);
if (script.includes('torch.cuda.is_available')) process.exit(0);
const [path, B, N, d, warmup, repeats, rows, dtype] = args;
const ms = { float32: 2, float16: 0.5 }[dtype];
if (ms === undefined) { console.error('unknown dtype ' + dtype); process.exit(1); }
const sample = JSON.parse(rows).map(() => new Array(Number(d)).fill(0));
console.log(JSON.stringify({ times: new Array(Number(repeats)).fill(ms), torch: 'fake', device: 'fake gpu', dtype, sample }));
`,
);
chmodSync(python, 0o755);
const cpuOnly = { FA_GPU: 'off' };

interface Report {
  shapes: { torch?: { ms?: number; reason?: string }; torchFp16?: { ms?: number; reason?: string } }[];
}

function bench(out: string, extra: string[]) {
  const run = cli(['bench', '--shapes', '1,16,16', '--impl', 'seq-flash', '--repeats', '2', '--python', python, '--out', out, '-q', ...extra], cpuOnly);
  const json = readdirSync(out).find((f) => f.endsWith('.json')) ?? '';
  return { run, report: JSON.parse(readFileSync(join(out, json), 'utf8')) as Report, markdown: readFileSync(join(out, json.replace(/json$/, 'md')), 'utf8') };
}

describe('bench --torch-dtype', () => {
  it('times PyTorch in fp32 by default, and in fp16 beside it with --torch-dtype fp32,fp16', () => {
    const plain = bench(join(dir, 'fp32'), []);
    expect(plain.run.code, plain.run.stderr).toBe(0);
    expect(plain.report.shapes[0]?.torch?.ms).toBe(2);
    expect(plain.report.shapes[0]?.torchFp16).toBeUndefined();
    expect(plain.markdown).not.toContain('PyTorch SDPA fp16');

    const both = bench(join(dir, 'both'), ['--torch-dtype', 'fp32,fp16']);
    expect(both.run.code, both.run.stderr).toBe(0);
    expect(both.report.shapes[0]?.torch?.ms).toBe(2);
    expect(both.report.shapes[0]?.torchFp16?.ms).toBe(0.5);
    expect(both.markdown).toMatch(/\| PyTorch SDPA fp32 \| 2\.00 ms · /);
    expect(both.markdown).toMatch(/\| PyTorch SDPA fp16 \| 0\.500 ms · /);
  });

  it('fp16 alone leaves the fp32 cell with its reason', () => {
    const only = bench(join(dir, 'fp16'), ['--torch-dtype', 'fp16']);
    expect(only.run.code, only.run.stderr).toBe(0);
    expect(only.report.shapes[0]?.torch?.reason).toBe('not requested (--torch-dtype fp16)');
    expect(only.report.shapes[0]?.torchFp16?.ms).toBe(0.5);
  });

  it('refuses an unknown dtype with a usage error (exit 2)', () => {
    const run = cli(['bench', '--shapes', '1,16,16', '--impl', 'seq-flash', '--torch-dtype', 'fp32,bf16', '--out', join(dir, 'bad')], cpuOnly);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--torch-dtype: unknown PyTorch dtype "bf16" \(expected fp32, fp16, comma-separated\)/);
  });
});
