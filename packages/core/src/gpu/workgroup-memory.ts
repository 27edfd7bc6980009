/**
 * The workgroup memory of a WGSL kernel, read from its own declarations: every `var<workgroup>` at module scope, its
 * array lengths evaluated for the plan's override constants (and the kernel's `override` defaults and `const`s they
 * refer to). Each variable is padded to a multiple of 16 bytes, as Dawn counts them against
 * maxComputeWorkgroupStorageSize. The rungs size their tiles with this instead of a formula per kernel.
 */

/** The removal of comments keeps commented-out declarations from counting. */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

interface Declarations {
  /** The expression of each module-scope `override` (with a default) and `const`, by name. */
  expressions: Map<string, string>;
  /** The type of each `var<workgroup>`, with module-scope `alias` names replaced by what they stand for. */
  workgroupTypes: string[];
}

/** `type` with each name of `aliases` replaced by its type, as often as aliases of aliases need. */
function withoutAliases(type: string, aliases: ReadonlyMap<string, string>): string {
  let result = type;
  for (let round = 0; round <= aliases.size; round++) {
    const next = result.replace(/\b\w+\b/g, (name) => aliases.get(name) ?? name);
    if (next === result) return result;
    result = next;
  }
  throw new Error(`workgroup variable of type ${type}: its aliases refer to each other`);
}

const parsed = new Map<string, Declarations>();

function declarationsOf(code: string): Declarations {
  let found = parsed.get(code);
  if (found) return found;
  let text = stripComments(code);
  // Module scope only: the bodies of functions and structs go, with any `const` declared inside them.
  while (/\{[^{}]*\}/.test(text)) text = text.replace(/\{[^{}]*\}/g, ' ');
  const expressions = new Map<string, string>();
  for (const [, name, expression] of text.matchAll(/\b(?:override|const)\s+(\w+)\s*(?::[^=;]*)?=\s*([^;]+);/g)) {
    expressions.set(name as string, (expression as string).trim());
  }
  const aliases = new Map<string, string>();
  for (const [, name, type] of text.matchAll(/\balias\s+(\w+)\s*=\s*([^;]+);/g)) aliases.set(name as string, (type as string).trim());
  const workgroupTypes = [...text.matchAll(/\bvar\s*<\s*workgroup\s*>\s*\w+\s*:\s*([^;]+);/g)].map((match) => withoutAliases((match[1] as string).trim(), aliases));
  found = { expressions, workgroupTypes };
  parsed.set(code, found);
  return found;
}

/** Integer evaluation of an override expression: literals, names, + - * / % |, parentheses, min() and max(). */
function evaluate(expression: string, valueOf: (name: string) => number): number {
  const tokens = expression.match(/0x[0-9a-f]+|\d+|\w+|[-+*/%|(),]/gi) ?? [];
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const take = (): string => {
    const token = tokens[at++];
    if (token === undefined) throw new Error(`unexpected end of \`${expression}\``);
    return token;
  };
  const primary = (): number => {
    const token = take();
    if (token === '(') {
      const value = bitwise();
      take();
      return value;
    }
    if (token === '-') return -primary();
    if (/^(0x[0-9a-f]+|\d+)$/i.test(token)) {
      if (peek() === 'u' || peek() === 'i') take();
      return Number(token);
    }
    if ((token === 'min' || token === 'max') && peek() === '(') {
      take();
      const args = [bitwise()];
      while (take() === ',') args.push(bitwise());
      return token === 'min' ? Math.min(...args) : Math.max(...args);
    }
    if (/^\w+$/.test(token)) return valueOf(token);
    throw new Error(`cannot evaluate \`${expression}\` at ${token}`);
  };
  const product = (): number => {
    let value = primary();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = take();
      const right = primary();
      value = op === '*' ? value * right : op === '/' ? Math.trunc(value / right) : value % right;
    }
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (peek() === '+' || peek() === '-') value = take() === '+' ? value + product() : value - product();
    return value;
  };
  const bitwise = (): number => {
    let value = sum();
    while (peek() === '|') {
      take();
      value = (value | sum()) >>> 0;
    }
    return value;
  };
  return bitwise();
}

const SCALAR_BYTES: Readonly<Record<string, number>> = { f32: 4, u32: 4, i32: 4, f16: 2, 'atomic<u32>': 4, 'atomic<i32>': 4 };
/** The component types of the vector shorthands vec4f, vec4u, vec4i, vec4h. */
const SHORTHAND: Readonly<Record<string, string>> = { f: 'f32', u: 'u32', i: 'i32', h: 'f16' };

/** Size and alignment of a scalar or vector type (no spaces). */
function scalarOrVector(type: string): { size: number; align: number } | undefined {
  const scalar = SCALAR_BYTES[type];
  if (scalar !== undefined) return { size: scalar, align: scalar };
  const vector = /^vec([234])<(\w+)>$/.exec(type) ?? /^vec([234])([fuih])$/.exec(type);
  if (!vector) return undefined;
  const [, count, name] = vector as unknown as [string, string, string];
  const component = SCALAR_BYTES[SHORTHAND[name] ?? name];
  if (component === undefined) return undefined;
  const n = Number(count);
  return { size: n * component, align: (n === 3 ? 4 : n) * component };
}

/** Bytes of a workgroup variable of `type` (arrays of scalars, vectors and arrays). */
function bytesOfType(type: string, valueOf: (name: string) => number): { size: number; align: number } {
  const simple = scalarOrVector(type.replace(/\s+/g, ''));
  if (simple) return simple;
  const array = /^array\s*<([\s\S]+)>$/.exec(type);
  if (array) {
    const inner = array[1] as string;
    let depth = 0;
    let comma = -1;
    for (let k = 0; k < inner.length; k++) {
      if (inner[k] === '<' || inner[k] === '(') depth++;
      else if (inner[k] === '>' || inner[k] === ')') depth--;
      else if (inner[k] === ',' && depth === 0) comma = k;
    }
    if (comma >= 0) {
      const element = bytesOfType(inner.slice(0, comma).trim(), valueOf);
      const stride = Math.ceil(element.size / element.align) * element.align;
      return { size: stride * evaluate(inner.slice(comma + 1), valueOf), align: element.align };
    }
  }
  throw new Error(`workgroup variable of type ${type}: its size is not known`);
}

/** Bytes of workgroup memory the kernel `code` declares, with `constants` for its overrides. */
export function kernelWorkgroupBytes(code: string, constants: Readonly<Record<string, number>>): number {
  const { expressions, workgroupTypes } = declarationsOf(code);
  const values = new Map<string, number>();
  const valueOf = (name: string): number => {
    const given = constants[name] ?? values.get(name);
    if (given !== undefined) return given;
    const expression = expressions.get(name);
    if (expression === undefined) throw new Error(`override ${name} has no value`);
    const value = evaluate(expression, valueOf);
    values.set(name, value);
    return value;
  };
  return workgroupTypes.reduce((sum, type) => sum + Math.ceil(bytesOfType(type, valueOf).size / 16) * 16, 0);
}
