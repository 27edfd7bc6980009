import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempFolder } from './cli-helpers.js';

const cpuOnly = { FA_GPU: 'off' };

describe('conformance output', () => {
  it('prints its table on stdout (stderr stays empty)', () => {
    const run = cli(['conformance', '--impl', 'seq-flash'], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/rung\s+case\s+result/);
    expect(run.stdout).toMatch(/seq-flash\s+\S+.*PASS/);
    expect(run.stdout).toMatch(/^\d+ passed, 0 failed$/m);
    expect(run.stderr).toBe('');
  });

  it('--json prints the results as JSON on stdout', () => {
    const run = cli(['conformance', '--impl', 'seq-flash,naive', '--json'], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { passed: number; failed: number; skipped: { rung: string }[]; results: { rung: string; pass: boolean }[] };
    expect(result.failed).toBe(0);
    expect(result.passed).toBe(result.results.length);
    expect(result.results.every((r) => r.rung === 'seq-flash' && r.pass)).toBe(true);
    expect(result.skipped).toEqual([{ rung: 'naive', reason: expect.stringMatching(/FA_GPU=off/) as unknown }]);
  });
});

describe('ladder table', () => {
  it('labels the error ratio so it does not read like a speedup, on stdout', () => {
    const run = cli(['ladder', '--shape', '1,32,16', '--impl', 'seq-attention,seq-flash'], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/GFLOP\/s/);
    const header = run.stdout.split('\n').find((l) => l.includes('GFLOP/s')) ?? '';
    expect(header).toMatch(/speedup over below/);
    expect(header).toMatch(/error ÷ seq-attention's/);
    expect(header).not.toMatch(/vs seq/);
    const row = run.stdout.split('\n').find((l) => /^\s+2\s+seq-flash/.test(l)) ?? '';
    expect(row).toMatch(/\s\d\.\d\d\s+PASS$/);
  });
});

describe('run report', () => {
  it('says what its "waited on" column means', () => {
    const dir = tempFolder();
    const input = join(dir, 'in.bin');
    expect(cli(['gen', '--shape', '1,16,8', input, '-q']).code).toBe(0);
    const run = cli(['--impl', 'cpu', input, join(dir, 'out.bin')], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n');
    expect(lines.some((l) => /\bwaited on\s*$/.test(l))).toBe(true);
    expect(lines).toContainEqual(expect.stringMatching(/^\s+waited on: how long the streaming loop stood still for that stage/));
  });
});
