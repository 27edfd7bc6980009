/**
 * hw4-cli sdpa Q.npy K.npy V.npy OUTPUT.npy [options]: attention as models call it (@fa/sdpa) on NumPy files (the
 * run itself is in ../sdpa/run.ts); `sdpa --list` says which implementations run here; `sdpa --bench` times
 * model-shaped problems beside PyTorch; `sdpa --conformance` checks the library's awkward cases on this GPU.
 *
 * Files are NumPy .npy (what np.save writes): f32 or f16 tensors, C order, four dimensions each. NumPy saves float64 by
 * default; such a tensor is converted to float32 with a note (the computation is float32 either way) and OUTPUT is
 * then float32. OUTPUT has Q's shape and dtype otherwise. A mask is bool (true = takes part) or float (added to the
 * scores). Nothing is written unless the whole computation succeeded; OUTPUT and --lse are replaced together.
 */
import { UnsupportedShapeError } from '@fa/core';
import { checkSdpaCase, matrixUnavailable, planAttention, SDPA_CASE_GROUPS, type GpuKernelId, type TensorType } from '@fa/sdpa';
import { parse, shown, stringFlag, type Values } from '../args.js';
import { SDPA_OPTIONS } from '../command-line.js';
import { makeEnv } from '../env.js';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';
import { tuningFromEnvironment } from '../bench/sdpa.js';
import { reporter, type Reporter } from '../output.js';
import { sdpaBench } from '../sdpa/bench.js';
import { sdpaMode } from '../sdpa/modes.js';
import { SDPA_IMPLS, sdpaRun, type SdpaImpl } from '../sdpa/run.js';

/** A line of the command's result (a table) on standard output. */
const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** What each implementation is, for `sdpa --list`. */
const ABOUT: Record<SdpaImpl, string> = {
  'attention-fp32': "GPU kernel: lean-loop's loop with heads, groups, bands and masks; f32 or f16 tensors, float32 arithmetic",
  'attention-matrix': "GPU kernel on the matrix units: resident-o's and f16-resident's loop with heads, groups, bands and masks; f16 products for f16 tensors (their default where it runs), high and low f16 parts for f32 (values within ±65504)",
  'attention-decode': 'GPU kernel for a few query rows per head over long keys: the heads of a KV group together, keys split over workgroups',
  'cpu-fp32': 'the plain float32 computation on one CPU thread',
};

export async function sdpaCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('sdpa', args, SDPA_OPTIONS);
  const out = reporter(values.quiet === true, values.json === true);
  switch (sdpaMode(values, positionals)) {
    case 'list':
      return listImpls(out, values.json === true);
    case 'bench':
      return sdpaBench(out, values, values.json === true);
    case 'conformance':
      return conformance(out, values, values.json === true);
    case 'run':
      return sdpaRun(values, positionals, out);
  }
}

async function listImpls(out: Reporter, json: boolean): Promise<number> {
  const env = await makeEnv({ gpu: true, threads: 1 });
  const gpuReason = env.gpu ? (env.gpu.device.features.has('subgroups') ? undefined : 'the GPU lacks feature subgroups') : env.gpuUnavailableReason ?? 'no GPU';
  const implementations = SDPA_IMPLS.map((id) => {
    const reason = id === 'cpu-fp32' ? undefined : gpuReason ?? (id === 'attention-matrix' && env.gpu ? matrixUnavailable(env.gpu) : undefined);
    return { id, available: reason === undefined, ...(reason ? { reason } : {}), about: ABOUT[id] };
  });
  if (json) out.result({ implementations: implementations.map(({ id, available, reason }) => ({ id, available, ...(reason === undefined ? {} : { reason }) })) });
  else for (const i of implementations) print(`${i.id.padEnd(18)} ${i.available ? 'available' : `not available: ${i.reason ?? ''}`}  ${i.about}`);
  return EXIT.ok;
}

/** The GPU kernels --impl names for --conformance (comma-separated), or undefined for each case's default. */
function kernelsOf(text: string | undefined): GpuKernelId[] | undefined {
  if (text === undefined) return undefined;
  const gpuKernels = SDPA_IMPLS.filter((id): id is GpuKernelId => id !== 'cpu-fp32');
  const ids = text.split(',');
  for (const id of ids) {
    if (!(gpuKernels as readonly string[]).includes(id)) throw new UsageError(`--impl ${id}: with --conformance give GPU kernels, comma-separated: ${gpuKernels.join(', ')}`);
  }
  return ids as GpuKernelId[];
}

/**
 * The awkward cases of the library's own suite (@fa/sdpa's conformance.ts) on this GPU, against the float64 oracle:
 * each on its default kernel (or every --impl kernel), with f32 and f16 tensors (or --dtype), planned once each
 * (planAttention, with FA_SDPA_TUNING's sizes as the bench takes them) and checked on that plan. A kernel named (by the case or --impl) that cannot run a case says why and
 * does not count as a failure; an error over the limit exits 5.
 */
async function conformance(out: Reporter, values: Values, json: boolean): Promise<number> {
  const kernels = kernelsOf(stringFlag(values, 'impl'));
  const dtypeText = stringFlag(values, 'dtype') ?? 'f32,f16';
  const dtypes = dtypeText.split(',');
  if (dtypes.some((t) => t !== 'f32' && t !== 'f16')) throw new UsageError(`--dtype ${shown(dtypeText)}: give f32, f16 or f32,f16`);
  const tuning = tuningFromEnvironment();
  const env = await makeEnv({ gpu: true, threads: 1 });
  if (!env.gpu) throw new ExitError(`sdpa --conformance needs a GPU: ${env.gpuUnavailableReason ?? 'none found'}`, EXIT.usage);
  const gpu = env.gpu;
  const rows = [];
  for (const group of SDPA_CASE_GROUPS) {
    for (const c of group.cases) {
      for (const kernel of kernels ?? [c.kernel]) {
        // The append case writes f32 caches; it runs with f32 tensors only.
        for (const dtype of (c.append === undefined ? dtypes : ['f32']) as TensorType[]) {
          // Planned once: a kernel that cannot run the case says why; otherwise the check prepares this plan.
          const plan = planAttention(gpu, c.dims, { ...c.options, dtype, lse: true, ...(kernel ? { kernel } : {}), ...tuning });
          const row = { case: c.name, kernel: kernel ?? 'default', dtype };
          if (typeof plan === 'string') {
            if (kernel === undefined) throw new UnsupportedShapeError(`${c.name}: the default kernel cannot run this case here: ${plan}`);
            rows.push({ ...row, passed: true, declined: plan });
            out.info(`${c.name} (${kernel}, ${dtype}): declined: ${plan}`);
            continue;
          }
          const check = await checkSdpaCase(gpu, c, { plan });
          const passed = check.error <= check.limit && check.lseError <= check.lseLimit;
          rows.push({ ...row, kernel: check.impl, passed, ...check });
          out.info(`${c.name} (${check.impl}, ${dtype}): ${passed ? 'ok' : 'FAILED'}, error ${check.error.toExponential(1)} (limit ${check.limit.toExponential(1)})`);
        }
      }
    }
  }
  const failed = rows.filter((r) => !r.passed).length;
  const ran = rows.filter((r) => !('declined' in r)).length;
  if (json) out.result({ adapter: gpu.report.description, boundsChecks: gpu.report.boundsChecks, ran, failed, rows });
  else {
    print(`adapter: ${gpu.report.description}`);
    print('| case | kernel | tensors | max error | limit | lse error | lse limit | result |');
    print('|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      if ('declined' in r) print(`| ${r.case} | ${r.kernel} | ${r.dtype} | — | — | — | — | declined: ${r.declined} |`);
      else if ('error' in r) print(`| ${r.case} | ${r.kernel} | ${r.dtype} | ${r.error.toExponential(1)} | ${r.limit.toExponential(1)} | ${r.lseError.toExponential(1)} | ${r.lseLimit.toExponential(1)} | ${r.passed ? 'ok' : 'FAILED'} |`);
    }
    print(`${ran - failed} of ${ran} passed${failed > 0 ? `, ${failed} failed` : ''}`);
  }
  return failed > 0 ? EXIT.mismatch : EXIT.ok;
}
