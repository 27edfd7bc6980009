/**
 * What the page's address asks for: `?shape=B,N,d&kind=uniform&impl=id[,id]&seed=1&autorun=1` (or `&scaling=1`). Bad values become
 * messages shown on the page, never exceptions.
 */
import { DATA_KINDS, parseDataKind, parseShape, type DataKind, type Shape } from '@fa/io';

export const DEFAULT_SHAPE: Shape = { B: 2, N: 256, d: 64 };

export interface PageParams {
  shape: Shape;
  kind: DataKind;
  seed: number;
  /** Rung ids to run; empty means the whole ladder. */
  impl: string[];
  autorun: boolean;
  /** `scaling=1`: run the scaling view's sweep (of `impl`'s first rung, or lean-loop) instead of the ladder. */
  scaling: boolean;
  /** Problems with the address, each one line. */
  problems: string[];
}

export function readParams(search: string): PageParams {
  const query = new URLSearchParams(search);
  const problems: string[] = [];
  const attempt = <T>(text: string | null, parse: (t: string) => T, fallback: T): T => {
    if (text === null || text === '') return fallback;
    try {
      return parse(text);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      return fallback;
    }
  };
  const seed = Number(query.get('seed') ?? '1');
  if (!Number.isInteger(seed) || seed < 0) problems.push(`seed must be a non-negative integer (got ${query.get('seed') ?? ''})`);
  return {
    shape: attempt(query.get('shape'), parseShape, DEFAULT_SHAPE),
    kind: attempt(query.get('kind'), parseDataKind, DATA_KINDS[0]),
    seed: Number.isInteger(seed) && seed >= 0 ? seed : 1,
    impl: (query.get('impl') ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    autorun: ['1', 'true', 'yes'].includes(query.get('autorun') ?? ''),
    scaling: ['1', 'true', 'yes'].includes(query.get('scaling') ?? ''),
    problems,
  };
}
