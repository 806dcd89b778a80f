#!/usr/bin/env bash
# flake-budget.sh runs the quick safety slice RUNS times in a row with the
# ginkgo CLI and says how many runs passed and which specs failed in which
# run. With --load, a busy loop keeps one core busy the whole time, as
# another job on a shared CI runner would.
#
#   scripts/flake-budget.sh [--load] [RUNS]      (default 10)
set -uo pipefail
cd "$(dirname "$0")/.."
load=0
if [ "${1:-}" = "--load" ]; then load=1; shift; fi
runs=${1:-10}
export TESTCONTAINERS_RYUK_DISABLED=${TESTCONTAINERS_RYUK_DISABLED:-true}
out=$(realpath -m "${OUT:-out}/flake-budget")
mkdir -p "$out"
bin=$(mktemp -d)
burner=
if [ $load = 1 ]; then
  sh -c 'while :; do :; done' &
  burner=$!
fi
trap '[ -n "$burner" ] && kill $burner 2>/dev/null; rm -rf "$bin"' EXIT
trap 'exit 130' INT TERM
go run github.com/onsi/ginkgo/v2/ginkgo build -o "$bin" ./suites/safety >/dev/null || exit 2
passed=0
start=$(date +%s)
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if (cd suites/safety && "$bin/safety.test" -ginkgo.label-filter=quick -ginkgo.no-color) >"$out/run-$i.log" 2>&1; then
    passed=$((passed + 1)); verdict=pass
  else
    verdict=FAIL
  fi
  specs=$(grep -Eo 'Ran [0-9]+ of [0-9]+ Specs' "$out/run-$i.log" | head -1)
  echo "run $i of $runs: $verdict ($specs, $(( $(date +%s) - t0 )) s)"
  grep -E '^\s*\[FAIL\]' "$out/run-$i.log" | sed 's/^/    /'
done
echo "quick slice: $passed of $runs runs passed (load: $([ $load = 1 ] && echo 'one core busy' || echo none)), $(( ($(date +%s) - start) / 60 )) min; logs in $out"
[ "$passed" = "$runs" ]
