#!/usr/bin/env bash
# Cost of the per-vertex event counts (Kernel::enable_event_counts, docs/viewer.md):
# events/s of BM_KernelCloth/100 in a bench_avi built before the counts existed (the
# first argument), in this build's bench_avi with the counts off (BM_KernelCloth/100)
# and on (BM_KernelClothCounted/100), alternately, `rounds` times each; prints medians.
#   bash bench/event_counts_overhead.sh /path/to/old/bench_avi [build] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: event_counts_overhead.sh OLD_BENCH_AVI [build] [rounds]}
build=${2:-build}
rounds=${3:-5}
run() {
  "$1" --benchmark_filter="$2" --benchmark_format=json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["items_per_second"])'
}
old=(); off=(); on=()
for _ in $(seq "$rounds"); do
  old+=("$(run "$before" 'BM_KernelCloth/100$')")
  off+=("$(run "$build/bench/bench_avi" 'BM_KernelCloth/100$')")
  on+=("$(run "$build/bench/bench_avi" 'BM_KernelClothCounted/100$')")
done
python3 - "${old[*]}" "${off[*]}" "${on[*]}" <<'PY'
import statistics, sys
runs = [[float(x) for x in a.split()] for a in sys.argv[1:]]
m = [statistics.median(r) for r in runs]
for name, r, med in zip(("before (no counts)", "counts off", "counts on"), runs, m):
    print(f"{name:20s} median {med/1e6:.3f} M events/s  (runs: {[round(x/1e6,3) for x in r]})")
print(f"cost when off: {100*(m[0]-m[1])/m[0]:+.2f}%   cost when on: {100*(m[1]-m[2])/m[1]:+.2f}% (vs off)")
PY
