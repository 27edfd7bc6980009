#!/usr/bin/env node
// Builds bundle/hw4-cli/: the CLI (and bench) as one ESM file plus the webgpu package's loader and dawn.node for
// linux-x64, so that it runs with nothing but Node 20 (e.g. on a GPU machine without node_modules):
//   node bundle/hw4-cli/hw4-cli.mjs --list
// and beside it the research code of experiments/ (microbenchmarks and variant sweeps), on the same webgpu package:
//   node bundle/hw4-cli/experiments.mjs --help
// Usage: node scripts/bundle.mjs   (npm run bundle)
import { build } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bundle', 'hw4-cli');
const { version } = JSON.parse(readFileSync(join(root, 'apps/hw4-cli/package.json'), 'utf8'));
const webgpuDir = dirname(createRequire(join(root, 'packages/core/package.json')).resolve('webgpu/package.json'));
const platform = `${process.platform}-${process.arch}`;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// Two files, as in the package: the launcher hw4-cli.mjs, and main (cli.js), which the launcher loads only in the
// process that runs the command. A third, experiments.mjs, is the command line of experiments/.
await build({
  entryPoints: {
    'hw4-cli': join(root, 'apps/hw4-cli/src/launch.ts'),
    cli: join(root, 'apps/hw4-cli/src/cli.ts'),
    experiments: join(root, 'experiments/src/cli.ts'),
  },
  outdir: out,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['source'],
  loader: { '.wgsl': 'text' },
  define: { __HW4_CLI_VERSION__: JSON.stringify(version) },
  external: ['webgpu', './cli.js'],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});
// The launcher imports './cli.js' as written in its source: main keeps that name (ESM through the package.json below).
renameSync(join(out, 'cli.mjs'), join(out, 'cli.js'));
const target = join(out, 'node_modules', 'webgpu');
mkdirSync(join(target, 'dist', platform), { recursive: true });
cpSync(join(webgpuDir, 'index.js'), join(target, 'index.js'));
cpSync(join(webgpuDir, 'package.json'), join(target, 'package.json'));
cpSync(join(webgpuDir, 'dist', platform, 'dawn.node'), join(target, 'dist', platform, 'dawn.node'));
writeFileSync(join(out, 'package.json'), `${JSON.stringify({ name: 'hw4-cli-bundle', version, type: 'module', private: true }, null, 2)}\n`);
const size = (p) => statSync(p).size;
const files = ['hw4-cli.mjs', 'cli.js', 'experiments.mjs'];
const total = files.reduce((sum, file) => sum + size(join(out, file)), 0) + size(join(target, 'dist', platform, 'dawn.node'));
process.stderr.write(`bundle/hw4-cli: ${files.join(', ')} + webgpu (${platform}), ${(total / 2 ** 20).toFixed(1)} MiB\n`);
