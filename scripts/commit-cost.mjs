#!/usr/bin/env node
// What committing an output costs on this file system: an output of MB MiB written in 25 MiB pieces to a temporary
// file, then closed and renamed into place, the way hw4-cli writes (@fa/io's AtomicFileWriter). Variants: the
// destination exists or not; an fdatasync after every piece started without waiting (the flush overlapping the
// writes); an fsync before the close. Prints ms for the writes, the syncs, the close and the rename, best of REPEATS.
// Usage: node scripts/commit-cost.mjs [--dir DIR] [--mb MB] [--repeats N]
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const dir = mkdtempSync(join(option('--dir', tmpdir()), 'fa-commit-'));
const mb = Number(option('--mb', '256'));
const repeats = Number(option('--repeats', '3'));
const piece = new Uint8Array(25 * 2 ** 20).fill(7);

async function once(variant) {
  const destination = join(dir, 'out.bin');
  if (variant.existing && !existsSync(destination)) writeFileSync(destination, piece.subarray(0, 1 << 20));
  if (!variant.existing) rmSync(destination, { force: true });
  const temporary = join(dir, `.out.bin.${process.pid}.tmp`);
  const t = [performance.now()];
  const handle = await open(temporary, 'wx', 0o644);
  const syncs = [];
  for (let written = 0; written < mb * 2 ** 20; written += piece.byteLength) {
    await handle.write(piece, 0, Math.min(piece.byteLength, mb * 2 ** 20 - written));
    if (variant.overlapSync) syncs.push(handle.datasync());
  }
  t.push(performance.now());
  await Promise.all(syncs);
  if (variant.fsync) await handle.sync();
  t.push(performance.now());
  await handle.close();
  t.push(performance.now());
  await rename(temporary, destination);
  t.push(performance.now());
  return t.slice(1).map((x, k) => x - (t[k] ?? 0));
}

const variants = [
  { name: 'new destination', existing: false },
  { name: 'over an existing file', existing: true },
  { name: 'over an existing file, datasync per piece (overlapped)', existing: true, overlapSync: true },
  { name: 'over an existing file, fsync before close', existing: true, fsync: true },
];
console.log(`| ${mb} MiB in ${dir} | writes | syncs | close | rename | total |`);
console.log('|---|---|---|---|---|---|');
try {
  for (const variant of variants) {
    let best;
    for (let r = 0; r < repeats; r++) {
      const parts = await once(variant);
      const total = parts.reduce((a, b) => a + b, 0);
      if (!best || total < best.total) best = { parts, total };
    }
    console.log(`| ${variant.name} | ${best.parts.map((x) => x.toFixed(1)).join(' | ')} | ${best.total.toFixed(1)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
