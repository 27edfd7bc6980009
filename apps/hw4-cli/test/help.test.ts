import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { EXIT } from '../src/exit-codes.js';
import { commandHelp, COMMANDS, HELP } from '../src/help.js';
import { LADDER } from '@fa/ladder';
import { CPU_RUNG_IDS, isNativeLine } from '../src/stderr-filter.js';
import { cli } from './cli-helpers.js';

/** The CLI's reference, where the README points for the exit codes. */
const reference = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

describe('help', () => {
  it.each(Object.keys(COMMANDS))('hw4-cli %s --help lists every option of the command, each with a description', (command) => {
    const page = commandHelp(command);
    for (const [name, option] of Object.entries(COMMANDS[command]?.options ?? {})) {
      const line = page.split('\n').find((l) => new RegExp(`^  (-\\w, |    )--${name}(\\s|$)`).test(l));
      expect(line, `--${name}`).toBeDefined();
      if (option.short) expect(line).toContain(`-${option.short}, --${name}`);
      expect(line?.trim().length ?? 0, `--${name} has a description`).toBeGreaterThan(`--${name}`.length + 12);
    }
    expect(page).toMatch(/Exit codes/);
  });

  it('check --help names --allow-non-finite, -q, --json; run --help names --threads, --allow-inaccurate', () => {
    const check = cli(['check', '--help']);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^Usage: hw4-cli check/);
    for (const flag of ['--allow-non-finite', '-q, --quiet', '--json', '--rows', '-t, --tolerance']) expect(check.stdout).toContain(flag);
    const run = cli(['run', '--help']).stdout;
    for (const flag of ['--threads', '--allow-inaccurate', '--allow-non-finite', '-q, --quiet', '--json']) expect(run).toContain(flag);
    expect(cli(['conformance', '--help']).stdout).toContain('--json');
  });

  it('the exit codes in --help and in docs/cli.md are exactly the codes the CLI uses', () => {
    const codes = [...new Set(Object.values(EXIT))].sort((a, b) => a - b);
    const section = reference.slice(reference.indexOf('| exit code |'));
    const table = section.slice(0, section.indexOf('\n\n')).split('\n').slice(2);
    expect(table.map((row) => Number(/^\| (\d+) \|/.exec(row)?.[1]))).toEqual(codes);
    for (const code of codes) expect(HELP).toMatch(new RegExp(`(^|\\s)${code}\\s`, 'm'));
  });
});

describe('native messages', () => {
  it('recognises the lines Dawn and the Vulkan loader print, and none of ours', () => {
    for (const line of [
      "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file",
      '    at operator() (/home/runner/work/node-webgpu/third_party/dawn/src/dawn/native/vulkan/BackendVk.cpp:368)',
      'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.',
      'ERROR: [Loader Message] Code 0 : loader_scan_for_direct_drivers: ...',
    ]) {
      expect(isNativeLine(line), line).toBe(true);
    }
    for (const line of ['hw4-cli: error: x', '  total    0.208 s', '  features: core-features-and-limits', 'GPU: none (no GPU adapter)', 'PASS: max abs error 1e-7']) {
      expect(isNativeLine(line), line).toBe(false);
    }
  });

  it('the launcher knows the CPU rungs without loading the ladder', () => {
    expect([...CPU_RUNG_IDS].sort()).toEqual(LADDER.filter((r) => r.kind === 'cpu').map((r) => r.id).sort());
  });

  it('keeps Dawn\'s own lines out of stderr, whether or not a GPU is found', () => {
    for (const env of [{}, { VK_ICD_FILENAMES: '/nonexistent/icd.json' }] as Record<string, string>[]) {
      const run = cli(['--list'], env);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/^GPU: /m);
    }
  });
});
