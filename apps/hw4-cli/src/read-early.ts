/**
 * Reading that starts before its consumer is ready: `readEarly` pulls the first chunk of a chunk generator at once,
 * which starts its read (and the reads ahead of it, and their statistics), and hands back a generator of the same
 * chunks for the consumer to iterate later. hw4-cli runs the GPU's start (adapter, device, pipelines) meanwhile, so the
 * first chunks are on the host when the kernels are ready instead of after.
 */

export interface EarlyChunks<T> {
  /** The chunks, the first of them already being read; iterate once. */
  readonly chunks: AsyncGenerator<T>;
  /**
   * Ends the reading when the chunks will not be iterated to the end (setup failed): waits for the reads in flight
   * and closes the source, as leaving a `for await` loop would. Safe to call more than once and after the end.
   */
  stop(): Promise<void>;
}

export function readEarly<T>(source: AsyncGenerator<T>): EarlyChunks<T> {
  const first = source.next();
  // Handled when the consumer reaches the first chunk (or by stop()): an error before then is not unhandled.
  first.catch(() => undefined);
  async function* chunks(): AsyncGenerator<T> {
    try {
      const head = await first;
      if (head.done === true) return;
      yield head.value;
      yield* source;
    } finally {
      await source.return(undefined);
    }
  }
  return {
    chunks: chunks(),
    stop: async () => {
      await first.catch(() => undefined);
      await source.return(undefined);
    },
  };
}
