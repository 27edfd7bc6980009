/** Command-line arguments of the experiments: the shape B,N,d and lists of numbers. */

/** A wrong command line: the CLI prints the message and the experiment's usage, and exits with status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ShapeArg {
  B: number;
  N: number;
  d: number;
}

/** Comma-separated positive integers, exactly `count` of them when given. */
export function positiveIntegers(text: string, what: string, count?: number): number[] {
  const values = text.split(',').map((part) => Number(part.trim()));
  const ok = text.trim() !== '' && values.every((x) => Number.isInteger(x) && x > 0) && (count === undefined || values.length === count);
  if (!ok) throw new UsageError(`${what}: ${text}: ${count === undefined ? '' : `${count} `}positive integers separated by commas`);
  return values;
}

/** Non-negative integers separated by commas (e.g. WG,BC,PREFETCH, where PREFETCH may be 0). */
export function naturals(text: string, what: string, count: number): number[] {
  const values = text.split(',').map((part) => Number(part.trim()));
  if (values.length !== count || !values.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new UsageError(`${what}: ${text}: ${count} non-negative integers separated by commas`);
  }
  return values;
}

/** B,N,d. */
export function parseShape(text: string): ShapeArg {
  const [B, N, d] = positiveIntegers(text, 'shape B,N,d', 3) as [number, number, number];
  return { B, N, d };
}

/** The shape as the tables print it: B×N×d. */
export const shapeLabel = ({ B, N, d }: ShapeArg): string => `${B}×${N}×${d}`;

/** Throws a UsageError when `args` has more than `most` arguments. */
export function atMost(args: readonly string[], most: number): void {
  if (args.length > most) throw new UsageError(`unexpected argument ${args[most] ?? ''}`);
}
