#!/usr/bin/env python3
"""Edge strain of a body over a run: frame 0 (the rest shape of a flat grid) against
every written frame, from the OBJ frames of `clockwork run`.

Usage: scripts/edge_strain.py OUT BODY [--csv FILE]

Prints, per frame, the largest edge strain (l - L)/L and the 99th percentile, and the
maximum over the run. Strain here is the engineering strain of each mesh edge; for the
constant-strain triangles the principal strains can exceed it a little along the
diagonals' directions, and edges measure what a viewer sees.
"""
import argparse
import glob
import math
import os
import re
import sys


def read_obj(path):
    v, f = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith("v "):
                v.append(tuple(float(c) for c in line.split()[1:4]))
            elif line.startswith("f "):
                f.append(tuple(int(c.split("/")[0]) - 1 for c in line.split()[1:4]))
    return v, f


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("body")
    ap.add_argument("--csv")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.out, "frames", args.body + "_*.obj")),
                   key=lambda p: int(re.search(r"_(\d+)\.obj$", p).group(1)))
    if not files:
        sys.exit("edge_strain: no frames %s/frames/%s_*.obj" % (args.out, args.body))
    x0, tris = read_obj(files[0])
    edges = sorted({(min(a, b), max(a, b)) for t in tris for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0]))})
    rest = [math.dist(x0[a], x0[b]) for a, b in edges]
    worst, worst_frame = 0.0, 0
    rows = []
    for path in files:
        frame = int(re.search(r"_(\d+)\.obj$", path).group(1))
        x, _ = read_obj(path)
        s = sorted((math.dist(x[a], x[b]) - L) / L for (a, b), L in zip(edges, rest))
        top, p99 = s[-1], s[int(0.99 * (len(s) - 1))]
        rows.append((frame, top, p99))
        if top > worst:
            worst, worst_frame = top, frame
    for frame, top, p99 in rows:
        print("frame %4d  max %.4f  p99 %.4f" % (frame, top, p99))
    print("max edge strain %.4f (%.2f %%) at frame %d, %d edges, %d frames"
          % (worst, 100 * worst, worst_frame, len(edges), len(files)))
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write("frame,max_strain,p99_strain\n")
            for r in rows:
                fh.write("%d,%.6g,%.6g\n" % r)


if __name__ == "__main__":
    main()
