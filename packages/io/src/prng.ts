/**
 * A small, seeded, portable PRNG: xoshiro128** seeded through splitmix32. Only 32-bit integer arithmetic
 * (Math.imul, shifts), so every machine produces the same stream for the same seed.
 */

/** splitmix32 step: a good 32-bit hash, used to seed and to derive per-batch seeds. */
export function mix32(value: number): number {
  let z = (value + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Xoshiro128 {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    this.s0 = mix32(seed);
    this.s1 = mix32(this.s0);
    this.s2 = mix32(this.s1);
    this.s3 = mix32(this.s2);
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1), 24-bit resolution (exact in float32). */
  nextUnit(): number {
    return (this.nextUint32() >>> 8) * 2 ** -24;
  }

  /** Uniform in [lo, hi). */
  nextRange(lo: number, hi: number): number {
    return lo + (hi - lo) * this.nextUnit();
  }

  /** Uniform integer in [0, n). */
  nextInt(n: number): number {
    return Math.floor(this.nextUnit() * n);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
