#!/usr/bin/env node
// Read and write throughput of @fa/io from the page cache: streams an input file of about 1 GiB through
// Hw4Input.chunks (with the non-finite check) and writes the same bytes with AtomicFileWriter.
// Usage: node bench/throughput.mjs [MiB] [--md FILE]   (run after the build; the turbo task `bench` does both)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtomicFileWriter, Hw4Input, generateChunks, inputBatchBytes, writeHw4Input } from '../dist/index.js';

const args = process.argv.slice(2);
const mdIndex = args.indexOf('--md');
const mdPath = mdIndex >= 0 ? args[mdIndex + 1] : undefined;
const mib = Number(args.find((a, i) => !a.startsWith('--') && i !== mdIndex + 1) ?? 1024);
const shape = { N: 2048, d: 64, B: Math.max(1, Math.round((mib * 2 ** 20) / (12 * 2048 * 64))) };
const bytes = 12 + shape.B * inputBatchBytes(shape);
const dir = mkdtempSync(join(tmpdir(), 'fa-io-bench-'));
const inputPath = join(dir, 'in.bin');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  await writeHw4Input(inputPath, shape, generateChunks({ shape, seed: 1 }, 16));
  const reads = [];
  const writes = [];
  for (let rep = 0; rep < 5; rep++) {
    let t = performance.now();
    const input = await Hw4Input.open(inputPath);
    const kept = [];
    let floats = 0;
    for await (const chunk of input.chunks()) {
      floats += chunk.data.length;
      if (kept.length < 1) kept.push(chunk.data);
    }
    await input.close();
    reads.push(bytes / ((performance.now() - t) / 1000));
    if (floats * 4 + 12 !== bytes) throw new Error('short read');
    t = performance.now();
    const writer = await AtomicFileWriter.open(join(dir, `out${rep}.bin`));
    const block = kept[0];
    for (let done = 0; done < bytes; done += block.byteLength) {
      await writer.write(done + block.byteLength <= bytes ? block : block.subarray(0, (bytes - done) >> 2));
    }
    await writer.commit();
    writes.push(bytes / ((performance.now() - t) / 1000));
    rmSync(join(dir, `out${rep}.bin`));
  }
  const gb = (x) => (x / 1e9).toFixed(2);
  const line = `| ${new Date().toISOString().slice(0, 10)} | ${cpus()[0]?.model ?? 'unknown CPU'} | ${(bytes / 2 ** 20).toFixed(0)} MiB | ${gb(median(reads))} GB/s | ${gb(median(writes))} GB/s |`;
  console.log('| date | CPU | file | read (median of 5) | write (median of 5) |');
  console.log('|---|---|---|---|---|');
  console.log(line);
  if (mdPath) writeFileSync(mdPath, `${line}\n`, { flag: 'a' });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
