#!/usr/bin/env bash
# Browser test of the viewer (docs/viewer.md): runs a tiny scene with the clockwork
# CLI, serves it with `clockwork view`, loads the viewer in headless Chromium (Debian
# package `chromium`, driven by playwright-core), advances the timeline, takes a
# screenshot and checks it is not blank. Needs `npm ci --prefix viewer` and a build.
#   bash viewer/test/run.sh [path/to/clockwork]
set -euo pipefail
cd "$(dirname "$0")/../.."
exe=${1:-build/demos/clockwork}
[ -x "$exe" ] || { echo "run.sh: no clockwork executable at $exe (build first)" >&2; exit 2; }
[ -d viewer/node_modules/playwright-core ] || { echo "run.sh: run 'npm ci --prefix viewer' first" >&2; exit 2; }
tmp=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"$exe" run demos/hanging_cloth.json --until 0.1 --out "$tmp/run" >/dev/null
"$exe" view "$tmp/run" --port 0 >"$tmp/view.log" 2>&1 &
server=$!
url=
for _ in $(seq 50); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/[^ ]*' "$tmp/view.log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "run.sh: clockwork view printed no URL:" >&2; cat "$tmp/view.log" >&2; exit 1; }
node viewer/test/browser_test.mjs "$url" "${SCREENSHOT:-$tmp/viewer.png}"
