/**
 * SdpaOptions checked at run time (src/sdpa/validate-options.ts, through sdpaProblem): what a JavaScript caller or a
 * cast can pass that the types would refuse is refused in one SdpaArgumentError line naming the option, what was given
 * and what to give, and a mistyped option name is refused with the name meant.
 */
import { describe, expect, it } from 'vitest';
import { closestKey, describeValue, SdpaArgumentError, sdpaOptionsOf, sdpaProblem, type SdpaDims, type SdpaOptions } from '../src/index.js';

const DIMS: SdpaDims = { B: 1, Hq: 2, Hkv: 1, Lq: 3, Lk: 4, d: 8 };

/** The SdpaArgumentError message sdpaProblem throws for these options (the test fails if it throws none, or another). */
function refusal(options: unknown, dims: unknown = DIMS): string {
  try {
    sdpaProblem(dims as SdpaDims, options as SdpaOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(SdpaArgumentError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('sdpaProblem accepted the options');
}

const bool = (data: unknown): unknown => ({ mask: { kind: 'bool', data, shape: [4] } });
const additive = (data: unknown): unknown => ({ mask: { kind: 'additive', data, shape: [4] } });

describe('sdpaProblem refuses each option of the wrong type, in one line', () => {
  it.for([
    ['causal "yes"', { causal: 'yes' }, /^causal is "yes"; give true or false$/],
    ['causal 1', { causal: 1 }, /^causal is 1; give true or false$/],
    ['scale NaN', { scale: Number.NaN }, /^scale is NaN; give a finite number, or leave it out for 1\/√d$/],
    ['scale Infinity', { scale: Number.POSITIVE_INFINITY }, /^scale is Infinity; give a finite number/],
    ['scale "0.5"', { scale: '0.5' }, /^scale is "0\.5"; give a finite number/],
    ['scale null', { scale: null }, /^scale is null; give a finite number/],
    ['window of one value', { window: [3] }, /^window \[3\] is not two integers ≥ −1; give \[left, right\], −1 for unbounded$/],
    ['window of three values', { window: [1, 2, 3] }, /^window \[1, 2, 3\] is not two integers ≥ −1/],
    ['window of strings', { window: ['1', '2'] }, /^window \["1", "2"\] is not two integers ≥ −1/],
    ['window a number', { window: 5 }, /^window 5 is not two integers ≥ −1/],
    ['window below −1', { window: [-2, 0] }, /^window \[-2, 0\] is not two integers ≥ −1/],
    ['layout unknown', { layout: 'bhds' }, /^layout is "bhds"; give 'bhsd' \(\[B, H, L, d\]\) or 'bshd' \(\[B, L, H, d\]\)$/],
    ['layout not a string', { layout: 1 }, /^layout is 1; give 'bhsd'/],
    ['a bool mask of Float32Array data', bool(new Float32Array(4)), /^a bool mask's data is a Float32Array of 4; give a Uint8Array of 0 \(excluded\) and 1 \(kept\), or kind 'additive' for float values$/],
    ['an additive mask of Uint8Array data', additive(new Uint8Array(4)), /^an additive mask's data is a Uint8Array of 4; give a Float32Array of values added to the scores/],
    ['an additive mask of a plain array', additive([0, 0, 0, 0]), /^an additive mask's data is \[0, 0, 0, 0\]; give a Float32Array/],
    ['a mask of an unknown kind', { mask: { kind: 'float', data: new Float32Array(4), shape: [4] } }, /^mask kind "float" is unknown; give 'bool' or 'additive'$/],
    ['a mask that is not an object', { mask: true }, /^mask is true; give \{ kind: 'bool', data: Uint8Array, shape \}/],
    ['a mask without a shape', { mask: { kind: 'bool', data: new Uint8Array(4) } }, /^mask shape is undefined; give an array of at most 4 sizes/],
    ['a mask key mistyped', { mask: { kind: 'bool', data: new Uint8Array(4), shap: [4] } }, /^unknown mask key shap; did you mean shape\?$/],
    ['block mask rows 0', { blockMask: { rows: 0, keys: 2, data: new Uint8Array(4), shape: [2, 2] } }, /^blockMask\.rows is 0; give a positive integer, the query rows of a block$/],
    ['block mask keys "2"', { blockMask: { rows: 2, keys: '2', data: new Uint8Array(4), shape: [2, 2] } }, /^blockMask\.keys is "2"; give a positive integer/],
    ['block mask of Float32Array data', { blockMask: { rows: 2, keys: 2, data: new Float32Array(4), shape: [2, 2] } }, /^blockMask data is a Float32Array of 4; give a Uint8Array/],
    ['cache lengths a number', { cacheLengths: 4 }, /^cacheLengths is 4; give B integers from 0 to Lk, the valid keys of each batch$/],
    ['cache length 0xFFFFFFFF', { cacheLengths: [0xffffffff] }, /^cacheLengths\[0\] is 4294967295; give an integer from 0 to Lk = 4$/],
    ['cache length −1 in a Int32Array', { cacheLengths: Int32Array.of(-1) }, /^cacheLengths\[0\] is -1; give an integer from 0 to Lk = 4$/],
    ['cache length 1.5', { cacheLengths: [1.5] }, /^cacheLengths\[0\] is 1\.5; give an integer from 0 to Lk = 4$/],
  ] as const)('%s', ([, options, message]) => {
    expect(refusal(options)).toMatch(message);
  });
});

describe('sdpaProblem refuses unknown option names, with the one meant', () => {
  it('casual for causal, Scale for scale, windows for window', () => {
    expect(refusal({ casual: true })).toBe('unknown option casual; did you mean causal?');
    expect(refusal({ Scale: 0.5 })).toBe('unknown option Scale; did you mean scale?');
    expect(refusal({ windows: [1, 0] })).toBe('unknown option windows; did you mean window?');
    expect(refusal({ cacheLength: [1] })).toBe('unknown option cacheLength; did you mean cacheLengths?');
    expect(refusal({ sink: Float32Array.of(0) })).toBe('unknown option sink; did you mean sinks?');
    expect(refusal({ alibiSlope: Float32Array.of(0) })).toBe('unknown option alibiSlope; did you mean alibiSlopes?');
    expect(refusal({ softCap: 30 })).toBe('unknown option softCap; did you mean softcap?');
  });

  it('lists the options where no name is close', () => {
    expect(refusal({ dropout: 0.1 })).toBe('unknown option dropout; give only scale, causal, window, mask, blockMask, layout, cacheLengths, softcap, sinks, alibiSlopes, scoreMod, maskMod, modBuffers');
    expect(refusal({ 'is causal': true })).toMatch(/^unknown option "is causal"; /);
  });

  it('options and dimensions that are not objects', () => {
    expect(refusal(null)).toBe('the options are null; give an object of options, or leave them out');
    expect(refusal([true])).toMatch(/^the options are \[true\]; give an object of options/);
    expect(refusal('causal')).toMatch(/^the options are "causal"; give an object/);
    expect(refusal({}, null)).toBe('the dimensions are null; give an object { B, Hq, Hkv, Lq, Lk, d } of positive integers');
  });
});

describe('sdpaProblem takes every option of the right type', () => {
  it('as before: explicit undefined is the default, typed arrays hold the cache lengths', () => {
    const options: SdpaOptions = {
      scale: -0.5,
      causal: false,
      window: [-1, 2],
      layout: 'bshd',
      mask: { kind: 'bool', data: new Uint8Array(4).fill(1), shape: [4] },
      blockMask: { rows: 2, keys: 2, data: new Uint8Array(4).fill(1), shape: [2, 2] },
      cacheLengths: Uint32Array.of(3),
    };
    const problem = sdpaProblem(DIMS, options);
    expect(problem).toMatchObject({ layout: 'bshd', scale: -0.5, left: Number.POSITIVE_INFINITY, right: 2, cacheLengths: [3] });
    expect(sdpaProblem(DIMS, { causal: undefined, scale: undefined, layout: undefined }).scale).toBe(1 / Math.sqrt(8));
  });

  it('sdpaOptionsOf keeps the SdpaOptions of a wider object, and only those set', () => {
    expect(sdpaOptionsOf({ causal: true, scale: undefined, lse: true, gpu: {} } as SdpaOptions)).toEqual({ causal: true });
  });

  it('closestKey and describeValue', () => {
    expect(closestKey('kernal', ['kernel', 'lse'])).toBe('kernel');
    expect(closestKey('gpu', ['lse'])).toBeUndefined();
    expect(describeValue(new Float64Array(3))).toBe('a Float64Array of 3');
    expect(describeValue('x'.repeat(100))).toMatch(/^"x{39}…"$/);
    expect(describeValue(10n)).toBe('10n');
    expect(describeValue(new Map())).toBe('a Map');
  });
});
