#!/usr/bin/env bash
# CI: the project under Node 24 (active LTS, the version it is developed for) and Node 22, beside the Node that ran the
# stages before (20.19+ on the CI image). Installs the official Node binaries from the npm registry (the
# node-linux-<arch> packages) into a temporary folder, then under each: the end-to-end checks (--list, gen, a CPU rung
# and a GPU rung on a small input, check) and a fast subset of the tests. Expects a built workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=$(node -p process.arch)
for major in ${FA_NODE_MAJORS:-24 22}; do
  t0=$SECONDS
  npm install --prefix "$tmp/node$major" --no-save --no-audit --no-fund --loglevel=error "node-linux-$arch@$major" >/dev/null
  NODE="$tmp/node$major/node_modules/node-linux-$arch/bin/node"
  printf -- '-- Node %s\n' "$("$NODE" --version)"
  cli=("$NODE" apps/hw4-cli/bin/hw4-cli.js)
  work="$tmp/e2e$major"
  mkdir -p "$work"
  "${cli[@]}" --list
  "${cli[@]}" gen --shape 2,64,32 --seed 5 "$work/in.bin"
  "${cli[@]}" --impl seq-flash -q "$work/in.bin" "$work/cpu.out"
  "${cli[@]}" check -q "$work/in.bin" "$work/cpu.out"
  # A GPU rung where a GPU adapter is present (CI has lavapipe at least); FA_REQUIRE_GPU=1 makes its absence an error.
  if "${cli[@]}" --list --json | "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.exit(JSON.parse(s).rungs.some(r=>r.id==="vec4"&&r.available)?0:1))'; then
    "${cli[@]}" --impl vec4 -q "$work/in.bin" "$work/gpu.out"
    "${cli[@]}" check -q "$work/in.bin" "$work/gpu.out"
  elif [ "${FA_REQUIRE_GPU:-}" = 1 ]; then
    echo "no GPU adapter under Node $major, and FA_REQUIRE_GPU=1 requires one" >&2
    exit 1
  else
    echo "no GPU adapter: the GPU rung is skipped"
  fi
  "$NODE" node_modules/vitest/vitest.mjs run packages/io apps/hw4-cli/test/cli.test.ts
  printf -- '-- Node %s: %ss\n' "$major" "$((SECONDS - t0))"
done
