/**
 * A GPU rung encoded into the caller's own command encoder on the caller's buffers (`prepareEncoded`): the output in
 * the caller's O buffer matches the float64 oracle, several encodes share one submit, and what cannot encode says so.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { prepareEncoded, type Rung } from '@fa/core';
import { compareOutputs, generateInput, type Shape } from '@fa/io';
import { attentionOracle } from '@fa/reference';
import { findRung } from '../src/index.js';
import { conformanceEnv } from './gpu-env.js';

const { env, release } = await conformanceEnv();
afterAll(() => {
  release();
});

async function readBack(device: GPUDevice, buffer: GPUBuffer, bytes: number): Promise<Float32Array> {
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const data = new Float32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return data;
}

describe.skipIf(!env.gpu)(`a rung in the caller’s command encoder${env.gpu ? '' : ` (skipped: ${env.gpuUnavailableReason ?? 'no GPU'})`}`, () => {
  it.each(['naive', 'fused-split-q', 'prefetch', 'row-split'])('%s writes O into the caller’s buffer, two halves in one submit', async (id) => {
    const gpu = env.gpu;
    if (!gpu) throw new Error('no GPU');
    const { device } = gpu;
    const shape: Shape = { B: 4, N: 77, d: 32 };
    const input = generateInput({ shape, seed: 5 });
    const qkvBytes = input.byteLength;
    const oBytes = (qkvBytes / 3) | 0;
    const half = qkvBytes / 2;
    // The caller's buffers: two batches each, as an application would keep its own data on the GPU.
    const qkv = [0, 1].map(() => device.createBuffer({ size: half, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }));
    const O = [0, 1].map(() => device.createBuffer({ size: oBytes / 2, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC }));
    qkv.forEach((buffer, k) => {
      device.queue.writeBuffer(buffer, 0, input, (k * input.length) / 2, input.length / 2);
    });

    const encoded = await prepareEncoded(findRung(id) as Rung, env, shape, 2);
    expect(encoded.maxBatches).toBe(2);
    const encoder = device.createCommandEncoder();
    encoded.encode(encoder, { qkv: qkv[0] as GPUBuffer, O: O[0] as GPUBuffer }, 2);
    encoded.encode(encoder, { qkv: qkv[1] as GPUBuffer, O: O[1] as GPUBuffer }, 2);
    device.queue.submit([encoder.finish()]);
    const parts = await Promise.all(O.map((buffer) => readBack(device, buffer, oBytes / 2)));
    const output = new Float32Array(oBytes / 4);
    output.set(parts[0] as Float32Array, 0);
    output.set(parts[1] as Float32Array, output.length / 2);

    const comparison = compareOutputs(output, attentionOracle(input, shape), shape);
    expect(comparison.maxAbsError).toBeLessThan(1e-5);
    expect(() => {
      encoded.encode(device.createCommandEncoder(), { qkv: qkv[0] as GPUBuffer, O: O[0] as GPUBuffer }, 3);
    }).toThrow(/3 batches .* in one encode; give 1 to 2/);
    encoded.destroy();
    for (const buffer of [...qkv, ...O]) buffer.destroy();
  });

  it('a CPU rung cannot encode GPU work, and says so', async () => {
    await expect(prepareEncoded(findRung('seq-attention') as Rung, env, { B: 1, N: 8, d: 4 })).rejects.toThrow(/seq-attention: not a GPU rung that can encode/);
  });
});
