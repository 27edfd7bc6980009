import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeHeader, Hw4FormatError, parseHeader, parseShape } from '../src/index.js';

const header = (B: number, N: number, d: number): Uint8Array => {
  const bytes = new Uint8Array(12);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, B, true);
  view.setInt32(4, N, true);
  view.setInt32(8, d, true);
  return bytes;
};

const oneLineError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Hw4FormatError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected an error');
};

describe('parseHeader', () => {
  const dim = fc.integer({ min: 1, max: 64 });

  it('accepts exactly 12 + 12·B·N·d bytes and round-trips through encodeHeader', () => {
    fc.assert(
      fc.property(dim, dim, dim, (B, N, d) => {
        expect(parseHeader(encodeHeader({ B, N, d }), 12 + 12 * B * N * d)).toEqual({ B, N, d });
      }),
    );
  });

  it('rejects files shorter than the header, whatever they hold', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 11 }), (bytes) => {
        expect(oneLineError(() => parseHeader(bytes, bytes.length))).toMatch(/shorter than the 12-byte header/);
      }),
    );
  });

  it('rejects B, N or d that is zero or negative, naming it', () => {
    const bad = fc.integer({ min: -(2 ** 31), max: 0 });
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 2), bad, dim, (which, value, other) => {
        const dims = [other, other, other];
        dims[which] = value;
        const message = oneLineError(() => parseHeader(header(dims[0]!, dims[1]!, dims[2]!), 1000));
        expect(message).toContain(`${['B', 'N', 'd'][which]!} must be positive`);
      }),
    );
  });

  it('rejects truncated files and trailing bytes, saying both sizes', () => {
    fc.assert(
      fc.property(dim, dim, dim, fc.integer({ min: 1, max: 1000 }), fc.boolean(), (B, N, d, delta, longer) => {
        const expected = 12 + 12 * B * N * d;
        const actual = longer ? expected + delta : Math.max(12, expected - delta);
        if (actual === expected) return;
        const message = oneLineError(() => parseHeader(header(B, N, d), actual));
        expect(message).toMatch(longer ? /trailing bytes/ : /truncated/);
        expect(message).toContain(String(expected));
        expect(message).toContain(String(actual));
      }),
    );
  });

  it('fails at once on a small file that claims an enormous shape (no allocation)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (B, N, d) => {
          fc.pre(B * N * d > 1000);
          expect(oneLineError(() => parseHeader(header(B, N, d), 1024))).toMatch(/truncated/);
        },
      ),
    );
    expect(oneLineError(() => parseHeader(header(2 ** 30, 128, 32), 1024))).toMatch(/needs 52776558133260 bytes but the file has 1024/);
  });

  it('rejects a single batch too large to hold, even when the size matches', () => {
    const N = 2 ** 16;
    const d = 2 ** 14;
    expect(oneLineError(() => parseHeader(header(1, N, d), 12 + 12 * N * d))).toMatch(/per batch is supported/);
  });
});

describe('parseShape', () => {
  it('reads B,N,d and BxNxd', () => {
    expect(parseShape('4,1024,64')).toEqual({ B: 4, N: 1024, d: 64 });
    expect(parseShape('2x77x80')).toEqual({ B: 2, N: 77, d: 80 });
  });
  it('rejects anything else with the expected form', () => {
    expect(oneLineError(() => parseShape('4,1024'))).toMatch(/B,N,d/);
    expect(oneLineError(() => parseShape('4,-1,3'))).toMatch(/B,N,d/);
    expect(oneLineError(() => parseShape('0,1,3'))).toMatch(/positive/);
  });
});
