/**
 * hw4-cli check INPUT OUTPUT [--expected FILE | --rows N] [--tolerance T] [--json]: compares an output with the
 * float64 oracle computed from the input (every row, or N sampled rows per batch for large inputs), or with a
 * reference output file, batch by batch.
 */
import { stat } from 'node:fs/promises';
import {
  Comparator,
  DEFAULT_TOLERANCE,
  formatComparison,
  formatShape,
  hasNonFinite,
  Hw4Input,
  Hw4IoError,
  Hw4Output,
  maskNonFiniteOutput,
  matrixFloats,
  STDIO_PATH,
  zeroNonFinite,
  type BatchStats,
  type Shape,
} from '@fa/io/node';
import { attentionOracle, attentionOracleRows, sampleRows } from '@fa/reference';
import { expectPositionals, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { CHECK_OPTIONS } from '../command-line.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';
import { reporter } from '../output.js';
import { Progress } from '../progress.js';

export async function checkCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('check', args, CHECK_OPTIONS);
  const [inputPath, outputPath] = expectPositionals('check', positionals, ['INPUT', 'OUTPUT']) as [string, string];
  const out = reporter(values.quiet === true, values.json === true);
  const allowNonFinite = values['allow-non-finite'] === true;
  for (const [what, path] of [['OUTPUT', outputPath], ['--expected', stringFlag(values, 'expected')]] as const) {
    if (path === STDIO_PATH) throw new UsageError(`check reads ${what} by batch; give a file, not - (only INPUT may be standard input)`);
  }
  const tolerance = numberFlag(values, 'tolerance', (n) => Number.isFinite(n) && n >= 0, 'a non-negative number') ?? DEFAULT_TOLERANCE;
  const expectedPath = stringFlag(values, 'expected');
  const sampled = numberFlag(values, 'rows', isPositiveInteger, 'a positive number of rows per batch');
  if (sampled !== undefined && expectedPath !== undefined) throw new UsageError('--rows checks against the oracle; it cannot be combined with --expected');
  const input = await whileOpening(inputPath, () => Hw4Input.open(inputPath));
  const { shape } = input;
  const actual = await openToCompare(outputPath, shape, 'OUTPUT').catch(async (error: unknown) => {
    await input.close();
    throw error;
  });
  const expected = expectedPath === undefined ? undefined : await openToCompare(expectedPath, shape, '--expected').catch(async (error: unknown) => {
    await Promise.all([input.close(), actual.close()]);
    throw error;
  });
  try {
    // With --allow-non-finite, NaN/Inf in the input make the rows of O that depend on them NaN (as hw4-cli writes
    // them); the oracle computes the rest from the input with those values zeroed.
    const comparator = new Comparator(shape, { tolerance, nonFiniteMatches: allowNonFinite });
    const progress = Progress.forStderr(shape.B, 'batches', out.quiet);
    const batchesPerChunk = expected ? input.batchesPerChunk() : 1;
    for await (const chunk of input.chunks({ batchesPerChunk, allowNonFinite, stats: allowNonFinite })) {
      const got = await actual.read(chunk.firstBatch, chunk.batches);
      const stats: readonly BatchStats[] = chunk.stats ?? [];
      const masked = hasNonFinite(stats);
      if (masked) zeroNonFinite(chunk.data);
      if (sampled !== undefined) {
        // Only `sampled` rows of the batch, spread over the sequence: 4·N·d flops each instead of 4·N²·d per batch.
        const one = { ...shape, B: 1 };
        const rows = sampleRows(one, Math.min(sampled, shape.N));
        const wantAll = masked ? new Float32Array(matrixFloats(shape)) : undefined;
        attentionOracleRows(chunk.data, one, rows).forEach((want, k) => {
          const row = rows[k]?.row ?? 0;
          let expectedRow: ArrayLike<number> = want;
          if (wantAll) {
            wantAll.fill(0).set(want, row * shape.d);
            maskNonFiniteOutput(wantAll, stats, shape);
            expectedRow = wantAll.subarray(row * shape.d, (row + 1) * shape.d);
          }
          comparator.addRow(chunk.firstBatch, row, got.subarray(row * shape.d, (row + 1) * shape.d), expectedRow);
        });
      } else {
        const want = expected
          ? await expected.read(chunk.firstBatch, chunk.batches)
          : attentionOracle(chunk.data, { ...shape, B: chunk.batches });
        if (masked && !expected) maskNonFiniteOutput(want, stats, shape);
        comparator.add(got, want);
      }
      progress.update(chunk.firstBatch + chunk.batches);
    }
    progress.finish();
    const result = comparator.result();
    if (out.json) out.result({ input: inputPath, output: outputPath, against: expectedPath ?? 'float64 oracle', shape, ...result });
    const against = expectedPath ?? (sampled === undefined ? 'the float64 oracle' : `the float64 oracle on ${Math.min(sampled, shape.N)} sampled rows per batch`);
    out.info(`${outputPath} against ${against} on ${formatShape(shape)}:`);
    out.info(formatComparison(result));
    return result.pass ? EXIT.ok : EXIT.mismatch;
  } finally {
    await Promise.all([input.close(), actual.close(), expected?.close()]);
  }
}

/** Opens an output file to compare, refusing a folder (which opens for reading too, and would be taken for a short file). */
async function openToCompare(path: string, shape: Shape, what: string): Promise<Hw4Output> {
  if ((await stat(path).catch(() => undefined))?.isDirectory() === true) {
    throw new Hw4IoError(`${what} ${path}: is a folder; give the path of an hw4 output file`);
  }
  return whileOpening(path, () => Hw4Output.open(path, shape));
}
