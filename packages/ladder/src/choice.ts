/**
 * The automatic choice: which rung hw4-cli runs when none is named. It comes from measurements, not from a rung's
 * place on the ladder: `choice-table.ts` (generated from the bench's JSON by scripts/choice-table.mjs) ranks the
 * rungs that passed the bench's check, per adapter and shape class, fastest first.
 */
import { canRun, type RunEnv, type Rung } from '@fa/core';
import { formatShape, type Shape } from '@fa/io';
import { CHOICE_TABLE } from './choice-table.js';

/** What the rung must offer beyond running the shape: `fullRange`, no f16 operands (`reducedRange` unset). */
export interface ChoiceNeeds {
  fullRange?: boolean;
}

/** One shape class of one adapter: rungs fastest first, with the measurement behind the first. */
export interface ClassRanking {
  shapeClass: string;
  /** Rung ids, fastest first (relative time summed over the class's measured shapes). */
  ranking: readonly string[];
  /** The measurement that decided, for messages: e.g. `2×32768×64: prefetch 22.6 ms, register-tiles 26.1 ms`. */
  evidence: string;
}

export interface AdapterChoices {
  vendor: string;
  device: string;
  /** The bench file and date the ranking comes from. */
  source: string;
  classes: readonly ClassRanking[];
  /** Over every measured shape, for shape classes the bench did not measure. */
  overall: ClassRanking;
}

export interface Choice {
  rung: Rung;
  /** One line: why this rung. */
  reason: string;
}

const bucket = (value: number, bounds: readonly number[], name: string): string => {
  const bound = bounds.find((b) => value <= b);
  return bound === undefined ? `${name} > ${bounds[bounds.length - 1] ?? 0}` : `${name} ≤ ${bound}`;
};

/** The shape class a measurement stands for: sequence length and head size buckets (B does not change the choice). */
export function shapeClass({ N, d }: Shape): string {
  return `${bucket(N, [256, 4096], 'N')}, ${bucket(d, [32, 64, 128], 'd')}`;
}

/**
 * The rung to run `shape` here, and why. On a software GPU (a fallback adapter such as Mesa's lavapipe) GPU rungs run
 * on the same CPU cores, slower than the `cpu` rung, so only CPU rungs are considered. With a bench table for this
 * adapter, its fastest measured rung for the shape's class (or over all shapes) that can run the shape; without one,
 * the product's kernel (@fa/sdpa, `product`) where it can run the shape, else the highest rung on the ladder that can and
 * has float32's range. Rungs of reduced precision (`reducedPrecision`: f16 operands that may miss
 * the 5e-3 contract) are never chosen. Rungs of reduced range only (`reducedRange`: fp32-grade, but operands stored as
 * f16, which overflow past 65504) are chosen where the bench ranks them first, unless `needs.fullRange`: hw4-cli asks
 * for that rung too, for the chunks whose values may leave f16's range. A GPU rung without a rounding model (no proven
 * float32 error bound, docs/error-bound.md) is never chosen.
 */
export function chooseRung(
  shape: Shape,
  env: RunEnv,
  ladder: readonly Rung[],
  table: readonly AdapterChoices[] = CHOICE_TABLE,
  needs: ChoiceNeeds = {},
): Choice {
  // A GPU rung must declare how it rounds, so that hw4-cli can prove its error bound (CPU rungs do, or use float64).
  const proven = (rung: Rung): boolean => rung.kind === 'cpu' || rung.rounding?.(shape, env) !== undefined;
  const automatic = (rung: Rung): boolean =>
    rung.reducedPrecision === undefined && (needs.fullRange !== true || rung.reducedRange === undefined) && proven(rung);
  const runnable = (rung: Rung): boolean => automatic(rung) && canRun(rung, shape, env) === true;
  const report = env.gpu?.report;
  if (!report || report.isFallbackAdapter) {
    const best = [...ladder].reverse().find((r) => r.kind === 'cpu' && runnable(r));
    if (!best) throw new Error(`no rung can run ${formatShape(shape)} here`);
    const why = report ? 'the GPU is a software adapter, slower than the CPU rungs' : 'no GPU';
    return { rung: best, reason: `${why}: the highest CPU rung` };
  }
  const adapter = table.find((a) => a.vendor === report.vendor && a.device === report.device);
  if (adapter) {
    const cls = shapeClass(shape);
    const measured = adapter.classes.find((c) => c.shapeClass === cls);
    for (const ranking of measured ? [measured, adapter.overall] : [adapter.overall]) {
      const id = ranking.ranking.find((candidate) => {
        const rung = ladder.find((r) => r.id === candidate);
        return rung !== undefined && runnable(rung);
      });
      const rung = ladder.find((r) => r.id === id);
      if (rung) {
        const scope = ranking === measured ? `for ${cls}` : `over every measured shape (none measured for ${cls})`;
        return { rung, reason: `fastest correct rung on this adapter ${scope} in ${adapter.source}: ${ranking.evidence}` };
      }
    }
  }
  // Without measurements: the product's kernel, else the highest rung without f16's range (only the bench can show a
  // rung of f16 range is worth the fallback it needs).
  const product = ladder.find((r) => r.product === true && runnable(r) && r.reducedRange === undefined);
  if (product) return { rung: product, reason: "no bench table for this adapter: the product's kernel" };
  const best = [...ladder].reverse().find((r) => r.product !== true && runnable(r) && r.reducedRange === undefined);
  if (!best) throw new Error(`no rung can run ${formatShape(shape)} here`);
  return { rung: best, reason: 'no bench table for this adapter: the highest rung on the ladder of full range that can run the shape' };
}
