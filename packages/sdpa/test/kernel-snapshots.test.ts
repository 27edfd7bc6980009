/**
 * The WGSL each product kernel variant hands to the compiler, with the override constants its plan sets, as files under
 * test/__snapshots__/kernels/: a review diff shows the shader that compiles, and a change to a resolved kernel fails
 * here until the snapshot is updated (`npx vitest run packages/sdpa/test/kernel-snapshots.test.ts -u`).
 *
 * The plans are made for an H100-like adapter (48 KiB of workgroup memory, subgroups of 32, f16 subgroup matrices),
 * described without a GPU, so the snapshots are the same on every machine.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, type SdpaDims, type SdpaOptions } from '@fa/core';
import { APPEND_CACHE_KERNEL } from '../src/cache/append-cache.js';
import { decodeKernelSource, decodePlan } from '../src/decode/attention-decode.js';
import { fp32Plan } from '../src/fp32/attention-fp32.js';
import { type TensorType } from '../src/kernel-support.js';
import { matrixPlan } from '../src/matrix/attention-matrix.js';
import { H100_LIKE } from './h100-like.js';

const PREFILL: SdpaDims = { B: 1, Hq: 8, Hkv: 2, Lq: 1024, Lk: 1024, d: 64 };
const DECODE: SdpaDims = { B: 1, Hq: 32, Hkv: 8, Lq: 1, Lk: 32768, d: 128 };
const CAUSAL: SdpaOptions = { causal: true };

/** The text a variant compiles: its override constants for each plan (one per head size), then its module. */
function resolved(plans: readonly { readonly summary: string; readonly constants: Readonly<Record<string, number>> }[], code: string): string {
  const lines = plans.flatMap(({ summary, constants }) => [`// ${summary}; override constants:`, ...Object.entries(constants).map(([name, value]) => `//   ${name} = ${value}`)]);
  return [...lines, '', code].join('\n');
}

const planned = <T>(plan: T | string): T => {
  if (typeof plan === 'string') throw new Error(`the plan declined: ${plan}`);
  return plan;
};

const snapshot = (name: string): string => `__snapshots__/kernels/${name}.wgsl`;

describe('resolved product kernels (the WGSL that compiles)', () => {
  for (const dtype of ['f32', 'f16'] as TensorType[]) {
    // One module per tensor type; the head size changes only the override constants.
    it(`attention-fp32, ${dtype} tensors, d = 64 and 128`, async () => {
      const plans = [64, 128].map((d) => planned(fp32Plan(sdpaProblem({ ...PREFILL, d }, CAUSAL), H100_LIKE, true, dtype)));
      await expect(resolved(plans, plans[0]!.kernel.code)).toMatchFileSnapshot(snapshot(`attention-fp32-${dtype}`));
    });
    // f32 tensors take high and low f16 parts (PARTS = 2), f16 tensors one part. f16 tensors at d = 64 without score
    // terms read Q_i round by round on a full grid (B = 8 here: 1024 row blocks, at least the 640 the key splits aim
    // for), at d = 128 (and on shorter grids) ahead of the rounds: a module each.
    const matrixModules = dtype === 'f32' ? [{ sizes: [64, 128], B: 1, name: 'attention-matrix-f32' }] : [{ sizes: [64], B: 8, name: 'attention-matrix-f16' }, { sizes: [128], B: 1, name: 'attention-matrix-f16-d128' }];
    for (const { sizes, B, name } of matrixModules) {
      it(`attention-matrix, ${dtype} tensors (${dtype === 'f32' ? 'two parts' : 'one part'}), d = ${sizes.join(' and ')}${B > 1 ? `, B = ${B}` : ''}`, async () => {
        const plans = sizes.map((d) => planned(matrixPlan(sdpaProblem({ ...PREFILL, B, d }, CAUSAL), H100_LIKE, true, dtype)));
        expect(new Set(plans.map((plan) => plan.kernel.code)).size).toBe(1);
        await expect(resolved(plans, plans[0]!.kernel.code)).toMatchFileSnapshot(snapshot(name));
      });
    }
    if (dtype === 'f16') {
      // Above d = 128 (f16 tensors only) the register arrays hold 16 fragments across d: a module of its own.
      it('attention-matrix, f16 tensors, d = 256 (the wide-head variant)', async () => {
        const plan = planned(matrixPlan(sdpaProblem({ ...PREFILL, d: 256 }, CAUSAL), H100_LIKE, true, dtype));
        await expect(resolved([plan], plan.kernel.code)).toMatchFileSnapshot(snapshot('attention-matrix-f16-d256'));
      });
    }
    it(`attention-decode, ${dtype} tensors`, async () => {
      const plan = planned(decodePlan(sdpaProblem(DECODE), H100_LIKE, false, dtype));
      await expect(resolved([plan], decodeKernelSource(plan).code)).toMatchFileSnapshot(snapshot(`attention-decode-${dtype}`));
    });
  }
  it('append-cache', async () => {
    await expect(resolved([{ summary: 'the cache append (WG set by its host)', constants: {} }], APPEND_CACHE_KERNEL.code)).toMatchFileSnapshot(snapshot('append-cache'));
  });
});
