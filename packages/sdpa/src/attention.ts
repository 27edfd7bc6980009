/**
 * attention(q, k, v, options): scaled-dot-product attention on typed arrays, with PyTorch's semantics and
 * FlashAttention-2's alignment (@fa/core's sdpa/problem.ts). On a GPU it runs the kernel that fits the problem (f16
 * tensors stay f16 in memory); without one, or for a problem the kernel declines, the
 * plain float32 CPU computation of @fa/reference, and says why in `note`.
 */
import { sdpaProblem, SdpaArgumentError, type GpuContext, type SdpaDims, type SdpaLayout, type SdpaOptions } from '@fa/core';
import { sdpaFloat32 } from '@fa/reference';
import { floatsToHalves, halvesToFloats } from './f16.js';
import { gpuUnsupportedReason, prepareAttention, type GpuKernelId } from './prepare.js';

/** A tensor: float32 values, or f16 values as their bits (dtype 'f16'), and its shape of four dimensions. */
export interface SdpaTensor {
  readonly data: Float32Array | Uint16Array;
  readonly shape: readonly number[];
}

export interface AttentionOptions extends SdpaOptions {
  /** The GPU to run on (@fa/core/node's `acquireNodeGpu`, or `gpuContextFromDevice` in a browser); without it, the CPU. */
  readonly gpu?: GpuContext;
  /** Also return each row's log-sum-exp, [B, Hq, Lq]. */
  readonly returnLse?: boolean;
  /** The GPU kernel (`PrepareOptions.kernel`); by default the one that fits the problem. */
  readonly kernel?: GpuKernelId;
}

export interface AttentionResult {
  /** Shaped and typed as q. */
  readonly out: SdpaTensor;
  readonly lse?: Float32Array;
  /** What computed it: a GPU kernel ('attention-fp32', 'attention-matrix', 'attention-decode') or 'cpu-fp32'. */
  readonly impl: string;
  /** Why the GPU kernel did not run it, when a GPU was given. */
  readonly note?: string;
}

/** The dimensions q, k and v describe in `layout`; a one-line SdpaArgumentError when they disagree. */
export function dimsOf(q: SdpaTensor, k: SdpaTensor, v: SdpaTensor, layout: SdpaLayout = 'bhsd'): SdpaDims {
  for (const [name, t] of [['q', q], ['k', k], ['v', v]] as const) {
    if (t.shape.length !== 4) throw new SdpaArgumentError(`${name} has ${t.shape.length} dimensions; give 4 (${layout === 'bhsd' ? 'B, H, L, d' : 'B, L, H, d'})`);
    const size = t.shape.reduce((a, n) => a * n, 1);
    if (t.data.length !== size) throw new SdpaArgumentError(`${name} holds ${t.data.length} values but its shape [${t.shape.join(', ')}] needs ${size}`);
  }
  const [B, a, b, d] = q.shape as [number, number, number, number];
  const [kB, ka, kb, kd] = k.shape as [number, number, number, number];
  const [Hq, Lq] = layout === 'bhsd' ? [a, b] : [b, a];
  const [Hkv, Lk] = layout === 'bhsd' ? [ka, kb] : [kb, ka];
  if (kB !== B) throw new SdpaArgumentError(`q has batch ${B} but k has ${kB}; give the same batch`);
  if (kd !== d) throw new SdpaArgumentError(`q has head size ${d} but k has ${kd}; give the same head size`);
  if (v.shape.join() !== k.shape.join()) throw new SdpaArgumentError(`v has shape [${v.shape.join(', ')}] but k has [${k.shape.join(', ')}]; give v the shape of k`);
  if (q.data.constructor !== k.data.constructor || q.data.constructor !== v.data.constructor) {
    throw new SdpaArgumentError('q, k and v have different types; give all three as Float32Array, or all three as f16 bits in a Uint16Array');
  }
  return { B, Hq, Hkv, Lq, Lk, d };
}

const asFloats = (data: Float32Array | Uint16Array): Float32Array => (data instanceof Uint16Array ? halvesToFloats(data) : data);

export async function attention(q: SdpaTensor, k: SdpaTensor, v: SdpaTensor, options: AttentionOptions = {}): Promise<AttentionResult> {
  const dims = dimsOf(q, k, v, options.layout);
  const problem = sdpaProblem(dims, options);
  const f16 = q.data instanceof Uint16Array;
  const withLse = options.returnLse === true;
  let note: string | undefined;
  if (options.gpu !== undefined) {
    const prepare = { ...options, lse: withLse, dtype: f16 ? ('f16' as const) : ('f32' as const) };
    const why = gpuUnsupportedReason(options.gpu, dims, prepare);
    if (why === undefined) {
      const prepared = await prepareAttention(options.gpu, dims, prepare);
      try {
        const { out, lse } = await prepared.run(q.data, k.data, v.data);
        return { out: { data: out, shape: [...q.shape] }, ...(lse ? { lse } : {}), impl: prepared.impl };
      } finally {
        prepared.destroy();
      }
    }
    note = `the GPU kernel cannot run this problem here (${why}); computed on the CPU`;
  }
  const { out, lse } = sdpaFloat32(problem, asFloats(q.data), asFloats(k.data), asFloats(v.data));
  return { out: { data: f16 ? floatsToHalves(out) : out, shape: [...q.shape] }, ...(withLse ? { lse } : {}), impl: 'cpu-fp32', ...(note ? { note } : {}) };
}
