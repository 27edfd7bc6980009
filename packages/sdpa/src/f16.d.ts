/** IEEE half-precision numbers as their 16 bits in a Uint16Array (Node 20 has no Float16Array), to and from float32. */
/** The float32 value of half-precision bits. */
export declare function halfToFloat(bits: number): number;
/** The half-precision bits nearest to x (ties to even; beyond 65504 rounds to ±Infinity as IEEE does). */
export declare function floatToHalf(x: number): number;
export declare function halvesToFloats(bits: Uint16Array): Float32Array;
export declare function floatsToHalves(values: Float32Array): Uint16Array;
