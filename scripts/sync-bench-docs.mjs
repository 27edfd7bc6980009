#!/usr/bin/env node
// Copies the bench's markdown (docs/bench/<adapter>.md, written by `hw4-cli bench`) into docs/ladder.md between the
// markers <!-- bench:begin --> and <!-- bench:end -->, so the ladder page shows the numbers of the last bench run.
// Usage: node scripts/sync-bench-docs.mjs [docs/bench/<adapter>.md]
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const docs = new URL('../docs/', import.meta.url).pathname;
const source = process.argv[2] ?? join(docs, 'bench', readdirSync(join(docs, 'bench')).find((f) => f.startsWith('nvidia') && f.endsWith('.md')) ?? '');
const table = readFileSync(source, 'utf8').trim();
const svg = basename(source).replace(/\.md$/, '.svg');
const page = join(docs, 'ladder.md');
const text = readFileSync(page, 'utf8');
const begin = '<!-- bench:begin -->';
const end = '<!-- bench:end -->';
if (!text.includes(begin) || !text.includes(end)) throw new Error(`${page} has no ${begin} … ${end} section`);
const body = `${begin}\n<!-- generated from ${basename(source)} by scripts/sync-bench-docs.mjs; do not edit by hand -->\n\n![TFLOP/s per rung and shape](bench/${svg})\n\n${table.replace(/^(#{2,5}) /gm, '#$1 ')}\n\n${end}`;
writeFileSync(page, text.slice(0, text.indexOf(begin)) + body + text.slice(text.indexOf(end) + end.length));
process.stderr.write(`updated ${page} from ${source}\n`);
