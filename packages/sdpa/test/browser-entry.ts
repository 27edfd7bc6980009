/**
 * The awkward cases in a browser: the page this is bundled into runs every case of cases.ts on the browser's WebGPU
 * adapter and leaves the results in `window.sdpaResult` for browser.test.ts to read.
 */
import { createGpuContext } from '@fa/core';
import { checkCase, GROUPS, type CaseCheck } from '../src/conformance.js';

export interface CaseResult extends Partial<CaseCheck> {
  name: string;
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
  for (const c of GROUPS.flatMap((group) => group.cases)) {
    try {
      cases.push({ name: c.name, ...(await checkCase(gpu, c)) });
    } catch (error) {
      cases.push({ name: c.name, problem: error instanceof Error ? error.message : String(error) });
    }
  }
  window.sdpaResult = { adapter: `${gpu.report.vendor} / ${gpu.report.device}`, cases };
}

void main();
