import { DATA_KINDS } from '@fa/io';
import { LADDER } from '@fa/ladder';
import { DEFAULT_BENCH_SHAPES } from './commands/bench.js';
import { DEFAULT_LADDER_SHAPE } from './commands/ladder.js';

export const HELP = `hw4-cli: FlashAttention forward pass, O = softmax(Q Kᵀ/√d) V per batch, on WebGPU or the CPU,
reading and writing the hw4 binary format.

Usage
  hw4-cli [--impl ID] [options] INPUT OUTPUT     compute OUTPUT from INPUT (the assignment's program)
  hw4-cli --list [--json]                        rungs in ladder order, availability here, and the GPU
  hw4-cli ladder [--shape B,N,d] [--impl IDS]    run every rung on a generated input, check each, print the table
  hw4-cli gen --shape B,N,d [options] OUTPUT     write a deterministic input file
  hw4-cli check INPUT OUTPUT [--expected FILE]   compare OUTPUT with the float64 oracle (or FILE)
  hw4-cli conformance [--impl IDS]               every rung on the awkward cases, against the oracle
  hw4-cli bench [--shapes LIST] [--impl IDS]     rungs × shapes: kernel time, TFLOP/s, speedups, PyTorch beside
  hw4-cli --help | --version

Run options
  -i, --impl ID          rung to use: ${LADDER.map((r) => r.id).join(', ')}
                         (default: the highest rung on the ladder that can run the shape here)
      --threads N        worker threads for CPU rungs (default: every core)
      --chunk-mb N       read the input in chunks of about N MiB of whole batches (default 64)
      --allow-non-finite accept NaN/Inf in the input instead of rejecting it
      --json             print a JSON summary on stdout
  -q, --quiet            no timing report or progress bar on stderr

gen options
  -s, --shape B,N,d      shape of the input (required)
  -k, --kind K           ${DATA_KINDS.join(', ')} (default uniform)
      --seed S           seed, an integer (default 1): same seed, same bytes on every machine
      --range R          values in [-R, R] (each kind has its own default)
      --expected FILE    also write the float64 oracle's output (slow for large shapes)

check options
  -e, --expected FILE    compare with a reference output instead of the oracle
      --rows N           check only N sampled rows per batch against the oracle (for large N: the full oracle
                         costs 4·N²·d flops per batch on one CPU thread)
  -t, --tolerance T      absolute tolerance per element (default 5e-3, the format's contract)
      --json             print the comparison as JSON on stdout

ladder options
  -s, --shape B,N,d      (default ${DEFAULT_LADDER_SHAPE})  -k, --kind K  --seed S  --impl ID,ID,...  --json

bench options
  -s, --shapes LIST      shapes as B,N,d separated by spaces (default: ${DEFAULT_BENCH_SHAPES})
  -i, --impl ID,ID,...   rungs to time (default: all)
  -r, --repeats N        timed runs after one warm-up run (default 5); a run over half the budget is the only one
      --budget-s S       CPU rungs estimated over S seconds per run are skipped (default 40)
  -o, --out DIR          where <adapter>.json, .md and .svg go (default docs/bench); cells merge into an existing file
      --python PATH      Python with CUDA PyTorch for the fp32 SDPA comparison (default python3, or FA_PYTHON)
      --no-torch         skip PyTorch
      --render           only re-render .md and .svg from the JSON in --out

Files
  INPUT   int32 B, N, d (little-endian), then for each batch Q, K, V: N·d float32 each, row-major
  OUTPUT  B·N·d float32, no header. Written to a temporary file and renamed into place only on success:
          a failed run never leaves a partial file or touches an existing one.

Exit codes
  0 success   1 compute/GPU failure   2 usage (bad flag, unknown rung, unsupported shape)
  3 invalid input (header, size, NaN/Inf)   4 file system (missing file or folder, write failure)
  5 check found values beyond tolerance   130 interrupted

Environment
  FA_GPU=off   use no GPU (CPU rungs only)       FA_DEBUG=1   stack traces for internal errors

Examples
  hw4-cli in.bin out.bin                          fastest rung available here
  hw4-cli --impl seq-flash in.bin out.bin         FlashAttention Algorithm 1 on one CPU thread
  hw4-cli gen --shape 4,1024,64 --seed 7 in.bin   a test input
  hw4-cli check in.bin out.bin                    is out.bin within 5e-3 of the exact answer?
  hw4-cli ladder --shape 2,256,64                 every rung on one input, with errors and speedups
  hw4-cli bench --shapes "4,4096,64" --impl naive,fused-split-q --no-torch
`;
