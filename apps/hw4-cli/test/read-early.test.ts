/** readEarly: the first chunk is read before anyone iterates, the chunks arrive unchanged, stop() closes the source. */
import { describe, expect, it } from 'vitest';
import { readEarly } from '../src/read-early.js';

/** A source that records when each chunk was read and whether it was closed. */
function source(count: number, log: string[]): AsyncGenerator<number> {
  return (async function* () {
    try {
      for (let k = 0; k < count; k++) {
        log.push(`read ${k}`);
        await Promise.resolve();
        yield k;
      }
    } finally {
      log.push('closed');
    }
  })();
}

/** A source whose first read fails. */
async function* failingSource(): AsyncGenerator<number> {
  await Promise.resolve();
  if (Math.random() >= 0) throw new Error('bad input');
  yield 0;
}

describe('readEarly', () => {
  it('starts reading the first chunk at once and yields every chunk in order', async () => {
    const log: string[] = [];
    const early = readEarly(source(3, log));
    expect(log).toEqual(['read 0']);
    const seen: number[] = [];
    for await (const chunk of early.chunks) seen.push(chunk);
    expect(seen).toEqual([0, 1, 2]);
    expect(log).toEqual(['read 0', 'read 1', 'read 2', 'closed']);
    await early.stop();
    expect(log.filter((line) => line === 'closed')).toHaveLength(1);
  });

  it('closes the source when the chunks are never iterated, and keeps a failed first read from going unhandled', async () => {
    const log: string[] = [];
    const early = readEarly(source(3, log));
    await early.stop();
    expect(log).toEqual(['read 0', 'closed']);
    const failing = readEarly(
failingSource()
    );
    await failing.stop();
    const again = readEarly(
failingSource()
    );
    await expect(again.chunks.next()).rejects.toThrow('bad input');
  });
});
