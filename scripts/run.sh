#!/usr/bin/env bash
# The main job: lockcheck matrix with its defaults into OUT/matrix. That is
# the newest available Valkey build on sentinel and cluster, the unfenced
# native client and the fenced one, under kill-primary and clock-jump: 8
# runs of at least 30 s (TTL 15 s, one fault step each, a run going on
# until a lease after its fault step), each on a fresh topology, two at a
# time; a run ends at its first violation (its verdict is then known), so
# the native client's runs end early. The last line says whether each
# cell showed what it is expected to show (as expected N of 8).
# On a fresh machine the matrix first builds that build's image (one
# debootstrap, about a minute and a half); the other images are make
# images'.
#
# Usage: scripts/run.sh [BIN] [OUT]    (make run: bin/lockcheck out)
#
# Exit code: 0 when the matrix ran, whatever its verdicts: the native
# client's double holders under failover are the expected findings, shown
# in OUT/matrix/index.html, not a failure. Non-zero when the matrix could
# not run or did not finish (no Valkey image, a topology that did not
# start, Ctrl-C: 2), and 1 when a fenced client let a stale write through,
# the one outcome a correct fenced client never has.
set -uo pipefail
bin=${1:-bin/lockcheck}
out=${2:-out}
dir="$out/matrix"
if [ ! -x "$bin" ]; then
  echo "run.sh: $bin is not built: make build" >&2
  exit 2
fi
"$bin" matrix --parallel 2 --stop-on-violation --out "$dir"
rc=$?
if [ -f "$dir/index.html" ]; then
  echo "index: $dir/index.html (file://$(cd "$dir" && pwd)/index.html)"
else
  echo "run.sh: the matrix wrote no index (exit code $rc)" >&2
fi
exit "$rc"
