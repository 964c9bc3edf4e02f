#!/usr/bin/env bash
# Regenerates the test fixture tests/io/data/bunny.node and bunny.ele: the Stanford
# bunny of the npm package `bunny` 1.0.1 (1839 vertices, 3674 triangles, closed),
# scaled to 0.2 m tall, tetrahedralised by TetGen.
# Made with: Debian's tetgen 1.5.0-5 (TetGen 1.5.0), node v20.20.2, npm 11.19.1:
#   tetgen -pYq1.4a1e-6 bunny.smesh
# -p: tetrahedralise the surface (a piecewise linear complex); -Y: keep its triangles
# as they are (without it, the quality bound splits the surface and gives ~11k
# vertices); -q1.4: radius-edge ratio <= 1.4 inside; -a1e-6: tets of at most 1 cm³.
# Result: 2616 vertices, 10170 tets. TetGen is deterministic: rerunning reproduces the
# files byte for byte. Needs: apt-get install -y tetgen nodejs npm.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/io/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent bunny@1.0.1 >/dev/null && tar xzf bunny-1.0.1.tgz)
node scripts/bunny_to_smesh.js "$work/package" "$work/bunny.smesh"
(cd "$work" && tetgen -Q -pYq1.4a1e-6 bunny.smesh)
cp "$work/bunny.1.node" "$out/bunny.node"
cp "$work/bunny.1.ele" "$out/bunny.ele"
head -1 "$out/bunny.node" "$out/bunny.ele"
