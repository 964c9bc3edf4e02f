#!/usr/bin/env python3
"""The Figure 3 analogue of Schroeder et al. (docs/schroeder.md): the vertical
extent of a sphere dropped on the ground against time, for each ε of the asynchronous
scheme and the two synchronous schemes, from the CSV of `bench_schroeder sweep`.

    python3 scripts/plot_schroeder_sweep.py SWEEP.csv OUT.png

Needs python3-matplotlib (Debian). Exit 2 with one message on a missing or malformed input.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")  # headless
import matplotlib.pyplot as plt  # noqa: E402


def fail(message):
    print(f"plot_schroeder_sweep.py: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        fail("usage: plot_schroeder_sweep.py SWEEP.csv OUT.png")
    series = {}
    try:
        with open(sys.argv[1], newline="") as f:
            for row in csv.DictReader(f):
                if row["scheme"] == "schroeder":
                    label = f"asynchronous, ε = {float(row['epsilon']):g}"
                else:
                    label = row["scheme"].replace("_", "-")
                t, h = float(row["t"]), float(row["height"])
                series.setdefault(label, ([], []))
                series[label][0].append(t)
                series[label][1].append(h * 1000.0)
    except OSError as e:
        fail(f"{sys.argv[1]}: cannot read: {e.strerror}")
    except (KeyError, ValueError) as e:
        fail(f"{sys.argv[1]}: malformed: {e}")
    if not series:
        fail(f"{sys.argv[1]}: no rows")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, (t, h) in series.items():
        style = "--" if not label.startswith("asynchronous") else "-"
        ax.plot(t, h, style, label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("vertical extent of the sphere (mm)")
    ax.set_title("Sphere (r = 0.1 m) dropped on the ground: less deformation as ε grows")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
