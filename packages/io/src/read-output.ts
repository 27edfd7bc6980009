/**
 * Reading hw4 output files (B·N·d float32, no header), whose shape comes from the matching input.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { Hw4FormatError } from './errors.js';
import { ioError } from './io-error.js';
import { readFloats } from './read-floats.js';
import { formatShape, outputBatchBytes, outputFileBytes, type Shape } from './shape.js';

export class Hw4Output {
  private constructor(
    readonly name: string,
    readonly shape: Shape,
    private readonly handle: FileHandle,
  ) {}

  /** Opens `path` and checks that its size is exactly B·N·d·4 bytes for `shape`. */
  static async open(path: string, shape: Shape, name = path): Promise<Hw4Output> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      throw ioError(error, `output ${name}`);
    }
    const { size } = await handle.stat();
    const expected = outputFileBytes(shape);
    if (size !== expected) {
      await handle.close();
      throw new Hw4FormatError(
        `${name}: output file is ${size} bytes but ${formatShape(shape)} needs ${expected} (B·N·d float32); is it the output for this input?`,
      );
    }
    return new Hw4Output(name, shape, handle);
  }

  /** O of batches [firstBatch, firstBatch + batches). */
  read(firstBatch: number, batches: number): Promise<Float32Array> {
    const batchBytes = outputBatchBytes(this.shape);
    return readFloats(this.handle, firstBatch * batchBytes, batches * batchBytes, this.name);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
