#!/usr/bin/env node
/**
 * The experiments' entry: `node experiments/dist/cli.js <experiment> [arguments]` in the repository, or
 * `node bundle/hw4-cli/experiments.mjs <experiment> [arguments]` from the bundle (scripts/bundle.mjs). Dawn keeps a
 * thread alive after a device is created, so the process ends with process.exit once the output is flushed.
 */
import { runCommandLine } from './command-line.js';
import { EXPERIMENTS } from './experiments.js';

const code = await runCommandLine(process.argv.slice(2), EXPERIMENTS, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write('', () => process.exit(code));
