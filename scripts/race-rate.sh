#!/usr/bin/env bash
# Measures how often the article's failover race is found: N seeded runs of
# the unfenced native client under kill-primary (Sentinel by default), each
# up to DURATION and stopped at its first violation, and how many found a
# double holder, with the time from the first kill-primary window's start
# to the first double holder. Usage:
#   scripts/race-rate.sh [BIN] [N] [DURATION] [SERVER] [TOPOLOGY]
set -uo pipefail
bin=${1:-bin/lockcheck}
n=${2:-20}
duration=${3:-60s}
server=${4:-valkey-9.1}
topo=${5:-sentinel}
out=${OUT:-out/race-rate}
rm -rf "$out"
"$bin" run --server "$server" --topology "$topo" --client native --fault kill-primary \
  --duration "$duration" --seed 1 --repeat "$n" --stop-on-violation --out "$out" >"$out.txt" 2>"$out.err"
/usr/bin/python3 - "$out" "$n" "$server" "$topo" "$duration" <<'PY'
import json, statistics, sys
out, n, server, topo, duration = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
found, times = 0, []
for seed in range(1, n + 1):
    try:
        r = json.load(open(f"{out}/seed-{seed}/result.json"))
        h = json.load(open(f"{out}/seed-{seed}/history.json"))
    except OSError:
        print(f"seed {seed}: no result"); continue
    dh = r["checks"]["double_holder"]
    kills = [f["start"] for f in h.get("faults", []) if f["name"] == "kill-primary"]
    first = min((f["start"] for f in dh.get("findings", [])), default=None)
    if dh["count"] > 0 and first is not None and kills:
        found += 1
        times.append((first - min(kills)) / 1e9)
        print(f"seed {seed}: double holder {times[-1]:.1f} s after the kill-primary window opened")
    else:
        print(f"seed {seed}: no double holder in {r['duration_ms'] / 1000:.0f} s")
med = f", median {statistics.median(times):.1f} s to the first" if times else ""
print(f"{found} of {n} runs found a double holder ({server} {topo}, native, kill-primary, up to {duration} each){med}")
PY
