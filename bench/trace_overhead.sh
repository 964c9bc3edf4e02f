#!/usr/bin/env bash
# Cost of the kernel's observer hook (engine/kernel_observer.hpp) when nothing
# observes: events/s of BM_KernelCloth/100 in a bench_avi built before the hook (the
# first argument: its kernel had trace statements under #ifndef CLOCKWORK_NO_TRACE)
# and in this build's bench_avi, no observer attached; also this build's
# BM_KernelClothCounted/100 (event counts observing) and BM_KernelClothTraced/100
# (the trace to /dev/null). Alternates the programs `rounds` times; prints medians.
#   bash bench/trace_overhead.sh /path/to/old/bench_avi [build] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: trace_overhead.sh OLD_BENCH_AVI [build] [rounds]}
build=${2:-build}
rounds=${3:-5}
run() {
  "$1" --benchmark_filter="$2" --benchmark_format=json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["items_per_second"])'
}
old=(); new=(); counted=(); traced=()
for _ in $(seq "$rounds"); do
  old+=("$(run "$before" 'BM_KernelCloth/100$')")
  new+=("$(run "$build/bench/bench_avi" 'BM_KernelCloth/100$')")
  counted+=("$(run "$build/bench/bench_avi" 'BM_KernelClothCounted/100$')")
  traced+=("$(run "$build/bench/bench_avi" 'BM_KernelClothTraced/100$')")
done
python3 - "${old[*]}" "${new[*]}" "${counted[*]}" "${traced[*]}" <<'PY'
import statistics, sys
runs = [[float(x) for x in a.split()] for a in sys.argv[1:]]
m = [statistics.median(r) for r in runs]
for name, r, med in zip(("before the hook", "no observer", "event counts", "trace"), runs, m):
    print(f"{name:16s} median {med/1e6:.3f} M events/s  (runs: {[round(x/1e6,3) for x in r]})")
print(f"cost of the hook with no observer: {100*(m[0]-m[1])/m[0]:+.2f}%")
PY
