#!/usr/bin/env bash
# Explicit AVI against the phantom integrator on demos/stiff_cloth.json (issue:
# phantom mesh): simulated seconds per wall second of each, three runs, medians.
# Usage: bench/phantom_speedup.sh [build-dir]   (results in docs/performance.md)
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${1:-build}/demos/clockwork
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The explicit variant: same body without the phantom keys, 0.02 s (its periods are
# ~1e-6 s, so this is already 2e7 events).
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open("demos/stiff_cloth.json"))
b = d["bodies"][0]
b.pop("integrator"); b.pop("phantom")
d["end_time"] = 0.02
json.dump(d, open(sys.argv[1] + "/explicit.json", "w"))
PY
median() { sort -g | sed -n 2p; }
exp=$(for i in 1 2 3; do "$exe" run "$tmp/explicit.json" --out "$tmp/out" | awk '/^simulated/ {print 0.02 / $7}'; done | median)
imp=$(for i in 1 2 3; do "$exe" run demos/stiff_cloth.json --out "$tmp/out" | awk '/^simulated/ {print 0.5 / $7}'; done | median)
echo "explicit AVI: $exp simulated s per wall s"
echo "phantom:      $imp simulated s per wall s"
python3 -c "print('speedup: %.2fx' % ($imp / $exp))"
