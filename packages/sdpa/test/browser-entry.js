/**
 * The awkward cases in a browser: the page this is bundled into runs every case of conformance.ts on the browser's
 * WebGPU adapter (and two of them with f16 tensors) and leaves the results in `window.sdpaResult` for browser.test.ts
 * to read.
 */
import { createGpuContext } from '@fa/core';
import { checkCase, GROUPS } from '../src/conformance.js';
async function main() {
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) {
        window.sdpaResult = { adapter: 'none', cases: [] };
        return;
    }
    const gpu = await createGpuContext(adapter);
    const cases = [];
    const all = GROUPS.flatMap((group) => group.cases);
    // Every case with f32 tensors; with f16 tensors, a prefill case and a decode case (each kernel's f16 variant).
    const f16Cases = [all[0], all.find((c) => c.kernel === 'attention-decode' && c.append === undefined)].filter((c) => c !== undefined);
    const runs = [...all.map((c) => ({ c, dtype: 'f32' })), ...f16Cases.map((c) => ({ c, dtype: 'f16' }))];
    for (const { c, dtype } of runs) {
        try {
            cases.push({ name: c.name, dtype, ...(await checkCase(gpu, c, { dtype })) });
        }
        catch (error) {
            cases.push({ name: c.name, dtype, problem: error instanceof Error ? error.message : String(error) });
        }
    }
    window.sdpaResult = { adapter: `${gpu.report.vendor} / ${gpu.report.device}`, cases };
}
void main();
//# sourceMappingURL=browser-entry.js.map