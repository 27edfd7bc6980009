#!/usr/bin/env node
// Registers per invocation of every pipeline a command compiles, as the GPU driver's own compiler allots them.
//
// Runs COMMAND with FA_DAWN_TOGGLES=dump_shaders (packages/core/src/node/index.ts), so that Dawn prints each shader's
// WGSL and, per pipeline, the SPIR-V it hands the driver (override constants substituted); splits that print into
// one SPIR-V file per pipeline in DIR, assembles each with spirv-as (SPIRV-Tools; $SPIRV_AS, else on PATH), and has
// scripts/kernel-registers.py compile them on the first Vulkan device and read the driver's statistics
// (VK_KHR_pipeline_executable_properties). Prints one row per pipeline: the WGSL's first line, the entry point, the
// invocations per workgroup, the driver's register count, and how many such workgroups the registers let one
// compute unit hold (an NVIDIA unit: 64 Ki registers in four partitions, allotted per warp of 32 in steps of 256,
// at most 64 warps). Workgroup memory limits that count too (48 KiB per unit on the H100: docs/sdpa.md).
//
// Usage: node scripts/kernel-registers.mjs DIR -- COMMAND [ARGS...]
//   e.g. node scripts/kernel-registers.mjs /tmp/regs -- node bundle/hw4-cli/hw4-cli.mjs --impl lean-loop in.bin out.bin
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { forOldAssembler, pipelinesOf, toKhr } from './spirv-text.mjs';

const [dir, dash, ...command] = process.argv.slice(2);
if (dir === undefined || dash !== '--' || command.length === 0) {
  console.error('usage: node scripts/kernel-registers.mjs DIR -- COMMAND [ARGS...]');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const run = spawnSync(command[0], command.slice(1), {
  env: { ...process.env, FA_DAWN_TOGGLES: 'dump_shaders,disable_symbol_renaming' },
  encoding: 'utf8',
  maxBuffer: 1 << 30,
  stdio: ['ignore', 'pipe', 'inherit'],
});
writeFileSync(join(dir, 'dump.txt'), run.stdout ?? '');
if (run.status !== 0) console.error(`kernel-registers: the command exited with ${run.status}; reading what it printed`);

const pipelines = pipelinesOf(run.stdout ?? '');
if (pipelines.length === 0) {
  console.error('kernel-registers: the command printed no SPIR-V (is this Dawn on Vulkan?)');
  process.exit(1);
}

const spirvAs = process.env.SPIRV_AS ?? 'spirv-as';
/** The pipeline's SPIR-V assembled into `base`.spv, or why not (one line). */
function assemble(p, base) {
  writeFileSync(`${base}.spvasm`, p.asm);
  writeFileSync(`${base}.numbered.spvasm`, forOldAssembler(p.asm));
  const as = spawnSync(spirvAs, ['--target-env', 'spv1.4', '-o', `${base}.spv`, `${base}.numbered.spvasm`], { encoding: 'utf8' });
  if (as.status !== 0) return `${spirvAs} failed on ${base}.spvasm: ${(as.stderr || as.error?.message || '').trim().split('\n')[0]}`;
  try {
    writeFileSync(`${base}.spv`, toKhr(readFileSync(`${base}.spv`), p.asm));
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return undefined;
}
pipelines.forEach((p, k) => {
  const base = join(dir, `${String(k).padStart(2, '0')}-${p.entry}`);
  const failure = assemble(p, base);
  if (failure === undefined) p.file = `${base}.spv`;
  else console.error(`kernel-registers: ${failure.replace(/^kernel-registers: /, '')}`);
});
if (!pipelines.some((p) => p.file)) {
  console.error('kernel-registers: no pipeline assembled');
  process.exit(1);
}
// One process per pipeline: a driver that fails on one (it may crash) does not lose the others. Each prints one line:
// the file's stem, then name=value for each statistic, separated by tabs.
const script = join(dirname(new URL(import.meta.url).pathname), 'kernel-registers.py');
for (const p of pipelines.filter((q) => q.file)) {
  const python = spawnSync('python3', [script, p.file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (python.status !== 0) {
    console.error(`kernel-registers: kernel-registers.py ${p.file} exited with ${python.status ?? python.signal}`);
    continue;
  }
  const [, ...fields] = python.stdout.trim().split('\t');
  p.statistics = Object.fromEntries(fields.map((f) => f.split('=', 2)));
}

/** Workgroups of `invocations` one NVIDIA compute unit holds by registers alone. */
function byRegisters(registers, invocations) {
  const perWarp = Math.ceil((registers * 32) / 256) * 256;
  const warps = Math.min(64, 4 * Math.floor(16384 / perWarp));
  return Math.floor(warps / Math.ceil(invocations / 32));
}

/** NVIDIA's local memory figure comes back with 2^36 added (a kernel without any reports exactly 2^36). */
const localBytes = (value) => (value === undefined ? '' : String(Number(BigInt(value) % (1n << 36n))));

writeFileSync(
  join(dir, 'statistics.json'),
  JSON.stringify(pipelines.map(({ title, entry, invocations, file, statistics }) => ({ title, entry, invocations, file, statistics })), null, 2),
);
console.log('| kernel | entry | invocations | registers | workgroups per unit by registers | local memory (bytes) | other statistics |');
console.log('|---|---|---|---|---|---|---|');
for (const p of pipelines) {
  const s = p.statistics;
  const registerKey = s ? Object.keys(s).find((k) => /register/i.test(k)) : undefined;
  const localKey = s ? Object.keys(s).find((k) => /local memory/i.test(k)) : undefined;
  const registers = registerKey ? Number(s[registerKey]) : undefined;
  const rest = s ? Object.entries(s).filter(([k]) => k !== registerKey && k !== localKey).map(([k, v]) => `${k} ${v}`).join('; ') : p.file ? 'not compiled' : 'not assembled';
  const units = registers ? byRegisters(registers, p.invocations) : '';
  console.log(`| ${p.title} | ${p.entry} | ${p.invocations} | ${registers ?? '?'} | ${units} | ${localBytes(localKey ? s[localKey] : undefined)} | ${rest} |`);
}
