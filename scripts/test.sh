#!/usr/bin/env bash
# The tests of make test, after go vet, in two lanes that start together:
#
#   - the packages, one at a time (-p 1: the topology suite and the Go
#     tests time failovers, and two of them at once would skew each other);
#   - beside them, one after the other, the suites whose verdicts do not
#     hang on the machine's speed: the quick slice of the safety suite
#     (its specs drive their interleavings themselves; the flake budget
#     runs it with a core busy and a make test beside it), the upgrade
#     suite (each step's state held 2 s, two leases of the 1 s TTL; what
#     it asserts comes from the plan and the servers' versions) and the
#     compat suite (each reply it waits for ends its wait at once, and
#     every wait is bounded long enough for a loaded machine) and the
#     example library's gates (they pass on the fence and the checks, and
#     end once covered, bounded by their duration).
#
# So never more than two test binaries run at once, as before. Each
# side suite's output goes to OUT/NAME.log and is printed when the lane
# ends.
#
# Usage: scripts/test.sh [GO] [OUT]    (make test: go out)
#
# Exit code: 0 when every lane passed, else the first failure's code;
# 130 when interrupted (Ctrl-C: see the trap below).
set -uo pipefail
# beside is the side lane: NAME PACKAGE [FLAGS...], run in this order.
beside=(
  "safety-quick ./suites/safety -ginkgo.label-filter=quick"
  "upgrade ./suites/upgrade"
  "compat ./suites/compat"
  "fencedlock ./examples/fencedlock"
)
gobin=${1:-go}
out=$(realpath -m "${2:-out}")
mkdir -p "$out"
# the example library's locktest fails rather than skips without Docker
export LOCKTEST_REQUIRE=1 LOCKTEST_OUT="$out/locktest"
t0=$(date +%s)
# names are the side suites' names; skip keeps their packages out of the
# packages lane. Logs of an earlier run go first, so that an interrupted
# run prints only what it ran.
names=() skip=()
for s in "${beside[@]}"; do
  set -- $s
  names+=("$1")
  skip+=(-e "${2#.}\$")
  rm -f "$out/$1.log"
done

# side runs the side lane: each suite in turn, its output in OUT/NAME.log
# and its time and exit code in OUT/side.txt; the lane's code is the
# first failure's. On SIGTERM (sent below when make test is interrupted)
# it starts no further suite.
side() {
  local code=0 s t rc stop=0
  trap 'stop=1' TERM
  : >"$out/side.txt"
  for s in "${beside[@]}"; do
    if [ "$stop" = 1 ]; then break; fi
    set -- $s
    t=$(date +%s)
    "$gobin" test -count=1 -timeout 30m "${@:2}" >"$out/$1.log" 2>&1
    rc=$?
    echo "$1: exit $rc, $(($(date +%s) - t)) s" >>"$out/side.txt"
    if [ "$code" -eq 0 ]; then code=$rc; fi
  done
  return "$code"
}

# finish waits for a lane's process and sets rc to its exit code; a
# trapped signal ends a wait early, so it waits again while the process
# lives.
finish() {
  wait "$1"; rc=$?
  while [ "$rc" -gt 128 ] && kill -0 "$1" 2>/dev/null; do wait "$1"; rc=$?; done
}

# Ctrl-C reaches every test binary of both lanes (one process group; a
# test binary handles SIGINT although a background job starts with it
# ignored), and each removes what it started. The script then only keeps
# each lane from starting its next package or suite, and waits for both.
interrupted=0 lane= packages=
trap 'interrupted=1; for p in $lane $packages; do kill -TERM "$p" 2>/dev/null; done' INT TERM

# package_lane is the packages lane: every package but the side lane's suites.
# Their test binaries are built first, two at a time, before anything
# timing-sensitive runs (go test -p 1 would link each one between two
# packages' runs); then each runs in its package's folder, one at a time,
# its output shown when it failed, as go test shows it.
package_lane() {
  local bindir="$out/testbin" code=0 rc t path dir bin stop=0
  trap 'stop=1' TERM
  rm -rf "$bindir"
  mkdir -p "$bindir"
  "$gobin" list -f '{{.ImportPath}} {{.Dir}}' ./... | grep -v "${skip[@]}" >"$bindir/packages.txt"
  cut -d' ' -f1 "$bindir/packages.txt" |
    xargs -P 2 -I{} sh -c '"$1" test -c -o "$2/$(echo "$3" | tr / _).test" "$3"' _ "$gobin" "$bindir" {} || return $?
  while read -r path dir; do
    if [ "$stop" = 1 ]; then break; fi
    bin="$bindir/$(echo "$path" | tr / _).test"
    if [ ! -x "$bin" ]; then
      echo "?   	$path	[no test files]"
      continue
    fi
    t=$(date +%s%N)
    (cd "$dir" && "$bin" -test.count=1 -test.timeout=60m >"$bindir/out.txt" 2>&1)
    rc=$?
    t=$(( ($(date +%s%N) - t) / 1000000 ))
    if [ "$rc" -eq 0 ]; then
      printf 'ok  \t%s\t%d.%03ds\n' "$path" $((t / 1000)) $((t % 1000))
    else
      cat "$bindir/out.txt"
      printf 'FAIL\t%s\t%d.%03ds\n' "$path" $((t / 1000)) $((t % 1000))
      [ "$code" -eq 0 ] && code=$rc
    fi
  done <"$bindir/packages.txt"
  return "$code"
}

side &
lane=$!
package_lane &
packages=$!
finish "$packages"; rest=$rc
echo "--- the packages above took $(($(date +%s) - t0)) s"
finish "$lane"; sidecode=$rc
for n in "${names[@]}"; do
  echo "--- beside the packages: $n ($out/$n.log)"
  cat "$out/$n.log" 2>/dev/null
done
cat "$out/side.txt"
echo "--- make test's packages took $(($(date +%s) - t0)) s in all"
if [ "$interrupted" = 1 ]; then exit 130; fi
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
exit "$sidecode"
