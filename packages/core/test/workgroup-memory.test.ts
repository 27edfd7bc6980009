import { describe, expect, it } from 'vitest';
import { kernelWorkgroupBytes } from '../src/index.js';

const KERNEL = `
override D: u32;
override BC: u32;
override H: u32 = 2u;
override C: u32 = (D / 4u + H - 1u) / H;  // vec4 columns per invocation
override KS: u32 = BC | 1u;
const BR: u32 = 16u;
const LOWEST: f32 = -3.0e38;
// var<workgroup> Unused: array<f32, 1000>;
var<workgroup> Kj: array<vec4<f32>, BC * H * C>;
var<workgroup> S: array<f32, BR * KS>;
var<workgroup> Ph: array<f16, max(BC, D) + 4u>;
var<workgroup> flag: vec4<u32>;
var<workgroup> weights: array<f32, 3>;
fn f() { const BR = 1u; }
`;

describe('kernelWorkgroupBytes', () => {
  it('sums the declared workgroup variables for the override constants, each padded to 16 bytes', () => {
    // Kj: 16·BC·H·C; S: 4·16·(BC|1) padded; Ph: 2·(max(BC, D) + 4) padded; flag 16; weights 12 → 16.
    const bytes = (D: number, BC: number, H?: number) => kernelWorkgroupBytes(KERNEL, { D, BC, ...(H === undefined ? {} : { H }) });
    const pad = (n: number) => Math.ceil(n / 16) * 16;
    expect(bytes(36, 16)).toBe(16 * 16 * 2 * 5 + pad(4 * 16 * 17) + pad(2 * 40) + 16 + 16);
    expect(bytes(64, 32, 4)).toBe(16 * 32 * 4 * 4 + pad(4 * 16 * 33) + pad(2 * 68) + 16 + 16);
  });

  it('reads module-scope aliases in the types (a kernel\'s f16 variant changes the alias: its tiles are half the size)', () => {
    const kernel = (packed: string) => `
alias Packed = ${packed};
alias Tile = array<Packed, BK>;
override BK: u32;
override N: u32 = 2u;
var<workgroup> Kt: array<Packed, BK * 3u>;
var<workgroup> tiles: array<Tile, N>;
`;
    expect(kernelWorkgroupBytes(kernel('vec4<f32>'), { BK: 8 })).toBe(16 * 24 + 16 * 8 * 2);
    expect(kernelWorkgroupBytes(kernel('vec2<u32>'), { BK: 8 })).toBe(8 * 24 + 8 * 8 * 2);
  });

  it('names an override without a value', () => {
    expect(() => kernelWorkgroupBytes(KERNEL, { D: 64 })).toThrow(/override BC has no value/);
  });
});
