#!/usr/bin/env bash
# The shrink figures: violated runs of the default matrix (the native
# client under kill-primary and clock-jump on Sentinel and the cluster)
# and of three mutants' scenarios, each shrunk by lockcheck shrink with its
# default budget, two at a time; the table in OUT/shrink/shrink.md. A
# measurement for the docs, not a test (up to about 45 minutes: each
# shrink ends within its 10-minute budget).
#
# Usage: scripts/shrink-figures.sh [BIN] [OUT]    (make shrink-figures)
set -uo pipefail
bin=${1:-bin/lockcheck}
out=${2:-out}/shrink
if [ ! -x "$bin" ]; then
  echo "shrink-figures.sh: $bin is not built: make build" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out"
"$bin" matrix --parallel 2 --stop-on-violation --clients native --out "$out/matrix" || true
runs=()
# A cell whose run came out safe (the race is a race) is replayed, the same
# seed and fault schedule, until a replay is violated (three tries).
for d in "$out"/matrix/*/; do
  d=${d%/}
  [ -f "$d/result.json" ] || continue
  if grep -q '"verdict": "violated"' "$d/result.json"; then
    runs+=("$d")
    continue
  fi
  for i in 1 2 3; do
    rm -rf "$d-violated"
    "$bin" replay --out "$d-violated" "$d" >/dev/null 2>&1
    [ $? -eq 1 ] && { runs+=("$d-violated"); break; }
  done
done
# Each mutant in the scenario that names it (the catch-rate's), seed 11;
# a seed whose run came out safe gives way to the next.
mutants=(
  "mutant-del --duration=12s --clients=4 --keys=1 --ttl=1s --work-min=50ms --work-max=300ms --stall-rate=0.5 --pause-rate=0.1"
  "mutant-reacquire --duration=15s --clients=6 --keys=24 --ttl=1s --work-min=4s --work-max=6s --stall-rate=1 --pause-rate=0.1"
  "mutant-shared-token --duration=12s --clients=12 --keys=3 --ttl=1s --work-min=1.5s --work-max=2s --stall-rate=1"
)
for m in "${mutants[@]}"; do
  name=${m%% *}
  for seed in 11 12 13; do
    rm -rf "$out/$name"
    # shellcheck disable=SC2086
    "$bin" run --server valkey-9.1 --client $m --seed "$seed" --stop-on-violation --out "$out/$name" >/dev/null
    [ $? -eq 1 ] && { runs+=("$out/$name"); break; }
  done
done
# two shrinks at a time, as the matrix runs two at a time
printf '%s\n' "${runs[@]}" |
  xargs -P 2 -I{} sh -c 'echo "--- shrink $2"; "$1" shrink "$2" >"$2.shrink.out" 2>"$2.shrink.log"' _ "$bin" {}
shrunk=()
for r in "${runs[@]}"; do
  [ -f "$r-shrunk/shrink.json" ] && shrunk+=("$r-shrunk")
done
"$bin" shrink --table "${shrunk[@]}" >"$out/shrink.md"
cat "$out/shrink.md"
