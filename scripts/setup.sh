#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), builds in Release, then either runs
# the default demo (`demo`) or the whole test suite (`test`, also under ASan/UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}

packages=(build-essential cmake ninja-build libboost-dev libeigen3-dev libtbb-dev
          libspdlog-dev libfmt-dev doctest-dev nlohmann-json3-dev libcli11-dev libbenchmark-dev
          libstb-dev python3-matplotlib pybind11-dev python3-dev python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc)
# The test suite includes the Python module's tests; the module needs the libraries
# compiled position-independent (about 5 % slower contact), so a demo build leaves it out.
python=OFF
if [ "$mode" = test ]; then python=ON; fi
# The test build compiles everything in unity batches (CMAKE_UNITY_BUILD): the test
# executables (a quarter of their compile time) and the libraries (a third of theirs;
# every demo's frames and diagnostics are bit-identical to those of the build one file
# a unit, and the tool ran 2-8 % faster). The demo build keeps one file a unit, set
# again here because the cache keeps what a test build set.
unity=OFF
if [ "$mode" = test ]; then unity=ON; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLOCKWORK_PYTHON=$python \
      -DCLOCKWORK_UNITY_TESTS=$unity -DCMAKE_UNITY_BUILD=$unity >/dev/null
cmake --build build -j "$jobs"

case "$mode" in
  demo)
    build/demos/clockwork run demos/hats.json --out out/hats --overwrite
    # The browser viewer's three.js (docs/viewer.md); the demo does not need it.
    if command -v npm >/dev/null; then
      npm ci --prefix viewer --omit=dev --no-audit --no-fund >/dev/null || echo "npm ci failed: no browser viewer"
    else
      echo "npm not found: skipping the browser viewer's dependencies (docs/viewer.md)"
    fi
    ;;
  test)
    ctest --test-dir build --output-on-failure -j "$jobs"
    if [ "${CLOCKWORK_SKIP_SANITIZE:-0}" != 1 ]; then
      # -O1 without debug information: the sanitizers need neither -O2 nor -g, and the
      # second build is most of the CI budget (ASan reports still name the functions).
      # Everything in unity batches (CMAKE_UNITY_BUILD): 30 % less CPU for the libraries,
      # 75 % less for the tests; nothing of this build is measured or shipped.
      cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
            -DCLOCKWORK_SANITIZE=ON -DCLOCKWORK_BUILD_BENCH=OFF >/dev/null
      cmake --build build-sanitize -j "$jobs"
      # Whole-scene contact and phantom tests (label `slow`) ran above; under the
      # sanitizers they would take most of the CI budget (they are not built there).
      # The readers' fuzzer (label `fuzz`, tests/fuzz) runs here for 60 s (10 s above).
      ctest --test-dir build-sanitize --output-on-failure -j "$jobs" -LE slow
    fi
    ;;
  *)
    echo "usage: scripts/setup.sh [demo|test]" >&2
    exit 2
    ;;
esac
