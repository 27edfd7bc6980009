/**
 * The GPU rungs, the sequential rungs and the float64 oracle, @fa/core and @fa/io bundle for a browser: esbuild with platform 'browser' resolves every import of
 * an entry that uses them (package exports as a consumer's bundler sees them: the built dist files), and nothing in
 * the bundle comes from Node's built-in modules. @fa/io/node, the file reader and writer, must not bundle there.
 */
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));

async function bundleForBrowser(contents: string) {
  return build({
    stdin: { contents, resolveDir: here, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

const inputsOf = (metafile: Metafile | undefined): string[] => Object.keys(metafile?.inputs ?? {});

describe('a browser bundle', () => {
  it('takes @fa/io, @fa/core, every GPU rung package, the sequential rungs and the oracle, with no Node built-in', async () => {
    const result = await bundleForBrowser(`
      import { generateInput, compareOutputs, parseHeader } from '@fa/io';
      import { canRun, runAll, createGpuContext } from '@fa/core';
      import { naive } from '@fa/naive';
      import { fused, fusedMaxsmem, fusedSplitQ } from '@fa/fused';
      import * as optimized from '@fa/optimized';
      import * as tensor from '@fa/tensor';
      import { attentionOracle, seqAttention, seqFlash } from '@fa/reference';
      export const all = [generateInput, compareOutputs, parseHeader, canRun, runAll, createGpuContext, naive, fused, fusedMaxsmem, fusedSplitQ, optimized, tensor, attentionOracle, seqAttention, seqFlash];
    `);
    expect(result.errors).toEqual([]);
    const inputs = inputsOf(result.metafile);
    expect(inputs.some((path) => path.includes('packages/optimized/dist'))).toBe(true);
    expect(inputs.filter((path) => path.startsWith('node:') || /(^|\/)node_modules\/webgpu\//.test(path))).toEqual([]);
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).not.toMatch(/from\s*["']node:|require\(["'](node:)?(fs|os|path|crypto|worker_threads)["']\)/);
  });

  it('takes @fa/ladder/browser, the ladder table for a web page, with no Node built-in', async () => {
    const result = await bundleForBrowser(`export { LADDER, conformanceVerdict } from '@fa/ladder/browser';`);
    expect(result.errors).toEqual([]);
    const inputs = inputsOf(result.metafile);
    expect(inputs.filter((path) => path.startsWith('node:') || path.includes('packages/reference/dist/node'))).toEqual([]);
  });

  it('refuses @fa/io/node, which reads and writes files, and @fa/reference/node, whose cpu rung uses worker threads', async () => {
    await expect(bundleForBrowser(`import { Hw4Input } from '@fa/io/node'; export { Hw4Input };`)).rejects.toThrow(/node:|fs/);
    await expect(bundleForBrowser(`import { cpu } from '@fa/reference/node'; export { cpu };`)).rejects.toThrow(/worker_threads/);
  });
});
