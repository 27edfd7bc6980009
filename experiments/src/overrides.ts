/**
 * The override constants a WGSL kernel declares (`override NAME: type;` or `override NAME: type = value;`), so that
 * every variant of an experiment can be checked to set only constants the kernel has: a variant is a kernel and a set
 * of override values, never an edit of the kernel's text.
 */

/** The removal of comments keeps commented-out declarations from counting. */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/** The names of the kernel's `override` declarations, in source order. */
export function declaredOverrides(code: string): string[] {
  return [...stripComments(code).matchAll(/(?:^|[\s;])override\s+(\w+)\s*:/g)].map((match) => match[1] as string);
}

/** The names in `constants` that the kernel does not declare as overrides (empty when all are declared). */
export function undeclaredOverrides(code: string, constants: Readonly<Record<string, number | boolean>>): string[] {
  const declared = new Set(declaredOverrides(code));
  return Object.keys(constants).filter((name) => !declared.has(name));
}

/** Throws when `constants` sets a name the kernel does not declare as an override. */
export function assertDeclaredOverrides(label: string, code: string, constants: Readonly<Record<string, number | boolean>>): void {
  const missing = undeclaredOverrides(code, constants);
  if (missing.length > 0) throw new Error(`${label}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not an override of the kernel`);
}

/** WebGPU takes override values as numbers: a bool override as 0 or 1. */
export function pipelineConstants(constants: Readonly<Record<string, number | boolean>>): Record<string, number> {
  return Object.fromEntries(Object.entries(constants).map(([name, value]) => [name, Number(value)]));
}
