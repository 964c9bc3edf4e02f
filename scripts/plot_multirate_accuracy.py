#!/usr/bin/env python3
"""Plot of `bench_multirate accuracy --csv FILE` (docs/performance.md "Multi-rate
backward Euler"): the probe jaw vertex's vertical displacement over time for the
reference (single-rate h_S), the multi-rate run and single-rate h_L / k, and the same
relative to the head's mean displacement.

    scripts/plot_multirate_accuracy.py CSV PNG [TITLE]

Needs python3-matplotlib (Debian). Exit 2 with one message on a missing or malformed
input.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402

RUNS = [  # column prefix, label, style
    ("reference", "single-rate $h_S$ (reference)", dict(color="black", lw=2.0)),
    ("multirate", "multi-rate (Zhao), $h_L$, jaw $h_S$", dict(color="tab:red", lw=1.2)),
    ("single_hL_1", "single-rate $h_L$", dict(color="tab:blue", lw=1.2, ls="--")),
    ("single_hL_2", "single-rate $h_L/2$", dict(color="tab:green", lw=1.2, ls="-.")),
]


def fail(message):
    print(f"plot_multirate_accuracy.py: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: plot_multirate_accuracy.py CSV PNG [TITLE]")
    path, png = sys.argv[1], sys.argv[2]
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    if len(rows) < 2:
        fail(f"{path}: no data rows")
    header = rows[0]
    try:
        cols = {name: [float(r[i]) for r in rows[1:]] for i, name in enumerate(header)}
    except (ValueError, IndexError):
        fail(f"{path}: malformed row")
    for prefix, _, _ in RUNS:
        if f"{prefix}_uz" not in cols:
            fail(f"{path}: no column {prefix}_uz")
    t = cols["t"]
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for ax, suffix, ylabel in ((axes[0], "_uz", "probe $u_z$ (mm)"),
                               (axes[1], "_rel_uz", "probe $u_z$ − head mean $u_z$ (mm)")):
        for prefix, label, style in RUNS:
            ax.plot(t, [1e3 * u for u in cols[prefix + suffix]], label=label, **style)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="best")
    axes[1].set_xlabel("t (s)")
    if len(sys.argv) == 4:
        axes[0].set_title(sys.argv[3], fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
