#!/usr/bin/env python3
"""Plot of `bench_multirate accuracy --csv FILE` (docs/performance.md "Multi-rate
backward Euler"): the probe jaw vertex's vertical displacement over time for the
reference (single-rate h_S), the multi-rate run and single-rate h_L / k, and the same
relative to the head's mean displacement. Prints each run's vibration amplitude
relative to the reference's: the RMS of u_z minus its centred moving average over
WINDOW seconds (one period of the jaw's vibration), over t <= END s, which separates
the jaw's own vibration from slower motion.

    scripts/plot_multirate_accuracy.py CSV PNG [--title T] [--window W] [--end E]

Needs python3-matplotlib (Debian). Exit 2 with one message on a missing or malformed
input.
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402

RUNS = [  # column prefix, label, style
    ("reference", "single-rate $h_S$ (reference)", dict(color="black", lw=2.0)),
    ("multirate", "multi-rate, conservative coupling", dict(color="tab:red", lw=1.2)),
    ("multirate_paper", "multi-rate, paper's coupling", dict(color="tab:orange", lw=1.0, ls=":")),
    ("single_hL_1", "single-rate $h_L$", dict(color="tab:blue", lw=1.2, ls="--")),
    ("single_hL_2", "single-rate $h_L/2$", dict(color="tab:green", lw=1.2, ls="-.")),
]


def fail(message):
    print(f"plot_multirate_accuracy.py: {message}", file=sys.stderr)
    sys.exit(2)


def vibration_rms(t, u, window, end):
    """RMS of u minus its centred moving average over `window` s, for t <= end."""
    half = max(1, int(round(window / (t[1] - t[0]))) // 2)
    out = []
    for i in range(half, len(u) - half):
        if t[i] > end:
            break
        mean = sum(u[i - half:i + half + 1]) / (2 * half + 1)
        out.append(u[i] - mean)
    if not out:
        fail("the run is shorter than the vibration window")
    return (sum(x * x for x in out) / len(out)) ** 0.5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("png")
    parser.add_argument("--title", default="")
    parser.add_argument("--window", type=float, default=0.11)
    parser.add_argument("--end", type=float, default=0.5)
    args = parser.parse_args()
    path = args.csv
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    if len(rows) < 3:
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
    ref = vibration_rms(t, cols["reference_uz"], args.window, args.end)
    print(f"vibration RMS relative to the reference (window {args.window} s, t <= {args.end} s):")
    for prefix in [h[:-3] for h in header if h.endswith("_uz") and not h.endswith("_rel_uz")]:
        print(f"  {prefix}: {vibration_rms(t, cols[prefix + '_uz'], args.window, args.end) / ref:.3f}")
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for ax, suffix, ylabel in ((axes[0], "_uz", "probe $u_z$ (mm)"),
                               (axes[1], "_rel_uz", "probe $u_z$ − head mean $u_z$ (mm)")):
        for prefix, label, style in RUNS:
            ax.plot(t, [1e3 * u for u in cols[prefix + suffix]], label=label, **style)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="best")
    axes[1].set_xlabel("t (s)")
    if args.title:
        axes[0].set_title(args.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)


if __name__ == "__main__":
    main()
