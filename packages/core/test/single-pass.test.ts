import { describe, expect, it } from 'vitest';
import { checkBindings, checkUniforms, kernelBindings, packUniforms, structFields } from '../src/index.js';

const KERNEL = {
  label: 'test.wgsl',
  code: `
// @group(0) @binding(9) var<storage, read> commented: array<f32>;
struct Params {
  N: u32,
  batches: u32,
  scale: f32,  // a comment, with a comma
}
@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> O: array<f32>;
`,
};

describe('kernel reflection', () => {
  it('reads the bindings of group 0 in binding order, ignoring comments', () => {
    expect(kernelBindings(KERNEL.code).map((b) => [b.binding, b.name, b.space])).toEqual([
      [0, 'qkv', 'storage, read'],
      [1, 'O', 'storage, read_write'],
      [2, 'params', 'uniform'],
    ]);
  });

  it('reads the uniform struct and packs values in its order and types', () => {
    const fields = structFields(KERNEL.code, 'Params');
    expect(fields).toEqual([
      { name: 'N', type: 'u32' },
      { name: 'batches', type: 'u32' },
      { name: 'scale', type: 'f32' },
    ]);
    const view = new DataView(packUniforms(fields ?? [], { N: 7, batches: 3, scale: 0.5 }));
    expect([view.getUint32(0, true), view.getUint32(4, true), view.getFloat32(8, true), view.byteLength]).toEqual([7, 3, 0.5, 16]);
  });

  it('names a binding the host does not provide, and one the kernel does not bind', () => {
    expect(() => {
      checkBindings('r', KERNEL, ['qkv', 'O', 'params']);
    }).not.toThrow();
    expect(() => {
      checkBindings('r', KERNEL, ['qkv', 'params']);
    }).toThrow(/test.wgsl binds O, which the host does not provide/);
    expect(() => {
      checkBindings('r', KERNEL, ['qkv', 'O', 'params', 'l']);
    }).toThrow(/the host provides l, which test.wgsl does not bind/);
  });

  it('names a uniform without a value and a value without a field', () => {
    expect(checkUniforms('r', KERNEL, { N: 1, batches: 1, scale: 1 })).toHaveLength(3);
    expect(() => checkUniforms('r', KERNEL, { N: 1, batches: 1 })).toThrow(/no value for scale/);
    expect(() => checkUniforms('r', KERNEL, { N: 1, batches: 1, scale: 1, kv0: 0 })).toThrow(/no field for kv0/);
  });
});
