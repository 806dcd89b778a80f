#!/usr/bin/env bash
# The main job: probe the newest available Valkey build in every topology.
set -euo pipefail
bin=${1:-bin/lockcheck}
out=${2:-out}
mkdir -p "$out"
server=$("$bin" images | awk '$1 ~ /^valkey-/ && $NF == "present" {s=$1} END {print s}')
if [ -z "$server" ]; then
  echo "lockcheck run: no Valkey image is present: make images" >&2
  exit 2
fi
for topo in standalone replicated sentinel cluster; do
  "$bin" probe --server "$server" --topology "$topo" --json > "$out/probe-$server-$topo.json"
  echo "probe $server $topo: $(grep -o '"startup_ms": [0-9]*' "$out/probe-$server-$topo.json")"
done
echo "probe results in $out/"
