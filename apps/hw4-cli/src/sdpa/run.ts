/**
 * `hw4-cli sdpa Q.npy K.npy V.npy OUTPUT.npy [--lse LSE.npy]`: attention on NumPy files. In order, so that no work is
 * done for a run that cannot end well and no file is replaced by one that did not:
 * 1. the command line (exit 2), and the outputs against the inputs: an output that is an input, or --lse that is
 *    OUTPUT, is refused (exit 4);
 * 2. the outputs' destinations, checked and their temporary files created (exit 4: a missing folder, a folder, a
 *    read-only file);
 * 3. the inputs, read one after the other (Q, K, V, then the mask), each exactly as long as its header says (exit 3);
 * 4. the computation; NaN or Inf in OUTPUT from finite inputs is a fault, reported (exit 1) and not written;
 * 5. OUTPUT and the log-sum-exps committed together (@fa/io's OutputGroup): both, or neither of the regular files.
 */
import type { RunEnv, SdpaDims, SdpaOptions } from '@fa/core';
import { SdpaArgumentError, valueHeadSize } from '@fa/core';
import { encodeNpy, OutputGroup, STDIO_PATH, type NpyArray } from '@fa/io/node';
import { attention, dimsOf, float32OverflowReason, planAttention, sdpaProblem, SdpaOverflowError, tensorRange, type AttentionResult, type SdpaTensor } from '@fa/sdpa';
import { expectPositionals, stringFlag, type Values } from '../args.js';
import { makeEnv } from '../env.js';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';
import type { Reporter } from '../output.js';
import { checkParentAlive } from '../parent-watch.js';
import { modBufferOf, modFlags, modOptions } from './mod-options.js';
import { inputName, readNpyInput } from './npy-input.js';
import { checkCacheLengths, perHeadValues, runOptions } from './run-options.js';
import { refuseOverlaps, type NamedPath } from './same-file.js';
import { checkSameDtype, maskOf, tensorOf } from './tensors.js';

/** The implementations `--impl` names: the three GPU kernels and the CPU path. */
export const SDPA_IMPLS = ['attention-fp32', 'attention-matrix', 'attention-decode', 'cpu-fp32'] as const;
export type SdpaImpl = (typeof SDPA_IMPLS)[number];

export async function sdpaRun(values: Values, positionals: string[], out: Reporter): Promise<number> {
  const [qPath, kPath, vPath, outPath] = expectPositionals('sdpa', positionals, ['Q.npy', 'K.npy', 'V.npy', 'OUTPUT.npy']) as [string, string, string, string];
  const impl = implOf(stringFlag(values, 'impl'));
  const options = runOptions(values);
  const maskPath = stringFlag(values, 'mask');
  const sinksPath = stringFlag(values, 'sinks');
  const slopesPath = stringFlag(values, 'alibi-slopes');
  const lsePath = stringFlag(values, 'lse');
  const mods = modFlags(values);
  const inputs: NamedPath[] = [
    { role: 'Q', path: qPath },
    { role: 'K', path: kPath },
    { role: 'V', path: vPath },
    ...(maskPath === undefined ? [] : [{ role: 'the mask', path: maskPath }]),
    ...(sinksPath === undefined ? [] : [{ role: '--sinks', path: sinksPath }]),
    ...(slopesPath === undefined ? [] : [{ role: '--alibi-slopes', path: slopesPath }]),
    ...mods.buffers.map(({ name, path }) => ({ role: `--mod-buffer ${name}`, path })),
  ];
  const outputs: NamedPath[] = [{ role: 'OUTPUT', path: outPath }, ...(lsePath === undefined ? [] : [{ role: '--lse', path: lsePath }])];
  refuseStdioMixes(inputs, outputs, out.json);
  await refuseOverlaps(inputs, outputs);
  const group = await OutputGroup.open(
    outputs.map((o) => ({ path: o.path, name: o.role === 'OUTPUT' ? o.path : `${o.role} ${o.path}` })),
    { opening: whileOpening },
  );
  try {
    const notes: string[] = [];
    const arrays = new Map<string, NpyArray>();
    for (const input of inputs) arrays.set(input.role, await readNpyInput(input.path, input.role));
    const [qArray, kArray, vArray, maskArray] = ['Q', 'K', 'V', 'the mask'].map((role) => arrays.get(role)) as [NpyArray, NpyArray, NpyArray, NpyArray | undefined];
    checkSameDtype([['Q', qArray], ['K', kArray], ['V', vArray]]);
    const q = tensorOf(qArray, inputName('Q', qPath), notes);
    const k = tensorOf(kArray, inputName('K', kPath), notes);
    const v = tensorOf(vArray, inputName('V', vPath), notes);
    const mask = maskArray === undefined || maskPath === undefined ? undefined : maskOf(maskArray, inputName('the mask', maskPath), notes);
    const dims = inputError(() => dimsOf(q, k, v, options.layout));
    checkCacheLengths(options, dims);
    const sinksArray = arrays.get('--sinks');
    const slopesArray = arrays.get('--alibi-slopes');
    const sinks = sinksArray && sinksPath !== undefined ? perHeadValues(sinksArray, '--sinks', inputName('', sinksPath).trim(), dims, notes) : undefined;
    const alibiSlopes = slopesArray && slopesPath !== undefined ? perHeadValues(slopesArray, '--alibi-slopes', inputName('', slopesPath).trim(), dims, notes) : undefined;
    const modBuffers = Object.fromEntries(mods.buffers.map(({ name, path }) => [name, modBufferOf(arrays.get(`--mod-buffer ${name}`) as NpyArray, name, path)]));
    const env: RunEnv = await makeEnv({ gpu: impl !== 'cpu-fp32', threads: 1 });
    const dtype = q.data instanceof Uint16Array ? ('f16' as const) : ('f32' as const);
    const gpuMissing = impl === 'cpu-fp32' ? 'it is --impl cpu-fp32' : (env.gpuUnavailableReason ?? 'no GPU');
    const modded = await modOptions(mods, modBuffers, impl === 'cpu-fp32' ? undefined : env.gpu, gpuMissing, dtype);
    const full: SdpaOptions = { ...options, ...(mask ? { mask } : {}), ...(sinks ? { sinks } : {}), ...(alibiSlopes ? { alibiSlopes } : {}), ...modded };
    const kernel = impl === undefined || impl === 'cpu-fp32' ? undefined : impl;
    const returnLse = lsePath !== undefined;
    // The problem validated and its kernel planned once, here: attention() then runs that plan as it is.
    const gpu = impl === 'cpu-fp32' ? undefined : env.gpu;
    const planned = gpu ? inputError(() => planAttention(gpu, dims, { ...full, dtype, lse: returnLse, ...(kernel ? { kernel } : {}) })) : undefined;
    const declined = typeof planned === 'string' ? planned : undefined;
    if (kernel !== undefined && typeof planned !== 'object') {
      throw new UsageError(`${kernel} cannot run this problem here: ${declined ?? env.gpuUnavailableReason ?? 'no GPU'}; use --impl cpu-fp32 or leave --impl out`);
    }
    if (impl === 'cpu-fp32') refuseCpuOverflow(q, k, v, dims, full, dtype);
    if (declined !== undefined) notes.push(`the GPU kernel cannot run this problem here (${declined}); computed on the CPU`);
    const result = await inputError(() => (typeof planned === 'object' ? attention(q, k, v, { plan: planned }) : attention(q, k, v, { ...full, returnLse })));
    checkFiniteResult(result);
    if (result.note !== undefined) notes.push(result.note);
    for (const note of notes) out.info(`hw4-cli: note: ${note}`);
    const contents = [[encodeNpy(result.out.shape, result.out.data)], ...(lsePath === undefined ? [] : [[encodeNpy([dims.B, dims.Hq, dims.Lq], result.lse ?? new Float32Array(0))]])];
    await group.commit(contents, checkParentAlive);
    const summary = { impl: result.impl, dims, dtype: result.out.data instanceof Uint16Array ? 'f16' : 'f32', notes };
    const where = (path: string): string => (path === STDIO_PATH ? 'standard output' : path);
    if (out.json) out.result(summary);
    else out.info(`wrote ${where(outPath)}${lsePath === undefined ? '' : ` and the log-sum-exps to ${where(lsePath)}`}: [${result.out.shape.join(', ')}] ${summary.dtype}, computed by ${result.impl}`);
    return EXIT.ok;
  } catch (error) {
    await group.abort();
    throw error;
  }
}

function implOf(text: string | undefined): SdpaImpl | undefined {
  if (text === undefined) return undefined;
  if (!(SDPA_IMPLS as readonly string[]).includes(text)) throw new UsageError(`unknown implementation "${text}"; choose one of ${SDPA_IMPLS.join(', ')} (see sdpa --list)`);
  return text as SdpaImpl;
}

/** Standard input read for one input at most; standard output written once, and not beside --json. */
function refuseStdioMixes(inputs: readonly NamedPath[], outputs: readonly NamedPath[], json: boolean): void {
  const stdin = inputs.filter((i) => i.path === STDIO_PATH);
  if (stdin.length > 1) {
    throw new UsageError(`${stdin.map((i) => i.role).join(' and ')} are ${stdin.length === 2 ? 'both' : 'all'} - (standard input), which holds one file; give at most one of them as -`);
  }
  const stdout = outputs.filter((o) => o.path === STDIO_PATH);
  if (stdout.length > 1) throw new UsageError('OUTPUT - and --lse - would both go to standard output, one file after the other; write one of them to a file');
  const [first] = stdout;
  if (first && json) throw new UsageError(`${first.role === 'OUTPUT' ? 'OUTPUT -' : '--lse -'} and --json both write to standard output; drop one of them, or write the array to a file`);
}

/**
 * OUTPUT from finite inputs is finite, and the log-sum-exps never NaN or +∞ (−∞ is a row that sees no key): the
 * library computes values on which float32 could overflow in float64, or refuses them. Checked here all the same, so
 * that a fault never reaches a file with exit 0.
 */
function checkFiniteResult(result: AttentionResult): void {
  const bad = firstNonFinite(result.out.data);
  const lseBad = result.lse ? result.lse.findIndex((x) => Number.isNaN(x) || x === Number.POSITIVE_INFINITY) : -1;
  if (bad < 0 && lseBad < 0) return;
  const where = bad >= 0 ? `OUTPUT at flat index ${bad}` : `the log-sum-exps at flat index ${lseBad}`;
  throw new ExitError(`${result.impl} produced a non-finite value in ${where} from finite inputs; no output was written (a bug: please report it with the inputs)`, EXIT.failure);
}

/** The first index of a NaN or ±∞ in float32 values or f16 bits (exponent all ones), or −1. */
function firstNonFinite(data: Float32Array | Uint16Array): number {
  if (data instanceof Float32Array) return data.findIndex((x) => !Number.isFinite(x));
  return data.findIndex((bits) => (bits & 0x7c00) === 0x7c00);
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

/**
 * The library's argument errors as exit 3 (the input does not fit), except a named implementation's overflow refusal:
 * like a named hw4 rung that cannot meet its input, it is exit 2 (log-sum-exps beyond float32 stay exit 3).
 */
function asInputError(error: unknown): unknown {
  if (error instanceof SdpaOverflowError && error.impl !== undefined) return new UsageError(`${error.message}; no output was written`);
  return error instanceof SdpaArgumentError ? new ExitError(`${error.message}; no output was written`, EXIT.invalidInput) : error;
}

/** `--impl cpu-fp32` on values where its float32 could overflow: refused (the default computes them in float64). */
function refuseCpuOverflow(q: SdpaTensor, k: SdpaTensor, v: SdpaTensor, dims: SdpaDims, options: SdpaOptions, dtype: 'f32' | 'f16'): void {
  const reason = float32OverflowReason('cpu-fp32', tensorRange(q.data, k.data, v.data, dims.d, valueHeadSize(dims)), sdpaProblem(dims, options), dtype);
  if (reason !== undefined) throw asInputError(new SdpaOverflowError('cpu-fp32', reason));
}
