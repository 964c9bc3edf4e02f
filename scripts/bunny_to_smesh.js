// Writes the Stanford bunny of the npm package `bunny` (a module exporting
// {positions, cells}) as a TetGen .smesh, scaled to 0.2 m tall (y up) with its base at
// y = 0. The package's surface is already closed, 2-manifold and consistently
// oriented (1839 vertices, 3674 triangles, Euler characteristic 2, checked below), so
// no repair is needed; the script refuses one that is not.
// Usage: node bunny_to_smesh.js PACKAGE_DIR OUT.smesh
'use strict';
const fs = require('fs');
const path = require('path');
const [packageDir, out] = process.argv.slice(2);
const { positions, cells } = require(path.resolve(packageDir));

const edges = new Map();  // undirected edge -> [uses, sum of directions]
for (const c of cells) {
  if (c.length !== 3 || new Set(c).size !== 3) throw new Error(`bad triangle ${c}`);
  for (let k = 0; k < 3; ++k) {
    const a = c[k], b = c[(k + 1) % 3];
    const key = Math.min(a, b) + ',' + Math.max(a, b);
    const e = edges.get(key) || [0, 0];
    edges.set(key, [e[0] + 1, e[1] + (a < b ? 1 : -1)]);
  }
}
for (const [key, [uses, direction]] of edges)
  if (uses !== 2 || direction !== 0) throw new Error(`edge ${key} is not shared by two ` +
                                                     `consistently oriented triangles`);
const chi = positions.length - edges.size + cells.length;
if (chi !== 2) throw new Error(`Euler characteristic ${chi}, expected 2`);

let lo = Infinity, hi = -Infinity;
for (const p of positions) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); }
const s = 0.2 / (hi - lo);
const lines = [`# bunny@1.0.1 scaled by ${s} to 0.2 m tall (y up), base at y = 0`,
               `${positions.length} 3 0 0`];
positions.forEach((p, i) => lines.push(
    `${i} ${(p[0] * s).toPrecision(9)} ${((p[1] - lo) * s).toPrecision(9)} ` +
    `${(p[2] * s).toPrecision(9)}`));
lines.push(`${cells.length} 0`);
for (const c of cells) lines.push(`3 ${c[0]} ${c[1]} ${c[2]}`);
lines.push('0', '0');  // no holes, no regions
fs.writeFileSync(out, lines.join('\n') + '\n');
console.log(`${positions.length} vertices, ${cells.length} triangles, scale ${s}`);
