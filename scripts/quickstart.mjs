#!/usr/bin/env node
// Quick start for a machine with only Node.js and npm: installs the workspace with the pinned pnpm, builds every
// package, then runs `hw4-cli ladder`: the rungs on one generated input, each checked against the float64 oracle,
// printed as the ladder table. On a real GPU that is every rung; on a software GPU (lavapipe, SwiftShader), which
// compiles each kernel on the CPU, hw4-cli runs the quick ladder (the CPU rungs and one GPU rung per family at a small
// shape) and says where to see a real GPU's numbers. Usage: npm run quickstart [-- ladder options]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const { packageManager } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

function step(title, command, args) {
  process.stderr.write(`\n== ${title}\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`quickstart: "${title}" failed (exit ${result.status ?? result.signal}); see the output above\n`);
    process.exit(result.status ?? 1);
  }
}

step(`install (${packageManager})`, npx, ['--yes', packageManager, 'install', '--frozen-lockfile']);
step('build', npx, ['--yes', packageManager, 'run', 'build', '--output-logs=errors-only']);
step('ladder: the rungs on a generated input, checked against the float64 oracle', process.execPath, [
  'apps/hw4-cli/bin/hw4-cli.js',
  'ladder',
  ...process.argv.slice(2),
]);
process.stderr.write(
  [
    '',
    'Next:',
    '  npm test                  the tests (npm run test:conformance: every rung on every awkward case)',
    '  docs/ladder.md            the ladder, one page per rung, and the H100 bench tables',
    '  npx hw4-cli --help        the CLI (docs/cli.md: files, signals, exit codes)',
    '  packages/sdpa             @fa/sdpa, attention as models call it (docs/sdpa.md)',
    '  npm run web               the teaching page: the ladder on your own GPU in a browser',
    '',
  ].join('\n'),
);
