/** IEEE half-precision numbers as their 16 bits in a Uint16Array (Node 20 has no Float16Array), to and from float32. */
const view = new DataView(new ArrayBuffer(4));
/** The float32 value of half-precision bits. */
export function halfToFloat(bits) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0)
        return sign * fraction * 2 ** -24;
    if (exponent === 0x1f)
        return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}
/** The half-precision bits nearest to x (ties to even; beyond 65504 rounds to ±Infinity as IEEE does). */
export function floatToHalf(x) {
    view.setFloat32(0, x);
    const f = view.getUint32(0);
    const sign = (f >>> 16) & 0x8000;
    const exponent = (f >>> 23) & 0xff;
    let mantissa = f & 0x7fffff;
    if (exponent === 0xff)
        return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
    let e = exponent - 127 + 15;
    if (e >= 0x1f)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        mantissa |= 0x800000;
        const shift = 14 - e;
        const half = mantissa >>> shift;
        const rest = mantissa & ((1 << shift) - 1);
        const midpoint = 1 << (shift - 1);
        return sign | (rest > midpoint || (rest === midpoint && (half & 1) === 1) ? half + 1 : half);
    }
    const rest = mantissa & 0x1fff;
    mantissa >>>= 13;
    if (rest > 0x1000 || (rest === 0x1000 && (mantissa & 1) === 1)) {
        mantissa += 1;
        if (mantissa === 0x400) {
            mantissa = 0;
            e += 1;
            if (e >= 0x1f)
                return sign | 0x7c00;
        }
    }
    return sign | (e << 10) | mantissa;
}
// Loops rather than TypedArray.from(source, map), which collects its source into a list first: a billion values would
// not fit the JavaScript heap.
export function halvesToFloats(bits) {
    const out = new Float32Array(bits.length);
    for (let e = 0; e < bits.length; e++)
        out[e] = halfToFloat(bits[e]);
    return out;
}
export function floatsToHalves(values) {
    const out = new Uint16Array(values.length);
    for (let e = 0; e < values.length; e++)
        out[e] = floatToHalf(values[e]);
    return out;
}
//# sourceMappingURL=f16.js.map