/**
 * hw4-cli's help: the overview (`hw4-cli --help`) and one page per command (`hw4-cli gen --help`). Each page lists
 * its command's options from the same table the parser uses, so no option goes missing from its help.
 */
import { DATA_KINDS } from '@fa/io/node';
import { IMPLEMENTATIONS } from '@fa/ladder';
import type { Options } from './args.js';
import { BENCH_OPTIONS, CHECK_OPTIONS, CONFORMANCE_OPTIONS, GEN_OPTIONS, LADDER_OPTIONS, LIST_OPTIONS, RUN_OPTIONS, SDPA_OPTIONS, SWEEP_OPTIONS } from './command-line.js';
import { DEFAULT_BENCH_SHAPES } from './commands/bench.js';
import { DEFAULT_LADDER_SHAPE } from './commands/ladder.js';
import { SWEEP_DEFAULTS, SWEEP_RUNGS } from './commands/sweep.js';
import { TILES_DEFAULT_SHAPE, TILES_RUNGS } from './commands/sweep-tiles.js';

/** Value name and description of each option, by long name. Options shared by several commands are described once. */
const OPTION_DOCS: Record<string, readonly [value: string, text: string]> = {
  impl: ['ID', `rung or product kernel to use: ${IMPLEMENTATIONS.map((r) => r.id).join(', ')} (default: the fastest proven one this GPU's bench measured for the shape, see --list)`],
  threads: ['N', 'worker threads for CPU rungs (default and maximum: the cores here)'],
  'chunk-mb': ['N', 'read the input in chunks of about N MiB of whole batches (default 64)'],
  'allow-non-finite': ['', 'accept NaN/Inf in the input: rows of O that depend on them are NaN, the rest is computed'],
  'allow-inaccurate': ['', 'run the --impl rung even where float32 may miss the 5e-3 tolerance on this input'],
  json: ['', 'print the result as JSON on stdout'],
  quiet: ['', 'nothing on stderr but errors (no report, notes or progress bar)'],
  shape: ['B,N,d', 'shape of the input'],
  kind: ['K', `data kind: ${DATA_KINDS.join(', ')} (default uniform)`],
  seed: ['S', 'seed, an integer (default 1): same seed, same bytes on every machine'],
  range: ['R', 'values in [-R, R], R at most 3.4e38 (each kind has its own default)'],
  expected: ['FILE', ''],
  tolerance: ['T', 'absolute tolerance per element (default 5e-3, the format\'s contract)'],
  rows: ['N', 'check only N sampled rows per batch against the oracle (the full oracle costs 4·N²·d flops per batch)'],
  shapes: ['LIST', `shapes as B,N,d separated by spaces (default: ${DEFAULT_BENCH_SHAPES})`],
  repeats: ['N', 'timed runs after one warm-up run (default 5); a run over half the budget is the only one (on a software GPU, whose first run may compile the kernel, the second)'],
  'budget-s': ['S', 'CPU rungs estimated over S seconds per run are skipped (default 40)'],
  out: ['DIR', 'where <adapter>.json, .md and .svg go (default docs/bench); cells merge into an existing file'],
  python: ['PATH', 'Python with CUDA PyTorch for the SDPA comparison (default python3, or FA_PYTHON)'],
  'no-torch': ['', 'skip PyTorch'],
  'torch-dtype': ['LIST', 'PyTorch SDPA precisions to time: fp32, fp16 or fp32,fp16 (default fp32)'],
  render: ['', 'only re-render .md and .svg from the JSON in --out'],
};

/** Descriptions that differ by command. */
const COMMAND_DOCS: Record<string, Record<string, readonly [string, string]>> = {
  gen: {
    shape: ['B,N,d', 'shape of the input (required)'],
    expected: ['FILE', 'also write the float64 oracle\'s output (slow for large shapes)'],
  },
  check: {
    expected: ['FILE', 'compare with a reference output instead of the oracle'],
    'allow-non-finite': ['', 'accept NaN/Inf in the input: the rows of O that depend on them must be NaN'],
  },
  ladder: { shape: ['B,N,d', `shape of the generated input (default ${DEFAULT_LADDER_SHAPE})`], impl: ['ID,ID,...', 'rungs to run (default: all)'] },
  conformance: { impl: ['ID,ID,...', 'rungs to check (default: all)'] },
  list: { shape: ['B,N,d', 'show the default rung for this shape (default: for each bench shape)'] },
  bench: { impl: ['ID,ID,...', 'rungs to time (default: all)'] },
  sweep: {
    over: ['n|batch|d|tiles', 'the dimension to vary: sequence length N, batch B or head size d; or tiles: a grid of each rung\'s tile sizes at one shape, as heat maps (required)'],
    values: ['N,N,...', `its values (defaults: n ${SWEEP_DEFAULTS.n.values.join(',')}; batch ${SWEEP_DEFAULTS.batch.values.join(',')}; d ${SWEEP_DEFAULTS.d.values.join(',')})`],
    grid: ['AXIS=V,..;AXIS=V,..', `tiles only: the values of the rungs' tile axes, e.g. "BR=16,32;BC=8,16" (defaults: each rung's own; the plan's choice is always added)`],
    base: ['B,N,d', `the fixed dimensions; the swept one is ignored, * or any number (defaults: n 4,*,64; batch *,1024,64; d 4,4096,*); tiles: the shape (default ${TILES_DEFAULT_SHAPE.B},${TILES_DEFAULT_SHAPE.N},${TILES_DEFAULT_SHAPE.d})`],
    impl: ['ID,ID,...', `rungs to time (default ${SWEEP_RUNGS}; tiles: ${TILES_RUNGS}, any of the rungs with tile axes)`],
    out: ['DIR', 'where <adapter>-<study>.json, .md and .svg go (default docs/scaling)'],
  },
  sdpa: {
    impl: ['ID', 'attention-fp32, attention-matrix or attention-decode (GPU kernels) or cpu-fp32 (default: attention-decode for up to 16 query rows per head; otherwise attention-matrix for f16 tensors where the GPU has subgroup matrices and the kernel takes the options, else attention-fp32; cpu-fp32 without a GPU); with --conformance: GPU kernels, comma-separated'],
    causal: ['', 'causal mask aligned bottom-right: query i sees key j iff j ≤ i + Lk − Lq (PyTorch\'s is_causal when Lq = Lk)'],
    window: ['L,R', 'sliding window: keys from i + Lk − Lq − L to i + Lk − Lq + R; −1 for unbounded (FlashAttention-2\'s window_size)'],
    mask: ['FILE.npy', 'bool (true = takes part) or float (added to the scores), broadcast to [B, Hq, Lq, Lk] as PyTorch broadcasts'],
    scale: ['S', 'multiplies q·k (default 1/√d)'],
    layout: ['bhsd|bshd', 'tensors are [B, H, L, d] (default, PyTorch\'s) or [B, L, H, d]'],
    'cache-lengths': ['N,N,...', 'K and V are caches of Lk rows of which batch b holds its first N_b (B integers, 0 to Lk); masks align to them'],
    softcap: ['C', 'logit softcapping (Gemma 2): each score s = scale·q·k becomes C·tanh(s/C), before ALiBi and the masks; C > 0'],
    sinks: ['S.npy', 'attention sinks (gpt-oss): float32 [Hq], one logit per query head counted once in each row\'s softmax denominator'],
    'alibi-slopes': ['A.npy', 'ALiBi: float32 [Hq], one slope per query head; score (i, j) loses slope·|i + Lk − Lq − j|, after the softcap'],
    'score-mod': ['F.wgsl', 'a score function: WGSL that defines fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32, applied first (see below)'],
    'mask-mod': ['F.wgsl', 'a mask function: WGSL that defines fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool; false excludes key k from row q'],
    'mod-buffer': ['NAME=F.npy', 'int32 or float32 of any shape, read by both functions as a flat array<i32> or array<f32> named NAME (repeatable)'],
    lse: ['FILE.npy', 'also write each row\'s log-sum-exp, float32 [B, Hq, Lq]'],
    list: ['', 'the implementations and whether each can run here (with --json: {"implementations": [{"id", "available", "reason"?}]})'],
    bench: ['', 'time model-shaped problems (GPT-2, Llama, Llama-3 GQA, BERT, chunked prefill, block-sparse) beside PyTorch'],
    conformance: ['', 'check the library\'s awkward cases on this GPU against float64 (exit 5 on an error over its limit); with --impl ID,ID,... on those kernels'],
    dtype: ['f32,f16', 'with --conformance: the tensor types to check (default both)'],
    cases: ['N,N,...', 'with --bench: the case numbers to time (default: all)'],
    ort: ['', 'with --bench: also time ONNX Runtime\'s WebGPU attention (onnxruntime-node, installed on first use into FA_ORT_DIR or hw4-cli\'s cache folder with npm)'],
    out: ['DIR', 'with --bench: also write the rows as DIR/sdpa-<adapter>.json (e.g. --out docs/bench), checked before anything is measured'],
  },
};

interface CommandHelp {
  usage: string;
  about: string;
  options: Options;
  /** The command's own exit-code list, where it differs from the program's (EXIT_CODE_HELP). */
  exitCodes?: string;
}

export const COMMANDS: Record<string, CommandHelp> = {
  run: {
    usage: 'hw4-cli [--impl ID] [options] INPUT OUTPUT',
    about:
      'compute OUTPUT from INPUT (the assignment\'s program). INPUT may be - (standard input), OUTPUT - (standard output).\n' +
      'Inputs with values so large that float32 cannot meet 5e-3 are computed with the float64 cpu rung (a note says so);\n' +
      'a float32 rung named with --impl stops with exit 2 on them instead, unless --allow-inaccurate.',
    options: RUN_OPTIONS,
  },
  list: {
    usage: 'hw4-cli --list [--json] [--shape B,N,d]',
    about:
      'rungs in ladder order, availability here and why not, the GPU adapter, and which rung a run without --impl would use and why.\n' +
      'With --json: {"rungs": [{"id", "index", "parent", "title", "delta", "kind", "requires", "available", "reason"?}], "choices", "adapter", …};\n' +
      'parent is the id of the rung a rung changes (null for rung 1): the ladder is a tree (docs/ladder.md).',
    options: LIST_OPTIONS,
  },
  ladder: { usage: 'hw4-cli ladder [options]', about: 'run every rung on one generated input, check each against the oracle, print the table', options: LADDER_OPTIONS },
  gen: { usage: 'hw4-cli gen --shape B,N,d [options] OUTPUT', about: 'write a deterministic input file (OUTPUT - writes to standard output)', options: GEN_OPTIONS },
  check: {
    usage: 'hw4-cli check INPUT OUTPUT [options]',
    about: 'compare OUTPUT with the float64 oracle computed from INPUT (or with --expected FILE); exit 5 when beyond tolerance',
    options: CHECK_OPTIONS,
  },
  conformance: {
    usage: 'hw4-cli conformance [options]',
    about: 'every rung on the awkward cases (N = 1, 77, 513, …) against the oracle; the table on stdout, exit 5 on a failure',
    options: CONFORMANCE_OPTIONS,
  },
  bench: { usage: 'hw4-cli bench [options]', about: 'rungs × shapes: kernel time, TFLOP/s, speedups, PyTorch SDPA (fp32, and fp16 with --torch-dtype) beside them', options: BENCH_OPTIONS },
  sweep: {
    usage: 'hw4-cli sweep --over n|batch|d|tiles [options]',
    about:
      'a scaling study: the rungs (and PyTorch\'s SDPA) at each value of one dimension, the others fixed, each checked\n' +
      'against the float64 oracle and timed as the bench does; a table, the fitted log-log slopes and a log-log chart.\n' +
      '--over tiles: each rung\'s kernel at a grid of its tile sizes at one shape, with the workgroup memory, invocations\n' +
      'and workgroups per compute unit of each cell (for an H100 SM on Hopper adapters; WebGPU does not report them).',
    options: SWEEP_OPTIONS,
  },
  sdpa: {
    usage:
      'hw4-cli sdpa Q.npy K.npy V.npy OUTPUT.npy [--causal] [--window L,R] [--mask M.npy] [--scale S] [--layout bhsd|bshd]\n' +
      '                    [--cache-lengths N,N,...] [--softcap C] [--sinks S.npy] [--alibi-slopes A.npy]\n' +
      '                    [--score-mod F.wgsl] [--mask-mod F.wgsl] [--mod-buffer NAME=F.npy ...]\n' +
      '                    [--lse LSE.npy] [--impl ID] [--json] [-q]\n' +
      '       hw4-cli sdpa --list [--json]   |   hw4-cli sdpa --bench [--cases N,N,...] [--ort] [--out DIR]   |   hw4-cli sdpa --conformance [--impl IDS] [--dtype f32,f16]',
    about:
      'attention as models call it: q [B, Hq, Lq, d], k [B, Hkv, Lk, d] and v [B, Hkv, Lk, dv] as NumPy .npy files (f32 or\n' +
      'f16, C order; float64 is converted to float32 with a note), Hq a multiple of Hkv (grouped heads). V\'s head size dv\n' +
      'may differ from d (d = 192, dv = 128 in DeepSeek\'s MLA): OUTPUT has q\'s shape with dv last, and q\'s dtype. The GPU\n' +
      'kernels take d and dv up to 256, multiples of 4 (attention-matrix: d = dv, multiples of 16, up to 256 for f16 and 128\n' +
      'for f32 tensors); others run on the CPU path.\n' +
      'A row that sees no key gives 0 (PyTorch gives NaN). Shapes that do not fit, a malformed file or NaN/Inf: exit 3.\n' +
      'Scores in order: scale·q·k, --score-mod, --softcap, --alibi-slopes, the additive mask, the exclusions (bool mask,\n' +
      '--causal, --window, --mask-mod), then the softmax with each query head\'s --sinks logit in its denominator (a row\n' +
      'that sees no key: 0, and its log-sum-exp is the sink). --sinks and --alibi-slopes that are not float32 [Hq] of\n' +
      'finite values: exit 2. Score and mask functions are WGSL compiled into the kernel (GPU only): b, h are the batch\n' +
      'and query head, q, k the row\'s and the key\'s positions in their own sequences, from 0; s is scale·q·k, natural\n' +
      'units; return a finite score, or -inf to exclude the key. Packed documents with doc_ids.npy (int32 [Lq]):\n' +
      '  fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return doc[q] == doc[k] && k <= q; }\n' +
      '  hw4-cli sdpa Q.npy K.npy V.npy O.npy --mask-mod docs.wgsl --mod-buffer doc=doc_ids.npy\n' +
      'A WGSL error is one line, FILE.wgsl:LINE:COL: message (exit 2).\n' +
      'Files: one of Q, K, V, --mask, --sinks and --alibi-slopes may be - (standard input); they are read one after the\n' +
      'other, in that order, and each (a file, a FIFO, a device) must hold exactly what its header says. OUTPUT or --lse\n' +
      'may be - (standard output), not both and not with --json. An output that is an input, or --lse that is OUTPUT, is\n' +
      'refused before anything is read. OUTPUT and --lse are written together: regular files go to temporary files first,\n' +
      'then standard output, FIFOs and devices are written, and only then are the temporary files renamed into place, so\n' +
      'a failed run replaces neither. --list, --bench and --conformance take only their own options.',
    options: SDPA_OPTIONS,
    exitCodes: `Exit codes
  0    success
  1    compute or GPU failure: a GPU error, or NaN/Inf in OUTPUT from finite inputs (a fault; nothing is written)
  2    usage: bad flag or value, --cache-lengths, --sinks or --alibi-slopes that do not match the tensors, a WGSL
       error in --score-mod or --mask-mod, a --mod-buffer not int32 or float32, functions without a GPU, an
       option of another mode (--dtype without --conformance), files with --list, - for two inputs, - with --json,
       an --impl that cannot run the problem here or whose float32 could overflow on these values (the default
       computes them in float64), --bench or --conformance without a GPU
  3    invalid input: a malformed or truncated .npy file, a stream longer than its header says, a dtype not taken,
       float16 mixed with float32, shapes that do not fit, NaN/Inf, log-sum-exps beyond float32
  4    file system: missing file or folder, an input or output that is a folder (or ends with /), OUTPUT or --lse
       that is an input, --lse that is OUTPUT, a read-only OUTPUT, failed write
  5    sdpa --conformance found an error over its limit
  129  hung up (SIGHUP)   130  interrupted (SIGINT, Ctrl-C)   143  terminated (SIGTERM)
  After 1-4 and 129-143 neither OUTPUT nor --lse was written or changed (standard output, devices and FIFOs are
  written as the data comes).`,
  },
};

/** The option lines of a command, one per option of its parser table. */
export function optionLines(command: string, options: Options): string[] {
  return Object.entries(options).map(([name, option]) => {
    const [value, text] = COMMAND_DOCS[command]?.[name] ?? OPTION_DOCS[name] ?? ['', ''];
    const flag = `${option.short ? `-${option.short}, ` : '    '}--${name}${option.type === 'string' ? ` ${value || 'VALUE'}` : ''}`;
    return `  ${flag.padEnd(24)} ${text}`.trimEnd();
  });
}

export const EXIT_CODE_HELP = `Exit codes
  0    success
  1    compute or GPU failure (a GPU error, a float32 overflow in a rung named with --impl --allow-inaccurate)
  2    usage: bad flag or value, unknown rung, bad --shape/--kind/--shapes, a rung that cannot run this shape
       or cannot meet the tolerance on this input
  3    invalid input: header, size, NaN/Inf
  4    file system: missing file or folder, INPUT or OUTPUT that is a folder (or ends with /), OUTPUT that is
       the input, failed write
  5    check found values beyond tolerance (also conformance, ladder, sdpa --conformance)
  129  hung up (SIGHUP)   130  interrupted (SIGINT, Ctrl-C)   143  terminated (SIGTERM)
  After 1-4 and 129-143 no output file was written or changed (standard output and devices are written as the
  data comes).`;

/** The help page of one command. */
export function commandHelp(command: string): string {
  const help = COMMANDS[command];
  if (!help) return HELP;
  return [`Usage: ${help.usage}`, '', help.about, '', 'Options', ...optionLines(command, help.options), '      --help               this help', '', help.exitCodes ?? EXIT_CODE_HELP, ''].join('\n');
}

export const HELP = `hw4-cli: FlashAttention forward pass, O = softmax(Q Kᵀ/√d) V per batch, on WebGPU or the CPU,
reading and writing the hw4 binary format.

Usage
  hw4-cli [--impl ID] [options] INPUT OUTPUT     compute OUTPUT from INPUT (the assignment's program)
  hw4-cli --list [--json] [--shape B,N,d]        rungs in ladder order, availability here, the GPU, and the
                                                 rung a run without --impl would use, and why
  hw4-cli ladder [--shape B,N,d] [--impl IDS]    run every rung on a generated input, check each, print the table
  hw4-cli gen --shape B,N,d [options] OUTPUT     write a deterministic input file
  hw4-cli check INPUT OUTPUT [--expected FILE]   compare OUTPUT with the float64 oracle (or FILE)
  hw4-cli conformance [--impl IDS] [--json]      every rung on the awkward cases, against the oracle
  hw4-cli bench [--shapes LIST] [--impl IDS]     rungs × shapes: kernel time, TFLOP/s, speedups, PyTorch beside
  hw4-cli sweep --over n|batch|d|tiles [--impl IDS]  how each rung's time grows with N, B, d or its tiles: tables, charts
  hw4-cli sdpa Q.npy K.npy V.npy OUT.npy [--causal] [--window L,R] [--mask M.npy] [--scale S] [--layout bshd]
                                                 attention with heads, grouped KV heads and masks (sdpa --help)
  hw4-cli COMMAND --help                         the options of one command
  hw4-cli --help | --version

Run options
${optionLines('run', RUN_OPTIONS).join('\n')}

Files
  INPUT   int32 B, N, d (little-endian), then for each batch Q, K, V: N·d float32 each, row-major; - reads
          standard input (checked as it streams: a short or long stream is an error at its end)
  OUTPUT  B·N·d float32, no header. A regular file is written to a temporary file and renamed into place only on
          success: a failed run never leaves a partial file or touches an existing one. A symbolic link is written
          through to its target; a read-only file is refused; - (standard output), devices and FIFOs are written
          directly.

${EXIT_CODE_HELP}

Environment
  FA_GPU=off   use no GPU (CPU rungs only)       FA_DEBUG=1   stack traces for internal errors, Dawn's own messages
  FA_STDERR_FILTER=always   filter Dawn's messages even where hw4-cli has found Dawn quiet (see README)
  FA_BOUNDS_CHECKS=1 (or --bounds-checks, any command)   keep Dawn's bounds checks on: every array index the shader
               compiler cannot prove in range is clamped, as browsers always do. Off by default in Node (our kernels,
               checked by the conformance suite, run 6-62% faster without them on an H100); turn them on to debug a kernel
  FA_DAWN_TOGGLES=a,b   more Dawn toggles, e.g. dump_shaders: each shader's WGSL and SPIR-V on standard output
               (scripts/kernel-registers.mjs reads it: registers per kernel, docs/kernel-registers.md)
  FA_SDPA_TUNING='{"matrixKeysPerTile":32}'   with sdpa --bench and sdpa --conformance: kernel sizes instead of the
               plans', for experiments (a JSON object of integers; a key it does not know is refused, with the list)
  FA_BENCH_ALLOCATIONS=N   with sdpa --bench: time each case on N sets of buffers in turn (1 to 100), each set's
               median in the record's allocationMs: does a time depend on where the tensors lie?
  FA_BENCH_WARM_MS=M   warm-up under load before each timed case, so the GPU's clock is up (default 500; 0: none):
               bench runs about M ms of the rung first; sdpa --bench M ms, then on while the GPU still gets faster
               (at most 3 s more)

Examples
  hw4-cli in.bin out.bin                          fastest rung available here
  hw4-cli --impl seq-flash in.bin out.bin         FlashAttention Algorithm 1 on one CPU thread
  hw4-cli gen --shape 4,1024,64 --seed 7 in.bin   a test input
  hw4-cli gen --shape 1,64,32 - | hw4-cli - - > out.bin    through pipes
  hw4-cli check in.bin out.bin                    is out.bin within 5e-3 of the exact answer?
  hw4-cli ladder --shape 2,256,64                 every rung on one input, with errors and speedups
  hw4-cli bench --shapes "4,4096,64" --impl naive,fused-split-q --no-torch
`;
