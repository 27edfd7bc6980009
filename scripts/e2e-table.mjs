#!/usr/bin/env node
// File-to-file timing of hw4-cli as a drop-in: for each shape, generate an input, then run the whole process
// (`hw4-cli INPUT OUTPUT`, default rung) several times and report the best process wall time beside the CLI's own
// breakdown, and, with --torch, the best wall time of PyTorch's fp32 attention as a file-to-file program
// (scripts/torch-attention.py) on the same input. Every output file is checked against the float64 oracle on 8 sampled
// rows of every batch. With --cuda BIN, also the best wall time of a CUDA program run as `BIN INPUT OUTPUT` (such as
// scripts/cuda/hw4-attention.cu, built with nvcc). Prints a markdown table with a total row; --md FILE also writes it.
// Usage: node scripts/e2e-table.mjs [--cli PATH] [--repeats N] [--torch] [--python BIN] [--cuda BIN] [--md FILE] [--dir DIR] [SHAPE ...]
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
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const cli = option('--cli', new URL('../apps/hw4-cli/bin/hw4-cli.js', import.meta.url).pathname);
const repeats = Number(option('--repeats', '3'));
const md = option('--md', undefined);
const python = option('--python', 'python3');
const torch = flag('--torch');
const cuda = option('--cuda', undefined);
const dir = mkdtempSync(join(option('--dir', tmpdir()), 'fa-e2e-'));
const shapes = args.length > 0 ? args : ['13600,128,32', '10,2048,64', '500,2048,64', '4,32768,32', '2,32768,64', '26,32768,64'];
const torchScript = new URL('torch-attention.py', import.meta.url).pathname;

function timed(command, argv, what) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, argv, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, result, failed: result.status !== 0 ? `${what} failed (${result.status}): ${(result.stderr ?? '').trim().split('\n').pop()}` : undefined };
}

function run(argv) {
  const { ms, result, failed } = timed(process.execPath, [cli, ...argv], `hw4-cli ${argv.join(' ')}`);
  if (failed && !(argv[0] === 'check' && result.status === 5)) throw new Error(failed);
  return { ms, stdout: result.stdout };
}

/** The float64 oracle on 8 sampled rows of every batch (the full oracle would take hours here). */
function check(input, output) {
  const c = JSON.parse(run(['check', '--rows', '8', '--json', '-q', input, output]).stdout);
  return `${c.maxAbsError.toExponential(1)} (${c.pass ? 'pass' : 'FAIL'})`;
}

const f = (x) => (x === undefined || x === null ? '—' : x.toFixed(3));
const rows = [];
let cliTotal = 0;
let torchTotal = 0;
let cudaTotal = 0;
try {
  for (const shape of shapes) {
    const input = join(dir, 'in.bin');
    const output = join(dir, 'out.bin');
    run(['gen', '--shape', shape, '--seed', '1', '-q', input]);
    let best;
    for (let r = 0; r < repeats; r++) {
      const { ms, stdout } = run(['--json', '-q', input, output]);
      if (!best || ms < best.ms) best = { ms, summary: JSON.parse(stdout) };
    }
    const ours = check(input, output);
    /** Another program's best wall time over `repeats` runs on this input, and its cells: seconds, ratio, check. */
    const program = (command, argv, what) => {
      rmSync(output, { force: true });
      let bestMs = Number.POSITIVE_INFINITY;
      for (let r = 0; r < repeats; r++) {
        const { ms, failed } = timed(command, argv, what);
        if (failed) throw new Error(failed);
        bestMs = Math.min(bestMs, ms);
      }
      return { bestMs, cells: [(bestMs / 1000).toFixed(3), (bestMs / best.ms).toFixed(2), check(input, output)] };
    };
    let torchCells = [];
    if (torch) {
      const { bestMs, cells } = program(python, [torchScript, input, output], 'torch-attention.py');
      torchTotal += bestMs;
      torchCells = cells;
    }
    let cudaCells = [];
    if (cuda) {
      const { bestMs, cells } = program(cuda, [input, output], 'CUDA program');
      cudaTotal += bestMs;
      cudaCells = cells;
    }
    cliTotal += best.ms;
    const s = best.summary.seconds;
    rows.push(
      `| ${shape.replaceAll(',', '×')} | \`${best.summary.impl}\` | ${(best.ms / 1000).toFixed(3)} | ${cudaCells.slice(0, 2).join(' | ')}${cuda ? ' | ' : ''}${torchCells.slice(0, 2).join(' | ')}${torch ? ' | ' : ''}` +
        `${f(s.total)} | ${f(s.setup)} | ${f(s.stream)} | ${best.summary.chunks} | ${f(s.input)} | ${f(s.compute)} | ${f(s.gpu)} | ${f(s.output)} | ${f(s.overlap)} | ${ours}${cuda ? ` | ${cudaCells[2]}` : ''}${torch ? ` | ${torchCells[2]}` : ''} |`,
    );
    process.stderr.write(`${rows[rows.length - 1]}\n`);
    rmSync(input);
    rmSync(output, { force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const torchHead = torch ? ' PyTorch wall (s, best of ' + repeats + ') | PyTorch ÷ hw4-cli |' : '';
const cudaHead = cuda ? ' CUDA wall (s, best of ' + repeats + ') | CUDA ÷ hw4-cli |' : '';
const columns = 13 + (torch ? 3 : 0) + (cuda ? 3 : 0);
const blanks = (n) => ' |'.repeat(n);
const table = [
  `| B×N×d | rung | hw4-cli wall (s, best of ${repeats}) |${cudaHead}${torchHead} CLI total | setup | stream | chunks | input | compute | of which GPU | output | overlap | max error, 8 rows per batch |${cuda ? ' CUDA max error |' : ''}${torch ? ' PyTorch max error |' : ''}`,
  `|${'---|'.repeat(columns)}`,
  ...rows,
  `| all ${shapes.length} | | **${(cliTotal / 1000).toFixed(3)}** |${cuda ? ` **${(cudaTotal / 1000).toFixed(3)}** | ${(cudaTotal / cliTotal).toFixed(2)} |` : ''}${torch ? ` **${(torchTotal / 1000).toFixed(3)}** | ${(torchTotal / cliTotal).toFixed(2)} |` : ''}${blanks(columns - 3 - (torch ? 2 : 0) - (cuda ? 2 : 0))}`,
].join('\n');
process.stdout.write(`${table}\n`);
if (md) writeFileSync(md, `${table}\n`);
