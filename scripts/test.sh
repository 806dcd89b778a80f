#!/usr/bin/env bash
# The tests of make test, after go vet: every package one at a time
# (-p 1: the suites time failovers, and two of them at once would skew
# each other), and beside them, from the start, the quick slice of the
# safety suite, the one suite whose specs drive their interleavings
# themselves and that the flake budget runs with a core busy and a
# make test beside it. Its output goes to OUT/safety-quick.log and is
# printed when it ends.
#
# Usage: scripts/test.sh [GO] [OUT]    (make test: go out)
#
# Exit code: 0 when both passed, else the first failure's code. Ctrl-C
# reaches both (one process group); each suite removes what it started.
set -uo pipefail
gobin=${1:-go}
out=$(realpath -m "${2:-out}")
mkdir -p "$out"
log="$out/safety-quick.log"
t0=$(date +%s)
"$gobin" test -count=1 -timeout 30m ./suites/safety -ginkgo.label-filter=quick >"$log" 2>&1 &
safety=$!
trap 'wait "$safety" 2>/dev/null; exit 130' INT TERM
LOCKTEST_REQUIRE=1 LOCKTEST_OUT="$out/locktest" \
  "$gobin" test -count=1 -p 1 -timeout 60m $("$gobin" list ./... | grep -v /suites/safety)
rest=$?
wait "$safety"
quick=$?
echo "--- the quick safety slice (beside the packages above; $log):"
cat "$log"
echo "--- make test's packages took $(($(date +%s) - t0)) s in all"
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
exit "$quick"
