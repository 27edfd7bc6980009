/**
 * Just enough reflection of a WGSL kernel for the host to check a rung's descriptor against it: the names of the
 * resources bound in group 0 and the fields of the uniform struct. A mismatch is a bug in the rung, found when the
 * rung is prepared (and by the ladder's tests), not a silent wrong binding.
 */

export interface KernelBinding {
  binding: number;
  name: string;
  /** 'uniform', 'storage, read', 'storage, read_write', ... */
  space: string;
  /** The declared type, e.g. `array<f32>` or `Params`. */
  type: string;
}

export type UniformScalar = 'u32' | 'i32' | 'f32';

export interface UniformField {
  name: string;
  type: UniformScalar;
}

/** The removal of comments keeps commented-out declarations from counting. */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/** Every `@group(0) @binding(n) var<space> name: type;` of the kernel, in binding order. */
export function kernelBindings(code: string): KernelBinding[] {
  const pattern = /@group\(\s*0\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var\s*<\s*([^>]+)>\s*(\w+)\s*:\s*([^;]+);/g;
  const found: KernelBinding[] = [];
  for (const match of stripComments(code).matchAll(pattern)) {
    const [, binding, space, name, type] = match as unknown as [string, string, string, string, string];
    found.push({ binding: Number(binding), name, space: space.replace(/\s+/g, ' ').trim(), type: type.trim() });
  }
  return found.sort((a, b) => a.binding - b.binding);
}

/** The names of the kernel's compute entry points (`@compute ... fn name`), in source order. */
export function computeEntryPoints(code: string): string[] {
  return [...stripComments(code).matchAll(/@compute\b[^{]*?\bfn\s+(\w+)/g)].map((match) => match[1] as string);
}

/** The scalar fields of `struct <name> { ... }`, in declaration order; undefined when the struct is absent. */
export function structFields(code: string, name: string): UniformField[] | undefined {
  const body = new RegExp(`struct\\s+${name}\\s*\\{([^}]*)\\}`).exec(stripComments(code))?.[1];
  if (body === undefined) return undefined;
  return body
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const [field, type] = part.split(':').map((s) => s.trim()) as [string, string | undefined];
      if (type !== 'u32' && type !== 'i32' && type !== 'f32') {
        throw new Error(`struct ${name}: field ${field} has type ${type ?? '?'}; only u32, i32 and f32 uniforms are supported`);
      }
      return { name: field, type };
    });
}

/** Packs `values` in the order and types of `fields` (4 bytes each, padded to 16 bytes). */
export function packUniforms(fields: readonly UniformField[], values: Readonly<Record<string, number>>): ArrayBuffer {
  const data = new ArrayBuffer(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16));
  const view = new DataView(data);
  fields.forEach(({ name, type }, k) => {
    const value = values[name];
    if (value === undefined) throw new Error(`uniform ${name} has no value`);
    if (type === 'f32') view.setFloat32(4 * k, value, true);
    else if (type === 'i32') view.setInt32(4 * k, value, true);
    else view.setUint32(4 * k, value, true);
  });
  return data;
}
