#!/usr/bin/env python3
"""How tight a reef-knot run got, frame by frame (scripts/make_reef.py's scenes).

Usage: scripts/reef_progress.py OUTDIR [ACROSS] [--young N_PER_M]
       (ACROSS: cells across a ribbon; read from OUTDIR/bodies.json's vertex count if
       omitted: 2 for 648 vertices, 10 otherwise. --young: the ribbons' stretch stiffness
       E t, the scene's "young"; default 2e4, demos/reef.json's)

Per frame: time; the distance between the bights' turning points (the middle vertex of
each ribbon's middle row, make_reef.py); the pull so far (how far A's first end row moved
from frame 0); the mean strain of the ribbons' legs near their pinned ends (the first and
last 15 % of each ribbon's rows, along-ribbon edges, against frame 0, the rest shape) and
the tension it means, E t w strain (E t = young, w = 1 cm); and, from
diagnostics.csv, the active and deepest penalty layers. A jammed knot is one whose
turning points stop approaching while the ends move on and the legs' strain climbs.
"""
import csv
import argparse
import json
import os

import numpy as np

WIDTH = 0.01
YOUNG = 2e4


def read_obj(path):
    v = []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                v.append([float(t) for t in line.split()[1:4]])
    return np.array(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("across", nargs="?", type=int)
    ap.add_argument("--young", type=float, default=YOUNG)
    args = ap.parse_args()
    out, young = args.out, args.young
    with open(os.path.join(out, "bodies.json")) as f:
        bodies = json.load(f)
    names = [b["name"] for b in bodies["bodies"]] if isinstance(bodies, dict) else [b["name"] for b in bodies]
    names = [n for n in names if n.startswith("ribbon")]
    frames = sorted(f for f in os.listdir(os.path.join(out, "frames"))
                    if f.startswith(names[0]) and f.endswith(".obj"))
    rest = {n: read_obj(os.path.join(out, "frames", f"{n}_00000.obj")) for n in names}
    nv = len(rest[names[0]])
    across = args.across if args.across is not None else (2 if nv == 324 else 10)
    row = across + 1
    rows = nv // row
    tip = (rows // 2) * row + across // 2
    leg = max(2, int(0.15 * rows))
    leg_rows = list(range(2, leg)) + list(range(rows - leg, rows - 3))

    def leg_strain(x, x0):
        s = []
        for k in leg_rows:
            a = np.arange(k * row, (k + 1) * row)
            b = a + row
            s.append(np.linalg.norm(x[b] - x[a], axis=1) / np.linalg.norm(x0[b] - x0[a], axis=1) - 1)
        return float(np.mean(s))

    diag = {}
    with open(os.path.join(out, "diagnostics.csv")) as f:
        for r in csv.DictReader(f):
            diag[round(float(r["time"]), 6)] = r
    rate = None
    print("time_s  turning_points_cm  pull_cm  leg_strain_%  tension_N  active_layers  deepest_layer")
    for fr in frames:
        idx = int(fr[len(names[0]) + 1:-4])
        x = {n: read_obj(os.path.join(out, "frames", f"{n}_{idx:05d}.obj")) for n in names}
        d = np.linalg.norm(x[names[0]][tip] - x[names[1]][tip])
        pull = np.linalg.norm(x[names[0]][0] - rest[names[0]][0])
        strain = np.mean([leg_strain(x[n], rest[n]) for n in names])
        t = None
        if diag:
            times = sorted(diag)
            if rate is None and len(times) > 1:
                rate = 1 / (times[1] - times[0])
            t = times[idx] if idx < len(times) else None
        r = diag.get(t, {})
        print(f"{t if t is not None else float('nan'):6.3f}  {100 * d:17.2f}  {100 * pull:7.2f}  "
              f"{100 * strain:12.3f}  {young * WIDTH * strain:9.5f}  {r.get('active_layers', ''):>13}  "
              f"{r.get('deepest_layer', ''):>13}")


if __name__ == "__main__":
    main()
