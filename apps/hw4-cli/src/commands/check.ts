/**
 * hw4-cli check INPUT OUTPUT [--expected FILE] [--tolerance T] [--json]: compares an output with the float64
 * oracle computed from the input (or with a reference output file), batch by batch.
 */
import { Comparator, DEFAULT_TOLERANCE, formatComparison, formatShape, Hw4Input, Hw4Output } from '@fa/io';
import { attentionOracle } from '@fa/reference';
import { expectPositionals, numberFlag, parse, stringFlag } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { reporter } from '../output.js';
import { Progress } from '../progress.js';

export const CHECK_OPTIONS = {
  expected: { type: 'string', short: 'e' },
  tolerance: { type: 'string', short: 't' },
  'allow-non-finite': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export async function checkCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('check', args, CHECK_OPTIONS);
  const [inputPath, outputPath] = expectPositionals('check', positionals, ['INPUT', 'OUTPUT']) as [string, string];
  const out = reporter(values.quiet === true, values.json === true);
  const tolerance = numberFlag(values, 'tolerance', (n) => Number.isFinite(n) && n >= 0, 'a non-negative number') ?? DEFAULT_TOLERANCE;
  const expectedPath = stringFlag(values, 'expected');
  const input = await Hw4Input.open(inputPath);
  const { shape } = input;
  const actual = await Hw4Output.open(outputPath, shape).catch(async (error: unknown) => {
    await input.close();
    throw error;
  });
  const expected = expectedPath === undefined ? undefined : await Hw4Output.open(expectedPath, shape).catch(async (error: unknown) => {
    await Promise.all([input.close(), actual.close()]);
    throw error;
  });
  try {
    const comparator = new Comparator(shape, { tolerance });
    const progress = Progress.forStderr(shape.B, 'batches', out.quiet);
    const batchesPerChunk = expected ? input.batchesPerChunk() : 1;
    for await (const chunk of input.chunks({ batchesPerChunk, allowNonFinite: values['allow-non-finite'] === true })) {
      const got = await actual.read(chunk.firstBatch, chunk.batches);
      const want = expected
        ? await expected.read(chunk.firstBatch, chunk.batches)
        : attentionOracle(chunk.data, { ...shape, B: chunk.batches });
      comparator.add(got, want);
      progress.update(chunk.firstBatch + chunk.batches);
    }
    progress.finish();
    const result = comparator.result();
    if (out.json) out.result({ input: inputPath, output: outputPath, against: expectedPath ?? 'float64 oracle', shape, ...result });
    out.info(`${outputPath} against ${expectedPath ?? 'the float64 oracle'} on ${formatShape(shape)}:`);
    out.info(formatComparison(result));
    return result.pass ? EXIT.ok : EXIT.mismatch;
  } finally {
    await Promise.all([input.close(), actual.close(), expected?.close()]);
  }
}
