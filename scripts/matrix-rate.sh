#!/usr/bin/env bash
# The default matrix over 20 seeds with one core kept busy beside it (a
# `yes > /dev/null` loop, as the flake budget does): for each of its eight
# cells, how often it showed its expected outcome (VIOLATED without a
# fence, double holder stopped by fence with one), the median time from
# the fault's start to the double holder and the median run length. The
# table goes into OUT/matrix-rate/matrix-rate.md, the README and
# docs/matrix.md. A measurement for the docs, not a test (about 75
# minutes: 20 matrices of about 3.5 minutes, two runs at a time).
#
# Usage: scripts/matrix-rate.sh [BIN] [OUT] [SEEDS]    (make matrix-rate)
set -uo pipefail
bin=${1:-bin/lockcheck}
out=${2:-out}/matrix-rate
seeds=${3:-20}
if [ ! -x "$bin" ]; then
  echo "matrix-rate.sh: $bin is not built: make build" >&2
  exit 2
fi
rm -rf "$out"
yes > /dev/null &
busy=$!
trap 'kill $busy 2>/dev/null' EXIT
"$bin" matrix --parallel 2 --stop-on-violation --repeat "$seeds" --seed 1 --out "$out" \
  --note "one core kept busy by a yes loop" --into README.md,docs/matrix.md
