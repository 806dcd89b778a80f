#!/usr/bin/env bash
# Measures how often the article's failover race is found: N seeded runs of
# the unfenced native client under kill-primary on Sentinel, each DURATION
# long, and how many found a double holder. Usage:
#   scripts/race-rate.sh [BIN] [N] [DURATION] [SERVER] [TOPOLOGY]
set -uo pipefail
bin=${1:-bin/lockcheck}
n=${2:-20}
duration=${3:-60s}
server=${4:-valkey-9.1}
topo=${5:-sentinel}
out=${OUT:-out/race-rate}
mkdir -p "$out"
found=0
for seed in $(seq 1 "$n"); do
  "$bin" run --server "$server" --topology "$topo" --client native --fault kill-primary \
    --duration "$duration" --seed "$seed" --out "$out/seed-$seed" >"$out/seed-$seed.txt" 2>"$out/seed-$seed.err"
  code=$?
  dh=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checks"]["double_holder"]["count"])' "$out/seed-$seed/result.json" 2>/dev/null)
  if [ "${dh:-0}" -gt 0 ]; then found=$((found + 1)); fi
  echo "seed $seed: exit $code, double holders ${dh:-?}"
done
echo "$found of $n runs found a double holder ($server $topo, native, kill-primary, $duration each)"
