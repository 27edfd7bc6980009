#!/usr/bin/env bash
# CI: the packages as a consumer gets them. Packs every published package with pnpm pack (which turns workspace:*
# into versions), installs the tarballs with npm into a fresh project in a temporary folder outside the workspace,
# extracts each README's examples from the installed packages (scripts/readme-examples.mjs, which also checks links,
# install lines, LICENSE, engines and dependency ranges), type-checks the TypeScript examples with tsc under the
# settings @fa/core's README documents (and its two variants: no DOM lib with skipLibCheck, bundler resolution), and
# runs every example. Expects a built workspace. FA_REQUIRE_GPU=1: an example that finds no GPU is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PACKAGES=(packages/io packages/core packages/reference packages/naive packages/fused packages/optimized packages/tensor packages/ladder packages/sdpa apps/hw4-cli)
PNPM="npx --yes $(node -p "require('./package.json').packageManager")"
quiet=(--no-audit --no-fund --loglevel=error)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$SECONDS
step() { printf -- '-- %s (%ss)\n' "$1" "$((SECONDS - t0))"; }

step "pnpm pack"
# One pnpm process packs them all (3 s, against 27 s for a pnpm started per package).
names=()
filters=()
for dir in "${PACKAGES[@]}"; do
  filters+=(--filter "./$dir")
  names+=("$(node -p "require('./$dir/package.json').name")")
done
$PNPM -r "${filters[@]}" pack --pack-destination "$tmp/tarballs" >/dev/null
ls "$tmp/tarballs"

step "a fresh npm project installs the tarballs"
consumer="$tmp/consumer"
mkdir -p "$consumer"
cd "$consumer"
printf '{ "name": "fa-consumer", "private": true, "type": "module" }\n' > package.json
npm install "${quiet[@]}" "$tmp"/tarballs/*.tgz
typescript=$(node -p "require('$repo/package.json').devDependencies.typescript")
npm install "${quiet[@]}" --save-dev "typescript@$typescript" "@types/node@$(node -p 'process.versions.node.split(".")[0]')"

step "the READMEs' examples, links and package metadata"
node "$repo/scripts/readme-examples.mjs" . "${names[@]}" > examples.txt
cat examples.txt

step "tsc: the TypeScript examples under the documented settings"
cat tsconfig.documented.json
tsc() { node node_modules/typescript/bin/tsc "$@"; }
printf '{ "extends": "./tsconfig.documented.json", "compilerOptions": { "outDir": "out", "rootDir": "examples" }, "include": ["examples/*.ts"] }\n' > tsconfig.json
tsc -p tsconfig.json
printf '{ "extends": "./tsconfig.json", "compilerOptions": { "lib": ["es2022"], "skipLibCheck": true, "noEmit": true } }\n' > tsconfig.nodom.json
tsc -p tsconfig.nodom.json
printf '{ "extends": "./tsconfig.json", "compilerOptions": { "module": "esnext", "moduleResolution": "bundler", "noEmit": true } }\n' > tsconfig.bundler.json
tsc -p tsconfig.bundler.json

step "run every example"
while read -r kind file; do
  base=$(basename "$file")
  name=${base%.*}
  mkdir -p "run/$name"
  case $kind in
    ts) command=(node "$consumer/out/$name.js") ;;
    js) command=(node "$file") ;;
    sh) command=(bash -euo pipefail "$file") ;;
  esac
  started=$SECONDS
  if ! (cd "run/$name" && timeout 300 "${command[@]}") > "run/$name.log" 2>&1; then
    cat "run/$name.log"
    echo "example $base failed (the README of its package)" >&2
    exit 1
  fi
  printf -- '-- %s (%ss)\n' "$base" "$((SECONDS - started))"
  grep -v '^Warning: maxDynamic' "run/$name.log" || true
  if [ "${FA_REQUIRE_GPU:-}" = 1 ] && grep -qE 'cannot run here: (no GPU|Dawn|GPU disabled)' "run/$name.log"; then
    echo "example $base found no GPU, and FA_REQUIRE_GPU=1 requires one" >&2
    exit 1
  fi
done < examples.txt
step "done"
