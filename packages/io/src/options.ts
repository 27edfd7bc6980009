/**
 * Checks of the numbers callers pass to the library as options. A bad one is a mistake in the calling code, not bad
 * data: a RangeError whose one line names the option and the values it accepts. (NaN, for one, would otherwise slip
 * through every comparison and come out as a NaN batch count, an empty loop or a test that always passes.)
 */

/** Returns `value` if `valid`, else throws a RangeError saying what `option` accepts. */
export function checkOption(option: string, value: number, valid: boolean, accepted: string): number {
  if (!valid) throw new RangeError(`${option} = ${value}; give ${accepted}`);
  return value;
}

/** An integer of at least 1 (a count of batches, of chunks read ahead). */
export function positiveInteger(option: string, value: number): number {
  return checkOption(option, value, Number.isInteger(value) && value >= 1, 'an integer of at least 1');
}

/** An integer of at least 0. */
export function nonNegativeInteger(option: string, value: number): number {
  return checkOption(option, value, Number.isInteger(value) && value >= 0, 'an integer of at least 0');
}

/** A finite number above 0 (a size in bytes). */
export function positiveNumber(option: string, value: number): number {
  return checkOption(option, value, Number.isFinite(value) && value > 0, 'a finite number above 0');
}

/** A finite number of at least 0 (a tolerance). */
export function nonNegativeNumber(option: string, value: number): number {
  return checkOption(option, value, Number.isFinite(value) && value >= 0, 'a finite number of at least 0');
}
