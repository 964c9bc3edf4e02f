#!/usr/bin/env python3
"""The phantom-mesh paper's Table 1 for Clockwork scenes: explicit AVI against the
phantom integrator, each run with `clockwork run --profile`.

Usage: bench/table1.py [--build DIR] [--runs N] [--keep DIR] SCENE:T_EXPLICIT:T_PHANTOM ...

Each scene runs as written for its phantom column; bodies without an integrator get
`"integrator": "phantom"` with h_imp 1e-3 s (the paper's). The explicit column is the
same scene with the phantom keys removed. T_* are the simulated spans (s, from 0):
explicit runs are slow, so they can be shorter; costs are reported per frame. Medians
of N runs (default 3); the shares are from the median run. Prints a Markdown table
(docs/performance.md). --keep DIR keeps the last run's frames of each scene and
integrator in DIR/NAME_explicit and DIR/NAME_phantom, for `clockwork check-intersections`,
with the run's `--profile` output in profile.txt there.

       bench/table1.py [--build DIR] --tabulate DIR SCENE ...

tabulates runs made before (each too long to repeat, or made by hand as
`clockwork run VARIANT --out DIR/NAME_explicit --profile > DIR/p.txt && mv DIR/p.txt DIR/NAME_explicit/profile.txt`
(run refuses a non-empty --out, so the profile goes in after the run),
and the same for NAME_phantom): the spans are read from the profiles, so the two columns
may cover different spans, as with T_EXPLICIT and T_PHANTOM.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def variant(scene, phantom):
    doc = json.load(open(scene))
    for body in doc.get("bodies", []):
        if phantom:
            body.setdefault("integrator", "phantom")
            body.setdefault("phantom", {"h_imp": 1e-3})
        else:
            body.pop("integrator", None)
            body.pop("phantom", None)
    return doc


def run(exe, doc, until, workdir, scene_dir, out):
    # Relative paths in a scene (meshes) resolve against its folder: write it there.
    path = os.path.join(scene_dir, ".table1_%d.json" % os.getpid())
    json.dump(doc, open(path, "w"))
    try:
        text = subprocess.run([exe, "run", path, "--until", str(until), "--out", out, "--profile", "--overwrite"],
                              check=True, capture_output=True, text=True).stdout
    finally:
        os.remove(path)
    with open(os.path.join(out, "profile.txt"), "w") as f:
        f.write(text)
    return parse(text, out, doc.get("frame_rate", 30), until)


def parse(text, out, frame_rate, until):
    wall = float(re.search(r"events in ([0-9.]+) s wall", text).group(1))
    shares = dict(re.findall(r"(elastic|penalties|certificates) ([0-9.]+) %", text))
    periods = re.findall(r"(force|implicit):\S+\s+\d+ stencils, period ([0-9.e+-]+)", text)
    implicit = [float(t) for kind, t in periods if kind == "implicit"]
    explicit = [float(t) for kind, t in periods if kind == "force"]
    with open(os.path.join(out, "diagnostics.csv")) as f:
        rows = list(csv.DictReader(f))
    certs = statistics.mean(float(r["certificates"]) for r in rows) if rows and "certificates" in rows[0] else 0.0
    return {"wall": wall, "shares": {k: float(v) for k, v in shares.items()}, "certs": certs,
            "step": min(implicit or explicit or [float("nan")]),
            "frame_rate": frame_rate, "until": until}


def tabulated(out, frame_rate):
    """A kept run: its profile output and diagnostics."""
    path = os.path.join(out, "profile.txt")
    if not os.path.isfile(path):
        sys.exit("table1.py: --tabulate: no run's profile at %s" % path)
    text = open(path).read()
    span = re.search(r"simulated ([0-9.e+-]+) s:", text)
    if not span:
        sys.exit("table1.py: --tabulate: %s is not the output of `clockwork run --profile`" % path)
    return parse(text, out, frame_rate, float(span.group(1)))


def median_run(exe, doc, until, runs, workdir, scene_dir, out):
    results = sorted((run(exe, doc, until, workdir, scene_dir, out) for _ in range(runs)), key=lambda r: r["wall"])
    return results[len(results) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the frames of the last run of each variant")
    ap.add_argument("--tabulate", metavar="DIR", help="tabulate the runs kept in DIR instead")
    ap.add_argument("scenes", nargs="+", help="SCENE:T_EXPLICIT:T_PHANTOM (with --tabulate: SCENE)")
    args = ap.parse_args()
    exe = os.path.join(args.build, "demos", "clockwork")
    print("| scene | vertices | certificates (avg) | explicit: elastic % | penalties % | "
          "certificates % | step (s) | s/frame | phantom: elastic % | penalties % | "
          "certificates % | h_imp (s) | s/frame | speedup |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as workdir:
        for spec in args.scenes:
            scene, t_exp, t_ph = (spec, "0", "0") if args.tabulate else spec.rsplit(":", 2)
            scene_dir = os.path.dirname(os.path.abspath(scene))
            info = subprocess.run([exe, "validate", scene], check=True, capture_output=True, text=True).stdout
            vertices = re.search(r"(\d+) vertices", info).group(1)
            frame_rate = json.load(open(scene)).get("frame_rate", 30)
            rows = []
            for phantom, until in ((False, float(t_exp)), (True, float(t_ph))):
                name = os.path.splitext(os.path.basename(scene))[0] + ("_phantom" if phantom else "_explicit")
                if args.tabulate:
                    r = tabulated(os.path.join(args.tabulate, name), frame_rate)
                else:
                    out = os.path.join(args.keep, name) if args.keep else os.path.join(workdir, "out")
                    os.makedirs(out, exist_ok=True)
                    r = median_run(exe, variant(scene, phantom), until, args.runs, workdir, scene_dir, out)
                r["per_frame"] = r["wall"] / (r["until"] * r["frame_rate"])
                rows.append(r)
                print("  %s %s: %.3f s wall for %g s" % (os.path.basename(scene),
                      "phantom" if phantom else "explicit", r["wall"], r["until"]), file=sys.stderr)
            e, p = rows
            cols = [os.path.basename(scene), vertices, "%.0f" % p["certs"]]
            for r in (e, p):
                cols += ["%.1f" % r["shares"].get(k, 0.0) for k in ("elastic", "penalties", "certificates")]
                cols += ["%.2g" % r["step"], "%.3g" % r["per_frame"]]
            cols.append("%.2fx" % (e["per_frame"] / p["per_frame"]))
            print("| " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
