/**
 * A consumer's view of the declarations: a project with `skipLibCheck: false`, no @types/node and no @webgpu/types
 * of its own type-checks code that uses @fa/io, @fa/core, the GPU rung packages and @fa/reference (their built
 * .d.ts files, as published). @fa/core's declarations bring WebGPU's types with them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fa-consumer-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const PACKAGES = ['io', 'core', 'naive', 'fused', 'optimized', 'tensor', 'reference'];

function typeCheck(source: string): { status: number | null; output: string } {
  writeFileSync(join(dir, 'index.ts'), source);
  const run = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the packages' declarations in a strict consumer", () => {
  mkdirSync(join(dir, 'node_modules/@fa'), { recursive: true });
  for (const name of PACKAGES) symlinkSync(join(root, 'packages', name), join(dir, 'node_modules/@fa', name), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, types: [] }, files: ['index.ts'] }),
  );

  it('type-check with skipLibCheck: false and nothing added by hand', () => {
    const { status, output } = typeCheck(`
      import { generateInput, compareOutputs, type Shape } from '@fa/io';
      import { canRun, gpuContextFromDevice, prepareEncoded, type GpuContext, type Rung } from '@fa/core';
      import { naive } from '@fa/naive';
      import { fusedSplitQ } from '@fa/fused';
      import { prefetch } from '@fa/optimized';
      import { compensatedMatrix } from '@fa/tensor';
      import { attentionOracle, seqFlash } from '@fa/reference';
      export function context(adapter: GPUAdapter, device: GPUDevice): GpuContext {
        return gpuContextFromDevice(adapter, device);
      }
      export const shape: Shape = { B: 1, N: 8, d: 4 };
      export const used = [generateInput, compareOutputs, canRun, prepareEncoded, naive, fusedSplitQ, prefetch, compensatedMatrix, attentionOracle, seqFlash];
      export type R = Rung;
    `);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('and still catch a real type error (the check is live)', () => {
    const { status, output } = typeCheck(`import { generateInput } from '@fa/io';\nexport const x: string = generateInput;\n`);
    expect(status).not.toBe(0);
    expect(output).toMatch(/not assignable to type 'string'/);
  });
});
