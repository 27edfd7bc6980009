/**
 * What the GPU tests of the CLI share: the rungs `hw4-cli --list --json` says run here, and why none would. Without a
 * GPU adapter those tests are skipped with the reason in their names; FA_REQUIRE_GPU=1 makes a missing GPU an error.
 */
import { cli } from './cli-helpers.js';

export interface Listed {
  id: string;
  kind: string;
  available: boolean;
  reason?: string;
  reducedPrecision?: string;
  reducedRange?: string;
}

export const listing = JSON.parse(cli(['--list', '--json']).stdout) as { rungs: Listed[]; adapter?: { architecture?: string; isFallbackAdapter?: boolean } };
export const listed = listing.rungs;
export const gpuRungs = listed.filter((r) => r.kind === 'gpu' && r.available);
/** The GPU rungs the automatic choice may pick: float32 operands (the f16 tensor-core rungs run only when named). */
export const fp32Rungs = gpuRungs.filter((r) => r.reducedPrecision === undefined && r.reducedRange === undefined);
/** The check's tolerance for a rung on ±3 data: far inside 5e-3, or, for f16 operands, what f16 rounding allows. */
export const toleranceOf = (id: string): string => (gpuRungs.find((r) => r.id === id)?.reducedPrecision ? '1e-2' : '1e-5');
/** Why no GPU rung runs here, or undefined. */
export const gpuMissing = gpuRungs.length === 0 ? (listed.find((r) => r.kind === 'gpu')?.reason ?? 'no GPU rungs') : undefined;
if (gpuMissing !== undefined && process.env.FA_REQUIRE_GPU === '1') throw new Error(`FA_REQUIRE_GPU=1 but ${gpuMissing}`);
if (gpuMissing !== undefined) console.warn(`GPU CLI tests skipped: ${gpuMissing} (set FA_REQUIRE_GPU=1 to make this a failure)`);
