#!/usr/bin/env python3
"""Plots of a run's diagnostics (docs/viewer.md), called by `clockwork plot OUTDIR`.

Writes OUTDIR/plots/energy.png, momentum.png, contact.png (only when the run has the
contact columns) and event_periods.png (from OUTDIR/event_periods.csv, written when the
kernel counted events). Needs python3-matplotlib (Debian). Exit 2 with one message on a
missing or malformed input.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def fail(message):
    print(f"plot_run.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_columns(path):
    """CSV with a header row -> {column: [float, ...]}."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    if not rows:
        fail(f"{path}: empty file (expected a header row)")
    header, body = rows[0], rows[1:]
    columns = {name: [] for name in header}
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            fail(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
        for name, value in zip(header, row):
            try:
                columns[name].append(float(value))
            except ValueError:
                fail(f"{path}:{line}: column '{name}': not a number: '{value}'")
    return columns


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


def relative_drift(values):
    """(v - v0) / max(|v0|, max |v|): 0 for exactly conserved quantities."""
    scale = max(abs(values[0]), max(abs(v) for v in values), 1e-300)
    return [(v - values[0]) / scale for v in values]


def plot_energy(d, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    t = d["time"]
    for name, style in (("kinetic", "-"), ("potential", "-"), ("total", "k-")):
        ax.plot(t, d[name], style, label=name)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title("Energy")
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, out)


def plot_momentum(d, out):
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    t = d["time"]
    for c in ("px", "py", "pz"):
        a.plot(t, d[c], label=c)
    a.set_ylabel("linear momentum (kg m/s)")
    a.grid(alpha=0.3)
    a.legend()
    for c in ("Lx", "Ly", "Lz"):
        b.plot(t, d[c], label=c)
    b.set_ylabel("angular momentum\nabout the origin (kg m²/s)")
    b.set_xlabel("simulated time (s)")
    b.grid(alpha=0.3)
    b.legend()
    a.set_title("Momentum (conserved without gravity, pins or obstacles)")
    save(fig, out)


def plot_contact(d, out):
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    t = d["time"]
    a.plot(t, d["active_layers"], label="active layers")
    a.plot(t, d["deepest_layer"], label="deepest layer")
    a.plot(t, d["deepest_layer_ever"], "--", label="deepest layer ever")
    a.set_ylabel("layers")
    a.grid(alpha=0.3)
    a.legend()
    b.plot(t, d["certificates"], label="live certificates")
    b.plot(t, d["certificate_reschedules_per_s"], label="reschedules per simulated s")
    b.set_yscale("symlog")
    b.set_xlabel("simulated time (s)")
    b.grid(alpha=0.3)
    b.legend()
    a.set_title("Contact: penalty layers and certificates")
    save(fig, out)


def plot_periods(path, out):
    """event_periods.csv: kind, period_lo, period_hi, events (log-spaced bins)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    by_kind = {}
    for line, row in enumerate(rows, start=2):
        try:
            lo, hi, n = float(row["period_lo"]), float(row["period_hi"]), int(row["events"])
        except (KeyError, TypeError, ValueError):
            fail(f"{path}:{line}: expected kind,period_lo,period_hi,events")
        by_kind.setdefault(row["kind"], []).append((lo, hi, n))
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind, bins in sorted(by_kind.items()):
        bins.sort()
        # Step outline per kind: bins are contiguous only where events fell.
        xs, ys = [], []
        for lo, hi, n in bins:
            xs += [lo, lo, hi, hi]
            ys += [0, n, n, 0]
        ax.fill(xs, ys, alpha=0.35)
        ax.plot(xs, ys, label=f"{kind} ({sum(b[2] for b in bins)} events)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("event period: time to the slot's next occurrence (s)")
    ax.set_ylabel("events")
    ax.set_title("Histogram of event periods (10 bins per decade)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, out)


def main():
    if len(sys.argv) != 2:
        fail("usage: plot_run.py OUTDIR")
    run = sys.argv[1]
    diagnostics = os.path.join(run, "diagnostics.csv")
    if not os.path.isdir(run):
        fail(f"{run}: no such folder (expected the output folder of 'clockwork run')")
    if not os.path.exists(diagnostics):
        fail(f"{run}: no diagnostics.csv: not an output folder of 'clockwork run'")
    d = read_columns(diagnostics)
    missing = [c for c in ("time", "px", "Lx", "kinetic", "total") if c not in d]
    if missing:
        fail(f"{diagnostics}: missing columns {', '.join(missing)}")
    plots = os.path.join(run, "plots")
    os.makedirs(plots, exist_ok=True)
    plot_energy(d, os.path.join(plots, "energy.png"))
    plot_momentum(d, os.path.join(plots, "momentum.png"))
    if "active_layers" in d:
        plot_contact(d, os.path.join(plots, "contact.png"))
    else:
        print("no contact columns in diagnostics.csv: contact.png skipped")
    periods = os.path.join(run, "event_periods.csv")
    if os.path.exists(periods):
        plot_periods(periods, os.path.join(plots, "event_periods.png"))
    else:
        print("no event_periods.csv (run without event counts): event_periods.png skipped")


if __name__ == "__main__":
    main()
