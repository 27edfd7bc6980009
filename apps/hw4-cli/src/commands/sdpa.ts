/**
 * hw4-cli sdpa Q.npy K.npy V.npy OUTPUT.npy [options]: attention as models call it (@fa/sdpa) on NumPy files;
 * `sdpa --list` says which implementations run here; `sdpa --bench` times model-shaped problems beside PyTorch.
 *
 * Files are NumPy .npy (what np.save writes): f32 or f16 tensors, C order, four dimensions each. NumPy saves float64 by
 * default; such a tensor is converted to float32 with a note (the computation is float32 either way) and OUTPUT is
 * then float32. OUTPUT has Q's shape and dtype otherwise. A mask is bool (true = takes part) or float (added to the
 * scores). Nothing is written unless the whole computation succeeded; OUTPUT is replaced atomically.
 */
import { readFile } from 'node:fs/promises';
import { SdpaArgumentError, type RunEnv, type SdpaMask, type SdpaOptions } from '@fa/core';
import { encodeNpy, parseNpy, writeFileAtomic, type NpyArray } from '@fa/io/node';
import { attention, checkSdpaCase, dimsOf, gpuUnsupportedReason, halvesToFloats, matrixUnavailable, SDPA_CASE_GROUPS, type GpuKernelId, type SdpaTensor, type TensorType } from '@fa/sdpa';
import { expectPositionals, parse, stringFlag } from '../args.js';
import { SDPA_OPTIONS } from '../command-line.js';
import { makeEnv } from '../env.js';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';
import { reporter, type Reporter } from '../output.js';
import { copyBandwidth, SDPA_BENCH_CASES, timeOurs, timeTorchCases } from '../bench/sdpa.js';

/** A line of the command's result (a table) on standard output. */
const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The implementations `--impl` names: the three GPU kernels and the CPU path. */
export const SDPA_IMPLS = ['attention-fp32', 'attention-matrix', 'attention-decode', 'cpu-fp32'] as const;
type SdpaImpl = (typeof SDPA_IMPLS)[number];

/** What each implementation is, for `sdpa --list`. */
const ABOUT: Record<SdpaImpl, string> = {
  'attention-fp32': "GPU kernel: lean-loop's loop with heads, groups, bands and masks; f32 or f16 tensors, float32 arithmetic",
  'attention-matrix': "GPU kernel on the matrix units: resident-o's loop with heads, groups, bands and masks; f16 products for f16 tensors, high and low f16 parts for f32 (values within ±65504)",
  'attention-decode': 'GPU kernel for a few query rows per head over long keys: the heads of a KV group together, keys split over workgroups',
  'cpu-fp32': 'the plain float32 computation on one CPU thread',
};

export async function sdpaCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('sdpa', args, SDPA_OPTIONS);
  const out = reporter(values.quiet === true, values.json === true);
  if (values.list === true) return listImpls(out, values.json === true);
  if (values.bench === true) return bench(out, values, values.json === true);
  if (values.conformance === true) return conformance(out, values, values.json === true);
  const [qPath, kPath, vPath, outPath] = expectPositionals('sdpa', positionals, ['Q.npy', 'K.npy', 'V.npy', 'OUTPUT.npy']) as [string, string, string, string];
  const impl = implOf(stringFlag(values, 'impl'));
  const options = optionsOf(values);
  const notes: string[] = [];
  const [q, k, v] = await Promise.all([tensorFile(qPath, 'Q', notes), tensorFile(kPath, 'K', notes), tensorFile(vPath, 'V', notes)]);
  const maskPath = stringFlag(values, 'mask');
  const mask = maskPath === undefined ? undefined : await maskFile(maskPath, notes);
  const lsePath = stringFlag(values, 'lse');
  const dims = inputError(() => dimsOf(q, k, v, options.layout));
  const env: RunEnv = await makeEnv({ gpu: impl !== 'cpu-fp32', threads: 1 });
  const full: SdpaOptions = { ...options, ...(mask ? { mask } : {}) };
  const dtype = q.data instanceof Uint16Array ? ('f16' as const) : ('f32' as const);
  const kernel = impl === undefined || impl === 'cpu-fp32' ? undefined : impl;
  if (kernel !== undefined) {
    const why = env.gpu ? inputError(() => gpuUnsupportedReason(env.gpu as NonNullable<RunEnv['gpu']>, dims, { ...full, dtype, kernel })) : env.gpuUnavailableReason ?? 'no GPU';
    if (why !== undefined) throw new UsageError(`${kernel} cannot run this problem here: ${why}; use --impl cpu-fp32 or leave --impl out`);
  }
  const gpu = impl !== 'cpu-fp32' && env.gpu ? { gpu: env.gpu } : {};
  const result = await inputError(() => attention(q, k, v, { ...full, returnLse: lsePath !== undefined, ...gpu, ...(kernel ? { kernel } : {}) }));
  if (result.note !== undefined) notes.push(result.note);
  for (const note of notes) out.info(`hw4-cli: note: ${note}`);
  await whileOpening(outPath, () => writeFileAtomic(outPath, [encodeNpy(result.out.shape, result.out.data)]));
  if (lsePath !== undefined && result.lse) {
    await whileOpening(lsePath, () => writeFileAtomic(lsePath, [encodeNpy([dims.B, dims.Hq, dims.Lq], result.lse as Float32Array)]));
  }
  const summary = { impl: result.impl, dims, dtype: result.out.data instanceof Uint16Array ? 'f16' : 'f32', notes };
  if (values.json === true) out.result(summary);
  else out.info(`wrote ${outPath}: [${result.out.shape.join(', ')}] ${summary.dtype}, computed by ${result.impl}`);
  return EXIT.ok;
}

function implOf(text: string | undefined): SdpaImpl | undefined {
  if (text === undefined) return undefined;
  if (!(SDPA_IMPLS as readonly string[]).includes(text)) throw new UsageError(`unknown implementation "${text}"; choose one of ${SDPA_IMPLS.join(', ')} (see sdpa --list)`);
  return text as SdpaImpl;
}

function optionsOf(values: Record<string, unknown>): SdpaOptions {
  const layoutText = stringFlag(values as never, 'layout') ?? 'bhsd';
  if (layoutText !== 'bhsd' && layoutText !== 'bshd') throw new UsageError(`--layout ${layoutText} is unknown; give bhsd ([B, H, L, d]) or bshd ([B, L, H, d])`);
  const windowText = stringFlag(values as never, 'window');
  let window: [number, number] | undefined;
  if (windowText !== undefined) {
    const parts = windowText.split(',').map((x) => Number(x.trim()));
    if (parts.length !== 2 || parts.some((x) => !Number.isInteger(x) || x < -1)) throw new UsageError(`--window ${windowText} is not LEFT,RIGHT; give two integers ≥ −1 (−1 for unbounded), e.g. --window 128,0`);
    window = [parts[0] as number, parts[1] as number];
  }
  const scaleText = stringFlag(values as never, 'scale');
  const scale = scaleText === undefined ? undefined : Number(scaleText);
  if (scale !== undefined && !Number.isFinite(scale)) throw new UsageError(`--scale ${scaleText} is not a finite number`);
  const lengthsText = stringFlag(values as never, 'cache-lengths');
  const cacheLengths = lengthsText?.split(',').map((x) => (x.trim() === '' ? Number.NaN : Number(x.trim())));
  if (lengthsText !== undefined && cacheLengths?.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new UsageError(`--cache-lengths ${lengthsText} is not a list of integers ≥ 0; give one per batch, e.g. --cache-lengths 4096,17`);
  }
  return {
    layout: layoutText,
    ...(values.causal === true ? { causal: true } : {}),
    ...(window ? { window } : {}),
    ...(scale !== undefined ? { scale } : {}),
    ...(cacheLengths ? { cacheLengths } : {}),
  };
}

/** Runs `work`, turning the problem's argument errors (shapes that do not fit) into exit 3, invalid input. */
function inputError<T>(work: () => T): T {
  try {
    const result = work();
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        throw asInputError(error);
      }) as T;
    }
    return result;
  } catch (error) {
    throw asInputError(error);
  }
}

function asInputError(error: unknown): unknown {
  return error instanceof SdpaArgumentError ? new ExitError(`${error.message}; no output was written`, EXIT.invalidInput) : error;
}

async function npyFile(path: string, what: string): Promise<NpyArray> {
  const bytes = await whileOpening(path, () => readFile(path)).catch((error: unknown) => {
    throw new ExitError(`cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, EXIT.fileSystem);
  });
  try {
    return parseNpy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    throw new ExitError(`${what} ${path}: ${error instanceof Error ? error.message : String(error)}`, EXIT.invalidInput);
  }
}

/** A tensor file as f32 or f16 data; float64 converted to float32 (with a note), other dtypes refused. */
async function tensorFile(path: string, what: string, notes: string[]): Promise<SdpaTensor> {
  const array = await npyFile(path, what);
  const data = array.data;
  if (array.dtype === 'f32' || array.dtype === 'f16') return checkFinite({ data: data as Float32Array | Uint16Array, shape: array.shape }, what, path);
  if (array.dtype === 'f64') {
    notes.push(`${what} ${path} is float64; it is computed in float32 and OUTPUT is float32`);
    return checkFinite({ data: Float32Array.from(data as Float64Array), shape: array.shape }, what, path);
  }
  throw new ExitError(`${what} ${path} holds ${array.dtype} values; save it as float32 (np.save(path, x.astype(np.float32))) or float16`, EXIT.invalidInput);
}

function checkFinite(tensor: SdpaTensor, what: string, path: string): SdpaTensor {
  const values = tensor.data instanceof Uint16Array ? halvesToFloats(tensor.data) : tensor.data;
  const bad = values.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new ExitError(`${what} ${path} holds ${values[bad]} at flat index ${bad} (or its float32 value is beyond float32's range); give finite values`, EXIT.invalidInput);
  return tensor;
}

async function maskFile(path: string, notes: string[]): Promise<SdpaMask> {
  const array = await npyFile(path, 'the mask');
  if (array.dtype === 'bool' || array.dtype === 'u8') return { kind: 'bool', data: array.data as Uint8Array, shape: array.shape };
  if (array.dtype === 'f32') return { kind: 'additive', data: array.data as Float32Array, shape: array.shape };
  if (array.dtype === 'f64') {
    notes.push(`the mask ${path} is float64; its values are added to the scores as float32`);
    return { kind: 'additive', data: Float32Array.from(array.data as Float64Array), shape: array.shape };
  }
  if (array.dtype === 'f16') return { kind: 'additive', data: halvesToFloats(array.data as Uint16Array), shape: array.shape };
  throw new ExitError(`the mask ${path} holds ${array.dtype} values; give bool (true = takes part) or float (added to the scores)`, EXIT.invalidInput);
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
 * each on its default kernel (or every --impl kernel), with f32 and f16 tensors (or --dtype). A kernel that cannot run
 * a case says why and does not count as a failure; an error over the limit exits 5.
 */
async function conformance(out: Reporter, values: Record<string, unknown>, json: boolean): Promise<number> {
  const env = await makeEnv({ gpu: true, threads: 1 });
  if (!env.gpu) throw new ExitError(`sdpa --conformance needs a GPU: ${env.gpuUnavailableReason ?? 'none found'}`, EXIT.usage);
  const gpu = env.gpu;
  const kernels = kernelsOf(stringFlag(values as never, 'impl'));
  const dtypeText = stringFlag(values as never, 'dtype') ?? 'f32,f16';
  const dtypes = dtypeText.split(',');
  if (dtypes.some((t) => t !== 'f32' && t !== 'f16')) throw new UsageError(`--dtype ${dtypeText}: give f32, f16 or f32,f16`);
  const rows = [];
  for (const group of SDPA_CASE_GROUPS) {
    for (const c of group.cases) {
      for (const kernel of kernels ?? [c.kernel]) {
        // The append case writes f32 caches; it runs with f32 tensors only.
        for (const dtype of (c.append === undefined ? dtypes : ['f32']) as TensorType[]) {
          const how = { dtype, ...(kernel ? { kernel } : {}) };
          const declined = kernel ? gpuUnsupportedReason(gpu, c.dims, { ...c.options, dtype, kernel, lse: true }) : undefined;
          const row = { case: c.name, kernel: kernel ?? 'default', dtype };
          if (declined !== undefined) {
            rows.push({ ...row, passed: true, declined });
            out.info(`${c.name} (${kernel ?? 'default'}, ${dtype}): declined: ${declined}`);
            continue;
          }
          const check = await checkSdpaCase(gpu, c, how);
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

async function bench(out: Reporter, values: Record<string, unknown>, json: boolean): Promise<number> {
  const env = await makeEnv({ gpu: true, threads: 1 });
  if (!env.gpu) throw new ExitError(`sdpa --bench needs a GPU: ${env.gpuUnavailableReason ?? 'none found'}`, EXIT.usage);
  const chosen = stringFlag(values as never, 'cases');
  const indices = chosen === undefined ? SDPA_BENCH_CASES.map((_, n) => n) : chosen.split(',').map(Number);
  if (indices.some((n) => !Number.isInteger(n) || n < 0 || n >= SDPA_BENCH_CASES.length)) throw new UsageError(`--cases ${chosen ?? ''}: give case numbers 0 to ${SDPA_BENCH_CASES.length - 1}, comma-separated`);
  const cases = indices.map((n) => SDPA_BENCH_CASES[n] as (typeof SDPA_BENCH_CASES)[number]);
  const torch = values['no-torch'] === true ? 'not requested (--no-torch)' : timeTorchCases(stringFlag(values as never, 'python') ?? process.env.FA_PYTHON ?? 'python3', cases);
  const copyGBs = await copyBandwidth(env.gpu);
  const rows = [];
  for (const [n, c] of cases.entries()) {
    const ours = await timeOurs(env.gpu, c, 5, 10);
    rows.push({ ...ours, torch: typeof torch === 'string' ? { reason: torch } : (torch.rows[n] ?? {}) });
    out.info(`${c.name}: ${ours.ms.toFixed(3)} ms`);
  }
  if (json) {
    out.result({ adapter: env.gpu.report.description, torch: typeof torch === 'string' ? torch : torch.version, copyGBs, rows });
    return EXIT.ok;
  }
  const cell = (x: unknown): string => (typeof x === 'number' ? x.toFixed(3) : '—');
  print(`adapter: ${env.gpu.report.description}; ${typeof torch === 'string' ? `PyTorch: ${torch}` : torch.version}; copy kernel: ${copyGBs === undefined ? 'no timestamps' : `${copyGBs.toFixed(0)} GB/s read (and as much written)`}`);
  print('| case | kernel | ours, ms (min-max) | K, V read GB/s | max error | PyTorch fp32 | PyTorch fp16 | PyTorch fp32 ÷ ours |');
  print('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const t = r.torch as Record<string, unknown>;
    print(`| ${r.name} | ${r.impl} | ${r.ms.toFixed(3)} (${r.msMin.toFixed(3)}-${r.msMax.toFixed(3)}) | ${r.kvGBs.toFixed(0)} | ${r.maxError.toExponential(1)} | ${cell(t.fp32)} | ${cell(t.fp16)} | ${typeof t.fp32 === 'number' ? (t.fp32 / r.ms).toFixed(2) : '—'} |`);
  }
  return EXIT.ok;
}
