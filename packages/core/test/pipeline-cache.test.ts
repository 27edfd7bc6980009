/**
 * Each device compiles a kernel's entry point once per set of override constants and layout: a second request takes
 * the same pipeline (the software GPU compiles at the first dispatch, seconds to minutes per pipeline), another set of
 * constants compiles anew, and a failed compile is not kept.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cachedLayout, computeEntryPoints, computePipelines, pipelineCounts, type GpuContext } from '../src/index.js';
import { acquireNodeGpu } from '../src/node/index.js';

const acquired = await acquireNodeGpu();
const gpu: GpuContext | undefined = acquired.gpu;
const skip = gpu === undefined && process.env.FA_REQUIRE_GPU !== '1';
if (skip) console.warn(`pipeline cache tests skipped: ${acquired.reason ?? ''}`);
afterAll(() => {
  gpu?.destroy();
});

const KERNEL = {
  label: 'cache-test.wgsl',
  code: `
override K: u32;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn first() { out[0] = K; }
@compute @workgroup_size(1)
fn second() { out[1] = K + 1u; }
`,
};

describe('kernel reflection of entry points', () => {
  it('names the compute entry points in source order, ignoring comments', () => {
    expect(computeEntryPoints(KERNEL.code)).toEqual(['first', 'second']);
    expect(computeEntryPoints(`// @compute fn gone() {}\n@compute @workgroup_size(8, 1)\nfn main() {}`)).toEqual(['main']);
  });
});

describe.skipIf(skip)(`the pipelines of a device${skip ? ` (skipped: ${acquired.reason ?? ''})` : ''}`, () => {
  it('are compiled once per entry point, constants and layout, and reused after', async () => {
    if (!gpu) throw new Error(`FA_REQUIRE_GPU=1 but ${acquired.reason ?? 'no GPU'}`);
    const start = pipelineCounts(gpu);
    const a = await computePipelines(gpu, KERNEL, ['first', 'second'], { K: 3 });
    const again = await computePipelines(gpu, { ...KERNEL, label: 'same code, another label' }, ['second'], { K: 3 });
    expect(again.second).toBe(a.second);
    const other = await computePipelines(gpu, KERNEL, ['first'], { K: 4 });
    expect(other.first).not.toBe(a.first);
    const entries: GPUBindGroupLayoutEntry[] = [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }];
    const layout = cachedLayout(gpu, 'cache-test', entries);
    expect(cachedLayout(gpu, 'cache-test again', entries)).toBe(layout);
    const explicit = await computePipelines(gpu, KERNEL, ['first'], { K: 3 }, layout.pipelineLayout);
    expect(explicit.first).not.toBe(a.first);
    expect((await computePipelines(gpu, KERNEL, ['first'], { K: 3 }, layout.pipelineLayout)).first).toBe(explicit.first);
    const counts = pipelineCounts(gpu);
    expect(counts.compiled.slice(start.compiled.length)).toEqual([
      'cache-test.wgsl:first {K=3}',
      'cache-test.wgsl:second {K=3}',
      'cache-test.wgsl:first {K=4}',
      'cache-test.wgsl:first {K=3}',
    ]);
    expect(counts.reused - start.reused).toBe(2);
  });

  it('does not keep a kernel that failed to compile', async () => {
    if (!gpu) throw new Error(`FA_REQUIRE_GPU=1 but ${acquired.reason ?? 'no GPU'}`);
    const broken = { label: 'broken.wgsl', code: '@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }' };
    for (let attempt = 0; attempt < 2; attempt++) {
      gpu.device.pushErrorScope('validation');
      await expect(computePipelines(gpu, broken, ['main'])).rejects.toThrow(/WGSL of broken.wgsl does not compile: line 1/);
      expect(await gpu.device.popErrorScope()).not.toBeNull();
    }
  });
});
