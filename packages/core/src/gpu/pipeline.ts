/**
 * Compiling WGSL into compute pipelines, with compile errors reported as one line (first error, with its line).
 */
import { GpuError } from '../errors.js';
import { oneLine, type GpuContext } from '../gpu-context.js';

export interface KernelSource {
  /** For messages and debugging labels. */
  label: string;
  code: string;
}

export async function computePipelines<EntryPoint extends string>(
  gpu: GpuContext,
  source: KernelSource,
  entryPoints: readonly EntryPoint[],
  constants: Record<string, number> = {},
  layout: GPUPipelineLayout | 'auto' = 'auto',
): Promise<Record<EntryPoint, GPUComputePipeline>> {
  const { device } = gpu;
  const module = device.createShaderModule({ label: source.label, code: source.code });
  const info = await module.getCompilationInfo();
  const firstError = info.messages.find((m) => m.type === 'error');
  if (firstError) {
    throw new GpuError('validation', `WGSL of ${source.label} does not compile: line ${firstError.lineNum}: ${oneLine(firstError.message)}`);
  }
  const pipelines = {} as Record<EntryPoint, GPUComputePipeline>;
  for (const entryPoint of entryPoints) {
    try {
      pipelines[entryPoint] = await device.createComputePipelineAsync({
        label: `${source.label}:${entryPoint}`,
        layout,
        compute: { module, entryPoint, constants },
      });
    } catch (error) {
      throw new GpuError('validation', `pipeline ${source.label}:${entryPoint} failed: ${oneLine(error)}`);
    }
  }
  return pipelines;
}

/** A bind group for `pipeline`'s group 0 from buffers in binding order. */
export function bindBuffers(gpu: GpuContext, pipeline: GPUComputePipeline, buffers: readonly GPUBuffer[], label?: string): GPUBindGroup {
  return gpu.device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}
