/**
 * Command-line parsing on node:util's parseArgs, with mistakes turned into one-line usage errors. On top of
 * parseArgs: a negative number is taken as an option's value (`--tolerance -1`), and an option that takes a value
 * may be given only once (`--impl a --impl b` is an error, not "the last one wins").
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './exit-codes.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** How a command is called in messages: `hw4-cli` for the run command, `hw4-cli gen` for gen. */
export function commandName(command: string): string {
  return command === 'run' ? 'hw4-cli' : `hw4-cli ${command}`;
}

export function parse(
  command: string,
  args: string[],
  options: Options,
): { values: Values; positionals: string[] } {
  const parsed = (() => {
    try {
      return parseArgs({ args: attachNegativeValues(args, options), options, allowPositionals: true, strict: true, tokens: true });
    } catch (error) {
      const message = (error as Error).message.split('.')[0] ?? 'bad arguments';
      throw new UsageError(`${message}; see ${commandName(command)} --help`);
    }
  })();
  refuseRepeats(command, parsed.tokens, options);
  return { values: parsed.values, positionals: parsed.positionals };
}

const NEGATIVE_NUMBER = /^-(\d|\.\d|Infinity$)/;

/**
 * parseArgs refuses a value that starts with a dash ("argument is ambiguous"); a negative number after an option that
 * takes a value is meant as that value, so `--range -5` becomes `--range=-5` (and `-t -1` becomes `--tolerance=-1`).
 */
function attachNegativeValues(args: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const long = optionName(arg, options);
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (long !== undefined && options[long]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${long}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** The long name of `--name` or `-x` (exactly those forms), or undefined. */
function optionName(arg: string, options: Options): string | undefined {
  if (arg.startsWith('--') && !arg.includes('=')) return arg.slice(2) in options ? arg.slice(2) : undefined;
  if (/^-[A-Za-z]$/.test(arg)) return Object.keys(options).find((name) => options[name]?.short === arg.slice(1));
  return undefined;
}

type Token = { kind: string; name?: string; rawName?: string; value?: string | undefined };

function refuseRepeats(command: string, tokens: readonly Token[], options: Options): void {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const option = options[token.name];
    if (option?.type !== 'string' || option.multiple === true) continue;
    const earlier = seen.get(token.name);
    if (earlier !== undefined) {
      throw new UsageError(`--${token.name} is given twice (${earlier}, then ${token.value ?? ''}); give it once, see ${commandName(command)} --help`);
    }
    seen.set(token.name, token.value ?? '');
  }
}

export function stringFlag(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A decimal number written out: digits, an optional sign, fraction and exponent (`12`, `-0.5`, `.25`, `1e-3`). */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The value of a decimal number written out in full, or undefined for anything else: an empty text or blanks (what an
 * unset shell variable gives), hexadecimal, octal or binary (`0x10`), `Infinity`, or a number followed by other text.
 * Number() takes all of these (the empty text as 0); a command line must not.
 */
export function parseDecimal(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** The values of a comma-separated list of decimal numbers, or undefined if any item is not one (or is empty). */
export function parseDecimalList(text: string): number[] | undefined {
  const items = text.split(',').map(parseDecimal);
  return items.every((n): n is number => n !== undefined) ? items : undefined;
}

export function numberFlag(
  values: Values,
  name: string,
  check: (n: number) => boolean = Number.isFinite,
  what = 'a number',
): number | undefined {
  const text = stringFlag(values, name);
  if (text === undefined) return undefined;
  const value = parseDecimal(text);
  if (value === undefined || !check(value)) throw new UsageError(`--${name} ${shown(text)}: expected ${what}${value === undefined ? ', written in decimal' : ''}`);
  return value;
}

/** A flag's value as messages show it: '' for the empty text, which would otherwise vanish from the line. */
export const shown = (text: string): string => (text === '' ? "''" : text);

export const isPositiveInteger = (n: number): boolean => Number.isInteger(n) && n > 0;
export const isNonNegativeInteger = (n: number): boolean => Number.isInteger(n) && n >= 0;

export function expectPositionals(command: string, positionals: string[], names: readonly string[]): string[] {
  if (positionals.length !== names.length) {
    const got = positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ');
    throw new UsageError(`${commandName(command)} needs ${names.join(' and ')} (got ${got}); see ${commandName(command)} --help`);
  }
  return positionals;
}
