/**
 * Compiling WGSL into compute pipelines, with compile errors reported as one line (first error, with its line).
 *
 * Each device keeps the pipelines it compiled, by kernel, entry point, override constants and layout: preparing a rung
 * again for a shape whose plan has the same constants (another B or N of the same plan class, a second runner) takes
 * the compiled pipeline instead of compiling it again. Dawn does not do this across pipelines that have been released,
 * and a software GPU (Mesa's lavapipe) compiles each new pipeline at its first dispatch, seconds to minutes per kernel
 * with its shader cache empty (docs/ci.md).
 */
import { GpuError } from '../errors.js';
import { oneLine, type GpuContext } from '../gpu-context.js';

export interface KernelSource {
  /** For messages and debugging labels. */
  label: string;
  code: string;
}

/** What one device compiled and reused: shader modules, and pipelines by key, in the order they were compiled. */
interface DeviceCache {
  modules: Map<string, Promise<GPUShaderModule>>;
  pipelines: Map<string, Promise<GPUComputePipeline>>;
  /** `label:entryPoint {constants}` of each pipeline compiled, for counts and messages. */
  compiled: string[];
  reused: number;
  layouts: Map<string, { bindGroupLayout: GPUBindGroupLayout; pipelineLayout: GPUPipelineLayout }>;
  /** An id for each explicit pipeline layout seen, for the pipelines' keys. */
  layoutIds: WeakMap<GPUPipelineLayout, number>;
}

const caches = new WeakMap<GPUDevice, DeviceCache>();
let nextLayoutId = 1;

function cacheOf(device: GPUDevice): DeviceCache {
  let cache = caches.get(device);
  if (!cache) {
    cache = { modules: new Map(), pipelines: new Map(), compiled: [], reused: 0, layouts: new Map(), layoutIds: new WeakMap() };
    caches.set(device, cache);
  }
  return cache;
}

/** Pipelines this device compiled (each once) and how many requests took one already compiled. */
export interface PipelineCounts {
  /** `label:entryPoint {constants}` of each pipeline compiled, in order. */
  compiled: readonly string[];
  reused: number;
}

export function pipelineCounts(gpu: GpuContext): PipelineCounts {
  const { compiled, reused } = cacheOf(gpu.device);
  return { compiled: [...compiled], reused };
}

/** The constants as one string, in name order. */
function constantsKey(constants: Readonly<Record<string, number>>): string {
  return Object.keys(constants)
    .sort()
    .map((name) => `${name}=${constants[name]}`)
    .join(',');
}

async function shaderModule(device: GPUDevice, cache: DeviceCache, source: KernelSource): Promise<GPUShaderModule> {
  let module = cache.modules.get(source.code);
  if (!module) {
    module = (async () => {
      const created = device.createShaderModule({ label: source.label, code: source.code });
      const info = await created.getCompilationInfo();
      const firstError = info.messages.find((m) => m.type === 'error');
      if (firstError) {
        throw new GpuError('validation', `WGSL of ${source.label} does not compile: line ${firstError.lineNum}: ${oneLine(firstError.message)}`);
      }
      return created;
    })();
    cache.modules.set(source.code, module);
    module.catch(() => cache.modules.delete(source.code));
  }
  return module;
}

/**
 * The pipelines of `entryPoints` of `source` with `constants` and `layout`: compiled on the first request, the same
 * objects on every later one with the same kernel, entry point, constants and layout (an explicit layout counts as the
 * same when it is the same object: see `cachedLayout`).
 */
export async function computePipelines<EntryPoint extends string>(
  gpu: GpuContext,
  source: KernelSource,
  entryPoints: readonly EntryPoint[],
  constants: Record<string, number> = {},
  layout: GPUPipelineLayout | 'auto' = 'auto',
): Promise<Record<EntryPoint, GPUComputePipeline>> {
  const { device } = gpu;
  const cache = cacheOf(device);
  const module = await shaderModule(device, cache, source);
  let layoutKey = 'auto';
  if (layout !== 'auto') {
    let id = cache.layoutIds.get(layout);
    if (id === undefined) cache.layoutIds.set(layout, (id = nextLayoutId++));
    layoutKey = `layout ${id}`;
  }
  const pipelines = {} as Record<EntryPoint, GPUComputePipeline>;
  for (const entryPoint of entryPoints) {
    const described = `${source.label}:${entryPoint} {${constantsKey(constants)}}`;
    const key = `${source.code}\u0000${entryPoint}\u0000${constantsKey(constants)}\u0000${layoutKey}`;
    let pipeline = cache.pipelines.get(key);
    if (pipeline) {
      cache.reused++;
    } else {
      pipeline = device
        .createComputePipelineAsync({ label: `${source.label}:${entryPoint}`, layout, compute: { module, entryPoint, constants } })
        .catch((error: unknown) => {
          cache.pipelines.delete(key);
          throw new GpuError('validation', `pipeline ${source.label}:${entryPoint} failed: ${oneLine(error)}`);
        });
      cache.pipelines.set(key, pipeline);
      cache.compiled.push(described);
    }
    pipelines[entryPoint] = await pipeline;
  }
  return pipelines;
}

/**
 * A bind group layout of `entries` (group 0) and the pipeline layout of that one group, the same objects for every
 * request with equal entries on this device, so that pipelines compiled with it are found again by `computePipelines`.
 */
export function cachedLayout(
  gpu: GpuContext,
  label: string,
  entries: readonly GPUBindGroupLayoutEntry[],
): { bindGroupLayout: GPUBindGroupLayout; pipelineLayout: GPUPipelineLayout } {
  const cache = cacheOf(gpu.device);
  const key = JSON.stringify(entries);
  let found = cache.layouts.get(key);
  if (!found) {
    const bindGroupLayout = gpu.device.createBindGroupLayout({ label, entries: [...entries] });
    found = { bindGroupLayout, pipelineLayout: gpu.device.createPipelineLayout({ label, bindGroupLayouts: [bindGroupLayout] }) };
    cache.layouts.set(key, found);
  }
  return found;
}
