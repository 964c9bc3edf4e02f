#!/usr/bin/env python3
"""Zhao's multi-rate step against single-rate backward Euler on a drop scene (issue 41):
wall time per frame of the scene as written (Zhao, h_L with its regions at h_S = h_L/m),
and of the same scene with every body on `backward_euler` at h_L and at the finest h_S,
the three interleaved in each run, medians of N runs.

Usage: bench/multirate_drop.py [--build DIR] [--runs N] [--until T] SCENE

SCENE: a scene whose solids use `"integrator": "zhao"` (demos/bunny_drop.json). Runs
`clockwork run` with `--until T` (default 0.3 s: the fall, the landing and the first
rebound) into temporary folders and prints a Markdown table: seconds per frame, the
ratios, the total energy's largest excess over its initial value and its value at T
(diagnostics.csv), and the frames `check-intersections` finds intersecting.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def variants(scene):
    doc = json.load(open(scene))
    zhao = [b for b in doc["bodies"] if b.get("integrator") == "zhao"]
    if not zhao:
        sys.exit(f"{scene}: no body with \"integrator\": \"zhao\"")
    h_L = zhao[0]["zhao"]["h_L"]
    h_S = min(h_L / r["m"] for b in zhao for r in b["zhao"]["regions"])
    out = {"zhao": doc}
    for name, h in (("backward_euler h_L", h_L), ("backward_euler h_S", h_S)):
        d = json.loads(json.dumps(doc))
        for b in d["bodies"]:
            if b.get("integrator") == "zhao":
                keep = {k: v for k, v in b.pop("zhao").items() if k.endswith(("_contact", "_stiffness", "_clearance"))}
                b["integrator"] = "backward_euler"
                b["backward_euler"] = dict(keep, h=h)
        out[name] = d
    return out, h_L, h_S


def energy(folder):
    rows = list(csv.DictReader(open(os.path.join(folder, "diagnostics.csv"))))
    e0 = float(rows[0]["total"])
    return max(float(r["total"]) for r in rows) - e0, float(rows[-1]["total"]), e0, len(rows) - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scene")
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--until", type=float, default=0.3)
    a = ap.parse_args()
    tool = os.path.join(a.build, "demos", "clockwork")
    docs, h_L, h_S = variants(a.scene)
    base = os.path.dirname(os.path.abspath(a.scene))
    times = {k: [] for k in docs}
    last = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(a.runs):
            for name, doc in docs.items():
                path = os.path.join(base, f".multirate_drop_{name.replace(' ', '_')}.json")
                json.dump(doc, open(path, "w"))
                out = os.path.join(tmp, name.replace(" ", "_"))
                start = time.perf_counter()
                r = subprocess.run([tool, "run", path, "--out", out, "--overwrite", "--until", str(a.until)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                wall = time.perf_counter() - start
                os.remove(path)
                if r.returncode != 0:
                    sys.exit(f"{name}: clockwork run failed ({r.returncode}): {r.stderr.strip()[-400:]}")
                times[name].append(wall)
                last[name] = out
        print(f"{a.scene}, {a.until} s, h_L = {h_L} s, h_S = {h_S} s, median of {a.runs} runs\n")
        print("| integrator | s/frame | vs Zhao | highest total − initial (J) | total at end (J) | intersecting frames |")
        print("|---|---|---|---|---|---|")
        ref = None
        for name in docs:
            excess, end, e0, frames = energy(last[name])
            per_frame = statistics.median(times[name]) / max(frames, 1)
            ref = ref or per_frame
            c = subprocess.run([tool, "check-intersections", last[name]], capture_output=True, text=True)
            bad = "0" if c.returncode == 0 else c.stdout.strip().splitlines()[-1].split(",")[1].strip()
            print(f"| {name} | {per_frame:.3f} | {per_frame / ref:.2f} | {excess:.3g} of {e0:.4g} | {end:.4g} | {bad} |")


if __name__ == "__main__":
    main()
