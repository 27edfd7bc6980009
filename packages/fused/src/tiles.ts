/**
 * Tile sizes of the fused rungs and the workgroup memory they take. Rung 5 uses fixed 16 × 16 tiles; rungs 6 and 7
 * take the largest square tiles (Br = Bc) that fit the adapter's maxComputeWorkgroupStorageSize: 49152 bytes on an
 * H100, 32 KiB on Mesa's lavapipe, 16 KiB as WebGPU's default.
 */

export interface Tiles {
  /** Query rows per tile. */
  BR: number;
  /** Key/value rows per tile. */
  BC: number;
}

/** Threads per workgroup of every fused kernel; one thread per row computes the row statistics, so Br ≤ WG. */
export const FUSED_WG = 128;

export const FIXED_TILES: Tiles = { BR: 16, BC: 16 };

/** Workgroup bytes of f32 arrays of these lengths: each variable is padded to a multiple of 16 bytes (Dawn). */
export function workgroupBytes(...lengths: number[]): number {
  return lengths.reduce((sum, n) => sum + Math.ceil((4 * n) / 16) * 16, 0);
}

/** fused.wgsl: K_j, V_j (Bc × d each), Q_i (Br × d), S (Br × Bc), two weights per row. */
export function fusedStorageBytes(d: number, { BR, BC }: Tiles): number {
  return workgroupBytes(BC * d, BC * d, BR * d, BR * BC, BR, BR);
}

/** fused-split-q.wgsl: as fused, plus O_i (Br × d) and m_i, ℓ_i on chip. */
export function splitQStorageBytes(d: number, { BR, BC }: Tiles): number {
  return workgroupBytes(BC * d, BC * d, BR * d, BR * BC, BR * d, BR, BR, BR, BR);
}

/**
 * The largest square tiles (up to FUSED_WG rows) whose workgroup memory fits `limit`, balanced over N: with at most
 * T rows per tile N needs ⌈N/T⌉ tiles, and ⌈N/⌈N/T⌉⌉ rows per tile gives the same count with no near-empty last tile
 * (N = 128 with T = 63 would run three tiles of 63, the last holding 2 rows; balanced, three of 43).
 */
export function largestTiles(limit: number, d: number, N: number, bytesOf: (d: number, tiles: Tiles) => number): Tiles | undefined {
  for (let T = FUSED_WG; T >= 1; T--) {
    if (bytesOf(d, { BR: T, BC: T }) <= limit) {
      const balanced = Math.ceil(N / Math.ceil(N / T));
      return { BR: balanced, BC: balanced };
    }
  }
  return undefined;
}
