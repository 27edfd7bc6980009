/**
 * The GPU in Node.js, through Dawn (the `webgpu` package). The only module that touches Dawn's `create()`.
 *
 * Teardown: after requestDevice() Dawn keeps a thread alive and destroying its instance can hang, so a one-shot
 * program must destroy the device, flush its output and then call process.exit().
 */
import { GpuError } from '../errors.js';
import { createGpuContext, oneLine, type GpuContext } from '../gpu-context.js';

/**
 * Dawn toggles, in ONE enable string (a second `enable-dawn-features=` would replace the first):
 * - allow_unsafe_apis: experimental subgroup matrices;
 * - vulkan_enable_f16_on_nvidia: shader-f16 on NVIDIA's Vulkan driver;
 * - disable_robustness, unless bounds checks are asked for: Dawn's robustness transform clamps every array index the
 *   compiler cannot prove in range, which cost the fastest rungs 6-62% on an H100 (docs/bounds-checks.md). These are
 *   the project's own kernels, each checked by the conformance suite on awkward shapes, with shapes validated before
 *   any dispatch, as a CUDA program runs without such checks;
 * and timestamp_quantization disabled, or short kernels all time as the same quantum. `extra` adds toggles to the
 * enable string (FA_DAWN_TOGGLES, for debugging: `dump_shaders` prints each shader's WGSL and the SPIR-V Dawn hands
 * the driver, which scripts/kernel-registers.mjs reads).
 */
export function dawnFlags(boundsChecks: boolean, extra: readonly string[] = []): string[] {
  const enabled = ['allow_unsafe_apis', 'vulkan_enable_f16_on_nvidia', ...(boundsChecks ? [] : ['disable_robustness']), ...extra];
  return [`enable-dawn-features=${enabled.join(',')}`, 'disable-dawn-features=timestamp_quantization'];
}

/** The flags of a default instance: bounds checks off. */
export const DAWN_FLAGS: readonly string[] = dawnFlags(false);

/**
 * Toggles an environment adds to Dawn's enable string: FA_DAWN_TOGGLES, names separated by commas (e.g.
 * `dump_shaders`). Anything but lowercase letters, digits and underscores is not a toggle name and is dropped, so the
 * variable cannot reach past the enable string.
 */
export function extraDawnToggles(env: Record<string, string | undefined> = process.env): string[] {
  return (env.FA_DAWN_TOGGLES ?? '').split(',').map((name) => name.trim()).filter((name) => /^[a-z0-9_]+$/.test(name));
}

/** Whether an environment asks for Dawn's bounds checks: FA_BOUNDS_CHECKS=1 (or on); anything else leaves them off. */
export function boundsChecksWanted(env: Record<string, string | undefined> = process.env): boolean {
  const value = env.FA_BOUNDS_CHECKS?.trim().toLowerCase();
  return value === '1' || value === 'on' || value === 'true';
}

export const NO_ADAPTER_HINT =
  'for a software GPU on Debian/Ubuntu install Mesa >= 24 lavapipe (bash .ci/install-lavapipe.sh; see README "Software GPU")';

export interface AcquireOptions {
  powerPreference?: GPUPowerPreference;
  /** Environment to read FA_GPU and FA_BOUNDS_CHECKS from (default process.env): FA_GPU=off disables the GPU. */
  env?: Record<string, string | undefined>;
  /** Keep Dawn's bounds checks on (default: FA_BOUNDS_CHECKS of `env`, else off). */
  boundsChecks?: boolean;
}

/**
 * Dawn's GPU instances, one per set of flags, kept for the life of the process: if the object returned by create() is
 * garbage-collected while its adapter and device live on, the process crashes later (measured: futex and mutex aborts
 * as soon as a garbage collection runs, e.g. when a worker thread starts).
 */
const liveInstances = new Map<string, GPU>();

/**
 * The instance for these flags, made once per process: Dawn prints its messages about the adapters (on the software
 * GPU, the two "maxDynamic… artificially reduced" warnings) at each instance's first `requestAdapter()`, so one
 * instance prints them once, and the devices of a process (a test file makes many) share it.
 */
function instanceWith(webgpu: typeof import('webgpu'), flags: string[]): GPU {
  const key = flags.join(' ');
  let gpu = liveInstances.get(key);
  if (gpu === undefined) {
    gpu = webgpu.create(flags);
    liveInstances.set(key, gpu);
  }
  return gpu;
}

/**
 * A context on a device of `adapter` (`createGpuContext`), with Dawn's device name tidied: Dawn makes it from the
 * driver's name with punctuation turned into hyphens ("llvmpipe (LLVM 15.0.6, 256 bits)" becomes
 * "llvmpipe-llvm-15-0-6-256-bits-"), and a hyphen at either end says nothing.
 */
async function createNodeGpuContext(adapter: GPUAdapter): Promise<GpuContext> {
  const gpu = await createGpuContext(adapter);
  gpu.report.device = gpu.report.device.replace(/^-+|-+$/g, '');
  return gpu;
}

/**
 * Dawn's `navigator.gpu` for Node, for an application that creates its own device (then `gpuContextFromDevice`):
 * loads the webgpu package, installs its globals (GPUBufferUsage, …) and returns the instance with `dawnFlags`
 * (bounds checks off unless FA_BOUNDS_CHECKS=1 or `boundsChecks`; FA_DAWN_TOGGLES added), one per set of flags, kept alive for the life of
 * the process. Rejects when the webgpu package cannot be loaded.
 */
export async function nodeGpu(boundsChecks = boundsChecksWanted()): Promise<GPU> {
  const webgpu = await import('webgpu');
  Object.assign(globalThis, webgpu.globals);
  return instanceWith(webgpu, dawnFlags(boundsChecks, extraDawnToggles()));
}

/**
 * A device on Dawn's null backend, or why there is none. It runs nothing, but creating a shader module on it runs Dawn's
 * shader compiler in full, with subgroup matrices and shader-f16 enabled: so tests can check the WGSL of kernels that
 * the software GPU cannot run (lavapipe has no subgroup matrices) without a GPU. Its limits are WebGPU's defaults, so a
 * module's pipelines, with their own limits, are not created here.
 */
export async function nullBackendDevice(): Promise<{ device: GPUDevice; reason?: undefined } | { device?: undefined; reason: string }> {
  let webgpu: typeof import('webgpu');
  try {
    webgpu = await import('webgpu');
  } catch (error) {
    return { reason: `Dawn (the webgpu package) failed to load: ${oneLine(error)}` };
  }
  Object.assign(globalThis, webgpu.globals);
  const adapter = await instanceWith(webgpu, ['backend=null', ...dawnFlags(false)]).requestAdapter();
  if (!adapter) return { reason: 'Dawn offers no null backend here' };
  const wanted: GPUFeatureName[] = ['chromium-experimental-subgroup-matrix' as GPUFeatureName, 'subgroups', 'shader-f16'];
  const missing = wanted.filter((feature) => !adapter.features.has(feature));
  if (missing.length > 0) return { reason: `Dawn's null backend lacks ${missing.join(', ')}` };
  return { device: await adapter.requestDevice({ requiredFeatures: wanted }) };
}

/** The errors Dawn's shader compiler reports for `code` on `device` (the null backend's, say), one line each. */
export async function shaderCompileErrors(device: GPUDevice, code: string): Promise<string[]> {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const { messages } = await module.getCompilationInfo();
  await device.popErrorScope();
  return messages.filter(({ type }) => type === 'error').map(({ lineNum, message }) => `line ${lineNum}: ${message.split('\n')[0]}`);
}

/** Milliseconds of each step of starting the GPU: loading Dawn, the instance and adapter, the device. */
export interface GpuStartTimes {
  loadMs: number;
  adapterMs: number;
  deviceMs: number;
}

export type Acquired = { gpu: GpuContext; reason?: undefined; times: GpuStartTimes } | { gpu?: undefined; reason: string };

/** The GPU, or the reason there is none. Never throws for a missing GPU; the caller decides whether that is fatal. */
export async function acquireNodeGpu(options: AcquireOptions = {}): Promise<Acquired> {
  const env = options.env ?? process.env;
  if (env.FA_GPU === 'off' || env.FA_GPU === '0') return { reason: 'GPU disabled by FA_GPU=off' };
  const boundsChecks = options.boundsChecks ?? boundsChecksWanted(env);
  let webgpu: typeof import('webgpu');
  const t0 = performance.now();
  try {
    webgpu = await import('webgpu');
  } catch (error) {
    const missing = (error as { code?: string } | undefined)?.code === 'ERR_MODULE_NOT_FOUND' && oneLine(error).includes("'webgpu'");
    if (missing) return { reason: 'Dawn is not installed: add the webgpu package (an optional peer dependency of @fa/core) to use a GPU from Node' };
    return { reason: `Dawn (the webgpu package) failed to load: ${oneLine(error)}` };
  }
  Object.assign(globalThis, webgpu.globals);
  const t1 = performance.now();
  let adapter: GPUAdapter | null;
  try {
    const gpu = instanceWith(webgpu, dawnFlags(boundsChecks, extraDawnToggles(env)));
    adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  } catch (error) {
    return { reason: `no GPU adapter (${oneLine(error)}); ${NO_ADAPTER_HINT}` };
  }
  if (!adapter) return { reason: `no GPU adapter (no Vulkan driver found); ${NO_ADAPTER_HINT}` };
  const t2 = performance.now();
  try {
    const gpu = await createNodeGpuContext(adapter);
    gpu.report.boundsChecks = boundsChecks;
    return { gpu, times: { loadMs: t1 - t0, adapterMs: t2 - t1, deviceMs: performance.now() - t2 } };
  } catch (error) {
    return { reason: error instanceof GpuError ? error.message : oneLine(error) };
  }
}
