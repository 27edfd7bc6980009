# CI's stages, sourced by .ci/run: `stage NAME BUDGET` starts a stage (ending the one before) with its budget in
# seconds (docs/ci.md), and `report`, run on exit, prints each stage's seconds against its budget, the total against
# CI's 20 minutes and the machine's load at the start and the end (uptime), then exits with the script's exit code.
# A stage over its budget is flagged, not failed: the machine may be shared.
start=$SECONDS
load_at_start=$(uptime | sed 's/.*load average/load average/')
summary=()
current=''
current_budget=0
current_start=0
finish_stage() {
  [ -n "$current" ] || return 0
  local took=$((SECONDS - current_start)) flag=''
  [ "$took" -le "$current_budget" ] || flag='  over budget'
  [ "${1:-0}" = 0 ] || flag="$flag  failed (exit $1)"
  summary+=("$(printf '%6ss %6ss  %s%s' "$took" "$current_budget" "$current" "$flag")")
  current=''
}
# stage NAME BUDGET: starts a stage (ending the one before), with its budget in seconds.
stage() {
  finish_stage
  current=$1
  current_budget=$2
  current_start=$SECONDS
  printf '\n== %s (at %ss; budget %ss)\n' "$1" "$((SECONDS - start))" "$2"
}
# report [CODE]: the table; exits with CODE (default: the status the script is exiting with).
report() {
  local code=${1:-$?}
  finish_stage "$code"
  printf '\n== stages: seconds, budget (docs/ci.md)\n'
  printf '%s\n' "${summary[@]}"
  printf '%6ss %6ss  in all\n' "$((SECONDS - start))" 1200
  printf 'at the start: %s\nat the end:   %s\n' "$load_at_start" "$(uptime | sed 's/.*load average/load average/')"
  exit "$code"
}

