/**
 * Run-time checks of SdpaOptions, for the callers the types do not reach (JavaScript, casts): the options argument is
 * an object, every key is an option, and every value has the option's type; each refusal is one SdpaArgumentError line
 * that names the option, what was given and what to give. What depends on the dimensions (mask shapes, the range of
 * the cache lengths) sdpaProblem checks after these.
 */
import { modsOf } from './mods.js';
import { SdpaArgumentError, type SdpaOptions } from './problem.js';

/** The keys of SdpaOptions, in the order the messages list them. */
export const SDPA_OPTION_KEYS = ['scale', 'causal', 'window', 'mask', 'blockMask', 'layout', 'cacheLengths', 'softcap', 'sinks', 'alibiSlopes', 'scoreMod', 'maskMod', 'modBuffers'] as const satisfies readonly (keyof SdpaOptions)[];

const LAYOUTS: readonly string[] = ['bhsd', 'bshd'];

/** A value as a message shows it: short, one line, with its type where the text alone would hide it. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string': {
      const text = JSON.stringify(value);
      return text.length > 42 ? `${text.slice(0, 40)}…"` : text;
    }
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default:
      break;
  }
  if (Array.isArray(value)) {
    const items = value as unknown[];
    const simple = items.length <= 4 && items.every((x) => x === null || ['number', 'string', 'boolean', 'undefined'].includes(typeof x));
    return simple ? `[${items.map((x) => describeValue(x)).join(', ')}]` : `an array of ${items.length}`;
  }
  if (ArrayBuffer.isView(value)) {
    const length = (value as { length?: unknown }).length;
    return `a ${value.constructor.name}${typeof length === 'number' ? ` of ${length}` : ''}`;
  }
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'an object';
}

/** A key as a message shows it: bare when it reads as a name, quoted otherwise. */
const keyText = (key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key));

/** Edit distance with adjacent transpositions (optimal string alignment), ignoring case. */
function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= s.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(s.length, t.length);
}

/** The known key a mistyped one most likely meant, or undefined when none is close. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (distance <= (candidate.length <= 3 ? 1 : 2) && (best === undefined || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/**
 * Refuses an options argument that is neither undefined nor a plain object, and any own key not in `known`
 * ("unknown option casual; did you mean causal?"). `what` names the argument in messages ('the options of run'), and
 * `noun` what its keys are ('option', 'mask key').
 */
export function checkOptionKeys(options: unknown, known: readonly string[], what = 'the options', noun = 'option'): asserts options is Readonly<Record<string, unknown>> | undefined {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw new SdpaArgumentError(`${what} are ${describeValue(options)}; give an object of options, or leave them out`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestKey(key, known);
    throw new SdpaArgumentError(near === undefined ? `unknown ${noun} ${keyText(key)}; give only ${known.join(', ')}` : `unknown ${noun} ${keyText(key)}; did you mean ${near}?`);
  }
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The element mask: { kind: 'bool', data: Uint8Array, shape } or { kind: 'additive', data: Float32Array, shape }. */
function checkMask(mask: unknown): void {
  const give = "give { kind: 'bool', data: Uint8Array, shape } or { kind: 'additive', data: Float32Array, shape }";
  if (!isObject(mask)) throw new SdpaArgumentError(`mask is ${describeValue(mask)}; ${give}`);
  checkOptionKeys(mask, ['kind', 'data', 'shape'], 'the mask', 'mask key');
  const { kind, data, shape } = mask;
  if (kind !== 'bool' && kind !== 'additive') throw new SdpaArgumentError(`mask kind ${describeValue(kind)} is unknown; give 'bool' or 'additive'`);
  if (kind === 'bool' && !(data instanceof Uint8Array)) {
    throw new SdpaArgumentError(`a bool mask's data is ${describeValue(data)}; give a Uint8Array of 0 (excluded) and 1 (kept), or kind 'additive' for float values`);
  }
  if (kind === 'additive' && !(data instanceof Float32Array)) {
    throw new SdpaArgumentError(`an additive mask's data is ${describeValue(data)}; give a Float32Array of values added to the scores, or kind 'bool' for a Uint8Array`);
  }
  if (!Array.isArray(shape)) throw new SdpaArgumentError(`mask shape is ${describeValue(shape)}; give an array of at most 4 sizes that broadcasts to [B, Hq, Lq, Lk]`);
}

/** The block mask: { rows, keys, data: Uint8Array, shape }. */
function checkBlockMask(blockMask: unknown): void {
  if (!isObject(blockMask)) throw new SdpaArgumentError(`blockMask is ${describeValue(blockMask)}; give { rows, keys, data: Uint8Array, shape }`);
  checkOptionKeys(blockMask, ['rows', 'keys', 'data', 'shape'], 'the block mask', 'block mask key');
  const { rows, keys, data, shape } = blockMask;
  for (const [name, value] of [['rows', rows], ['keys', keys]] as const) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new SdpaArgumentError(`blockMask.${name} is ${describeValue(value)}; give a positive integer, the ${name === 'rows' ? 'query rows' : 'keys'} of a block`);
  }
  if (!(data instanceof Uint8Array)) throw new SdpaArgumentError(`blockMask data is ${describeValue(data)}; give a Uint8Array, 1 for a block computed and 0 for one skipped`);
  if (!Array.isArray(shape)) throw new SdpaArgumentError(`blockMask shape is ${describeValue(shape)}; give an array of at most 4 sizes that broadcasts to [B, Hq, ⌈Lq/rows⌉, ⌈Lk/keys⌉]`);
}

/**
 * Checks SdpaOptions at run time: an object (or undefined) whose keys are SdpaOptions' and `otherKeys` (the wider
 * options types that extend it check their own values), each value of its type. Throws SdpaArgumentError.
 */
export function checkSdpaOptions(options: unknown, otherKeys: readonly string[] = []): asserts options is SdpaOptions | undefined {
  checkOptionKeys(options, [...SDPA_OPTION_KEYS, ...otherKeys]);
  if (options === undefined) return;
  const { scale, causal, window, mask, blockMask, layout, cacheLengths, softcap, sinks, alibiSlopes, scoreMod, maskMod, modBuffers } = options;
  modsOf(scoreMod, maskMod, modBuffers);
  if (scale !== undefined && (typeof scale !== 'number' || !Number.isFinite(scale))) throw new SdpaArgumentError(`scale is ${describeValue(scale)}; give a finite number, or leave it out for 1/√d`);
  if (causal !== undefined && typeof causal !== 'boolean') throw new SdpaArgumentError(`causal is ${describeValue(causal)}; give true or false`);
  if (window !== undefined && (!Array.isArray(window) || window.length !== 2 || !(window as unknown[]).every((w) => typeof w === 'number' && Number.isSafeInteger(w) && w >= -1))) {
    throw new SdpaArgumentError(`window ${describeValue(window)} is not two integers ≥ −1; give [left, right], −1 for unbounded`);
  }
  if (mask !== undefined) checkMask(mask);
  if (blockMask !== undefined) checkBlockMask(blockMask);
  if (layout !== undefined && (typeof layout !== 'string' || !LAYOUTS.includes(layout))) throw new SdpaArgumentError(`layout is ${describeValue(layout)}; give 'bhsd' ([B, H, L, d]) or 'bshd' ([B, L, H, d])`);
  if (cacheLengths !== undefined && (typeof cacheLengths !== 'object' || cacheLengths === null || typeof (cacheLengths as { length?: unknown }).length !== 'number')) {
    throw new SdpaArgumentError(`cacheLengths is ${describeValue(cacheLengths)}; give B integers from 0 to Lk, the valid keys of each batch`);
  }
  if (softcap !== undefined && (typeof softcap !== 'number' || !Number.isFinite(softcap) || softcap <= 0)) {
    throw new SdpaArgumentError(`softcap is ${describeValue(softcap)}; give a positive finite number c (scores become c·tanh(s/c)), or leave it out`);
  }
  if (sinks !== undefined && !(sinks instanceof Float32Array)) throw new SdpaArgumentError(`sinks is ${describeValue(sinks)}; give a Float32Array of Hq sink logits, one per query head`);
  if (alibiSlopes !== undefined && !(alibiSlopes instanceof Float32Array)) throw new SdpaArgumentError(`alibiSlopes is ${describeValue(alibiSlopes)}; give a Float32Array of Hq ALiBi slopes, one per query head`);
}

/** Refuses dimensions that are not an object (`names` lists the sizes it must hold; their values the caller checks). */
export function checkDimsObject(dims: unknown, names: readonly string[]): void {
  if (typeof dims !== 'object' || dims === null || Array.isArray(dims)) throw new SdpaArgumentError(`the dimensions are ${describeValue(dims)}; give an object { ${names.join(', ')} } of positive integers`);
}

/** The SdpaOptions of a wider options object (PrepareOptions, AttentionOptions): its SdpaOptions keys that are set. */
export function sdpaOptionsOf(options: SdpaOptions): SdpaOptions {
  const picked: Record<string, unknown> = {};
  for (const key of SDPA_OPTION_KEYS) {
    if (options[key] !== undefined) picked[key] = options[key];
  }
  return picked;
}
