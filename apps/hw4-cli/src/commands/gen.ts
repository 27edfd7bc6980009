/**
 * hw4-cli gen --shape B,N,d [--kind K] [--seed S] [--range R] [--expected FILE] OUTPUT: a deterministic input file,
 * and optionally its float64-oracle output.
 */
import {
  FLOAT32_MAX,
  formatShape,
  generateChunks,
  inputBatchBytes,
  openOutput,
  parseDataKind,
  parseShape,
  validateRange,
  writeHw4Input,
  type GenerateSpec,
} from '@fa/io/node';
import { attentionOracle } from '@fa/reference';
import { expectPositionals, isNonNegativeInteger, numberFlag, parse, stringFlag } from '../args.js';
import { GEN_OPTIONS } from '../command-line.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';
import { reporter } from '../output.js';
import { Progress } from '../progress.js';

export async function genCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('gen', args, GEN_OPTIONS);
  const [outputPath] = expectPositionals('gen', positionals, ['OUTPUT']) as [string];
  const out = reporter(values.quiet === true, false);
  if (outputPath === '-' && stringFlag(values, 'expected') === '-') throw new UsageError('OUTPUT and --expected cannot both be standard output (-)');
  const shapeText = stringFlag(values, 'shape');
  if (shapeText === undefined) throw new UsageError('gen needs --shape B,N,d (for example --shape 4,1024,64)');
  const spec: GenerateSpec = {
    shape: parseShape(shapeText),
    kind: parseDataKind(stringFlag(values, 'kind') ?? 'uniform'),
    seed: numberFlag(values, 'seed', (n) => isNonNegativeInteger(n) && n < 2 ** 32, 'an integer in [0, 2^32)') ?? 1,
  };
  const range = numberFlag(values, 'range', (n) => n > 0 && n <= FLOAT32_MAX, 'a positive number up to 3.4e38 (beyond it float32 values are not finite)');
  if (range !== undefined) spec.range = validateRange(range);
  const { shape } = spec;
  const perChunk = Math.max(1, Math.floor(64 * 2 ** 20 / inputBatchBytes(shape)));
  const progress = Progress.forStderr(shape.B, 'batches', out.quiet, inputBatchBytes(shape));
  let done = 0;
  const chunks = function* (): Generator<Float32Array> {
    for (const chunk of generateChunks(spec, perChunk)) {
      yield chunk;
      done += chunk.length / (inputBatchBytes(shape) / 4);
      progress.update(done);
    }
  };
  await whileOpening(outputPath, () => writeHw4Input(outputPath, shape, chunks()));
  progress.finish();
  out.info(`wrote ${outputPath === '-' ? 'standard output' : outputPath}: ${formatShape(shape)}, ${spec.kind ?? 'uniform'} data, seed ${spec.seed ?? 1}`);
  const expectedPath = stringFlag(values, 'expected');
  if (expectedPath !== undefined) {
    const writer = await whileOpening(expectedPath, () => openOutput(expectedPath));
    try {
      const oracleProgress = Progress.forStderr(shape.B, 'batches (float64 oracle)', out.quiet);
      let b = 0;
      for (const chunk of generateChunks(spec, 1)) {
        await writer.write(Float32Array.from(attentionOracle(chunk, { ...shape, B: 1 })));
        oracleProgress.update(++b);
      }
      oracleProgress.finish();
      await writer.commit();
    } finally {
      await writer.abort();
    }
    out.info(`wrote ${expectedPath}: the float64 oracle's output for it`);
  }
  return EXIT.ok;
}
