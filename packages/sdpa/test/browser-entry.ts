/**
 * The awkward cases in a browser: the page this is bundled into runs every case of conformance.ts on the browser's
 * WebGPU adapter (and two of them with f16 tensors), but those of more than MAX_BROWSER_WORK multiply-adds per
 * product, and leaves the results in `window.sdpaResult` for browser.test.ts to read.
 */
import { createGpuContext } from '@fa/core';
import { checkCase, GROUPS, type CaseCheck } from '../src/conformance.js';

/**
 * The largest case the page runs, in multiply-adds of Q Kᵀ: the two at d = 128 with 80 row blocks of 1024 keys (168
 * million, for the matrix kernel's rescale on a GPU that has subgroup matrices) took the page 87 → 122 s on the software
 * GPU. Node's software-GPU tests (attention.test.ts) and `hw4-cli sdpa --conformance` still run them.
 */
const MAX_BROWSER_WORK = 2 ** 25;

export interface CaseResult extends Partial<CaseCheck> {
  name: string;
  dtype: 'f32' | 'f16';
  /** Why the case did not run or failed to run. */
  problem?: string;
}

export interface BrowserResult {
  adapter: string;
  cases: CaseResult[];
}

/** The page's globals this entry uses (the package compiles without the DOM library). */
declare const navigator: { readonly gpu: GPU };
declare const window: { sdpaResult?: BrowserResult };

async function main(): Promise<void> {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) {
    window.sdpaResult = { adapter: 'none', cases: [] };
    return;
  }
  const gpu = await createGpuContext(adapter);
  const cases: CaseResult[] = [];
  const all = GROUPS.flatMap((group) => group.cases).filter(({ dims }) => dims.B * dims.Hq * dims.Lq * dims.Lk * dims.d <= MAX_BROWSER_WORK);
  // Every case with f32 tensors; with f16 tensors, a prefill case and a decode case (each kernel's f16 variant).
  const f16Cases = [all[0], all.find((c) => c.kernel === 'attention-decode' && c.append === undefined)].filter((c) => c !== undefined);
  const runs = [...all.map((c) => ({ c, dtype: 'f32' as const })), ...f16Cases.map((c) => ({ c, dtype: 'f16' as const }))];
  for (const { c, dtype } of runs) {
    try {
      cases.push({ name: c.name, dtype, ...(await checkCase(gpu, c, { dtype })) });
    } catch (error) {
      cases.push({ name: c.name, dtype, problem: error instanceof Error ? error.message : String(error) });
    }
  }
  window.sdpaResult = { adapter: `${gpu.report.vendor} / ${gpu.report.device}`, cases };
}

void main();
