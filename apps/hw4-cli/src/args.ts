/**
 * Command-line parsing on node:util's parseArgs, with mistakes turned into one-line usage errors.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './exit-codes.js';

type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export function parse(
  command: string,
  args: string[],
  options: Options,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values, positionals };
  } catch (error) {
    const message = (error as Error).message.split('.')[0] ?? 'bad arguments';
    throw new UsageError(`${message}; see hw4-cli ${command === 'run' ? '' : `${command} `}--help`.replace('  ', ' '));
  }
}

export function stringFlag(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function numberFlag(
  values: Values,
  name: string,
  check: (n: number) => boolean = Number.isFinite,
  what = 'a number',
): number | undefined {
  const text = stringFlag(values, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !check(value)) throw new UsageError(`--${name} ${text}: expected ${what}`);
  return value;
}

export const isPositiveInteger = (n: number): boolean => Number.isInteger(n) && n > 0;
export const isNonNegativeInteger = (n: number): boolean => Number.isInteger(n) && n >= 0;

export function expectPositionals(command: string, positionals: string[], names: readonly string[]): string[] {
  if (positionals.length !== names.length) {
    const got = positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ');
    throw new UsageError(
      `${command === 'run' ? 'hw4-cli' : `hw4-cli ${command}`} needs ${names.join(' and ')} (got ${got}); see --help`,
    );
  }
  return positionals;
}
