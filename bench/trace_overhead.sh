#!/usr/bin/env bash
# Cost of tracing when it is off: events/s of BM_KernelCloth/100 in bench_avi (the
# kernel as shipped, trace off) vs bench_avi_no_trace (the same sources compiled with
# CLOCKWORK_NO_TRACE, which removes every trace statement from the kernel).
# Runs the two programs alternately, `rounds` times each, and prints the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
filter='BM_KernelCloth/100$'
# bench_avi_no_trace is built on request only.
cmake -S . -B "$build" -DCLOCKWORK_BENCH_NO_TRACE=ON >/dev/null
cmake --build "$build" --target bench_avi bench_avi_no_trace -j "$(nproc)"
run() {
  "$build/bench/$1" --benchmark_filter="$filter" --benchmark_format=json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["items_per_second"])'
}
on=(); off=()
for _ in $(seq "$rounds"); do
  on+=("$(run bench_avi)")
  off+=("$(run bench_avi_no_trace)")
done
python3 - "${on[*]}" "${off[*]}" <<'PY'
import statistics, sys
shipped = [float(x) for x in sys.argv[1].split()]
bare = [float(x) for x in sys.argv[2].split()]
m1, m0 = statistics.median(shipped), statistics.median(bare)
print(f"trace compiled in, off: median {m1/1e6:.3f} M events/s  (runs: {[round(x/1e6,3) for x in shipped]})")
print(f"trace compiled out:     median {m0/1e6:.3f} M events/s  (runs: {[round(x/1e6,3) for x in bare]})")
print(f"cost of tracing when off: {100*(m0-m1)/m0:+.2f}%")
PY
