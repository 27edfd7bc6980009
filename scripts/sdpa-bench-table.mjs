#!/usr/bin/env node
// Writes the table of `hw4-cli sdpa --bench --ort --out DIR` records into docs/sdpa.md between the markers
// <!-- sdpa-bench:begin --> and <!-- sdpa-bench:end -->: each case's median (min-max) from the first record, the
// second record's median beside it (a second process of the same bundle), PyTorch fp16 by backend, ONNX Runtime's
// WebGPU time from each record, and its ratio to ours in each.
// Usage: node scripts/sdpa-bench-table.mjs FIRST.json SECOND.json
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, relative } from 'node:path';

const [firstPath, secondPath] = process.argv.slice(2);
if (!firstPath || !secondPath) throw new Error('usage: node scripts/sdpa-bench-table.mjs FIRST.json SECOND.json');
const [first, second] = [firstPath, secondPath].map((path) => JSON.parse(readFileSync(path, 'utf8')));
const ms = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');
const ortMs = (row) => (typeof row.ort?.ms === 'number' ? row.ort.ms : undefined);

const lines = first.rows.map((row) => {
  const again = second.rows.find((r) => r.name === row.name);
  if (!again) throw new Error(`${secondPath} has no row "${row.name}"`);
  const t = row.torch ?? {};
  // Each process's ratio where it timed ONNX Runtime (a second process may have run without it).
  const ratios = [row, again].map((r) => (ortMs(r) === undefined ? undefined : ortMs(r) / r.ms));
  const ratio = ratios.some((x) => x !== undefined) ? ratios.map((x) => (x === undefined ? '—' : x.toFixed(2))).join(' · ') : '—';
  return `| ${row.name} | ${row.impl} | ${ms(row.ms)} (${ms(row.msMin)}-${ms(row.msMax)}) | ${ms(again.ms)} | ${row.tflops.toFixed(1)} | ${ms(t.fp16FA2)} / ${ms(t.fp16cuDNN)} / ${ms(t.fp16Flex)} | ${ms(ortMs(row))} | ${ms(ortMs(again))} | ${ratio} |`;
});
const page = new URL('../docs/sdpa.md', import.meta.url).pathname;
const source = (path) => relative(new URL('../docs/', import.meta.url).pathname, path);
const table = [
  `<!-- generated from ${basename(firstPath)} and ${basename(secondPath)} by scripts/sdpa-bench-table.mjs; do not edit by hand -->`,
  `${first.adapter}, ${first.date}; ${first.torch}; ${first.ort}. Records: [first](${source(firstPath)}), [second](${source(secondPath)}).`,
  '',
  '| case | kernel | ours, ms | second | TFLOP/s | PyTorch fp16 FA2 / cuDNN / Flex | ONNX Runtime WebGPU | second | ONNX Runtime ÷ ours (each process) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...lines,
].join('\n');
const text = readFileSync(page, 'utf8');
const begin = '<!-- sdpa-bench:begin -->';
const end = '<!-- sdpa-bench:end -->';
if (!text.includes(begin) || !text.includes(end)) throw new Error(`${page} has no ${begin} … ${end} section`);
writeFileSync(page, `${text.slice(0, text.indexOf(begin))}${begin}\n${table}\n${end}${text.slice(text.indexOf(end) + end.length)}`);
process.stderr.write(`updated ${page} from ${firstPath} and ${secondPath}\n`);
