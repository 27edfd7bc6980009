#!/usr/bin/env node
// File-to-file timing of hw4-cli as a drop-in: for each shape, generate an input, then run the whole process
// (`hw4-cli INPUT OUTPUT`, default rung) several times and report the best process wall time beside the CLI's own
// breakdown (setup, input, compute, output), then checks the output file against the float64 oracle on 8 sampled rows
// of every batch. Prints a markdown table; --md FILE also writes it.
// Usage: node scripts/e2e-table.mjs [--cli PATH] [--repeats N] [--md FILE] [--dir DIR] [SHAPE ...]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
};
const cli = option('--cli', new URL('../apps/hw4-cli/bin/hw4-cli.js', import.meta.url).pathname);
const repeats = Number(option('--repeats', '3'));
const md = option('--md', undefined);
const dir = mkdtempSync(join(option('--dir', tmpdir()), 'fa-e2e-'));
const shapes = args.length > 0 ? args : ['13600,128,32', '10,2048,64', '500,2048,64', '4,32768,32', '2,32768,64', '26,32768,64'];

function run(argv) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0 && !(argv[0] === 'check' && result.status === 5)) throw new Error(`hw4-cli ${argv.join(' ')} failed (${result.status}): ${result.stderr.trim().split('\n').pop()}`);
  return { ms, stdout: result.stdout };
}

const rows = [];
try {
  for (const shape of shapes) {
    const input = join(dir, 'in.bin');
    const output = join(dir, 'out.bin');
    run(['gen', '--shape', shape, '--seed', '1', '-q', input]);
    let best;
    for (let r = 0; r < repeats; r++) {
      const { ms, stdout } = run(['--json', '-q', input, output]);
      const summary = JSON.parse(stdout);
      if (!best || ms < best.ms) best = { ms, summary };
    }
    // Is the file right? The float64 oracle on 8 sampled rows of every batch (the full oracle would take hours here).
    const check = JSON.parse(run(['check', '--rows', '8', '--json', '-q', input, output]).stdout);
    const s = best.summary.seconds;
    const f = (x) => (x === undefined || x === null ? '—' : x.toFixed(3));
    rows.push(`| ${shape.replaceAll(',', '×')} | \`${best.summary.impl}\` | ${(best.ms / 1000).toFixed(3)} | ${f(s.total)} | ${f(s.setup)} | ${f(s.input)} | ${f(s.compute)} | ${f(s.gpu)} | ${f(s.output)} | ${check.maxAbsError.toExponential(1)} (${check.pass ? 'pass' : 'FAIL'}) |`);
    process.stderr.write(`${rows[rows.length - 1]}\n`);
    rmSync(input);
    rmSync(output, { force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const table = [
  '| B×N×d | rung | process wall (s, best of ' + repeats + ') | CLI total | setup | input | compute | of which GPU | output | max error, 8 rows per batch |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows,
].join('\n');
process.stdout.write(`${table}\n`);
if (md) writeFileSync(md, `${table}\n`);
