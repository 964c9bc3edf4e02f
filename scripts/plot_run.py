#!/usr/bin/env python3
"""Plots of a run's diagnostics (docs/viewer.md), called by `clockwork plot OUTDIR`.

Writes OUTDIR/plots/energy.png, momentum.png, contact.png (only when the run has the
contact columns) and event_periods.png (from OUTDIR/event_periods.csv, written when the
kernel counted events). Needs python3-matplotlib (Debian).

Exit statuses as the clockwork tool's (io/exit_codes.hpp): 3 with one line naming the
file on a missing, truncated or malformed input (read whole before anything is
plotted), 5 when the plots cannot be written (no matplotlib, a folder not writable).
"""
import csv
import math
import os
import sys

EXIT_INPUT = 3  # kExitInput
EXIT_IO = 5  # kExitIo
plt = None  # matplotlib.pyplot: imported by main() once the inputs are read whole


def fail(message, status=EXIT_INPUT):
    print(f"plot_run.py: {message}", file=sys.stderr)
    sys.exit(status)


def read_rows(path):
    """The rows of a CSV file, or one message naming it (never a traceback)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        fail(f"{path}: missing (every run writes it)")
    except UnicodeDecodeError as e:
        fail(f"{path}: not a text file (byte {e.start} is not UTF-8)")
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    if not text:
        fail(f"{path}: empty file (expected a header row)")
    if "\0" in text:
        fail(f"{path}: holds a NUL byte (a damaged file)")
    # clockwork writes whole rows, each ended by a newline: a file cut inside its last
    # number would otherwise be read as a shorter number.
    if not text.endswith("\n"):
        fail(f"{path}: truncated inside its last row (no end of line)")
    try:
        return list(csv.reader(text.splitlines()))
    except csv.Error as e:
        fail(f"{path}: not a CSV file: {e}")


def number(path, line, name, value):
    try:
        x = float(value)
    except ValueError:
        fail(f"{path}:{line}: column '{name}': not a number: '{value}'")
    if not math.isfinite(x):
        fail(f"{path}:{line}: column '{name}': not a finite number: '{value}'")
    return x


def read_columns(path):
    """CSV with a header row -> {column: [float, ...]}, at least one row, time increasing."""
    rows = read_rows(path)
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header) or any(not name for name in header):
        fail(f"{path}:1: bad header row '{','.join(header)}'")
    if not body:
        fail(f"{path}: no rows after the header (a run writes one per frame)")
    columns = {name: [] for name in header}
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            fail(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
        for name, value in zip(header, row):
            columns[name].append(number(path, line, name, value))
    times = columns.get("time", [])
    for line in range(1, len(times)):
        if not times[line] > times[line - 1]:
            fail(f"{path}:{line + 2}: time {times[line]!r} does not follow {times[line - 1]!r}")
    return columns


def read_periods(path):
    """event_periods.csv: kind, period_lo, period_hi, events -> {kind: [(lo, hi, n)]}."""
    rows = read_rows(path)
    if rows[0] != ["kind", "period_lo", "period_hi", "events"]:
        fail(f"{path}:1: expected the header kind,period_lo,period_hi,events")
    by_kind = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 4:
            fail(f"{path}:{line}: {len(row)} fields, expected kind,period_lo,period_hi,events")
        lo = number(path, line, "period_lo", row[1])
        hi = number(path, line, "period_hi", row[2])
        n = number(path, line, "events", row[3])
        if not (0 < lo < hi) or n < 0 or n != int(n):
            fail(f"{path}:{line}: expected 0 < period_lo < period_hi and a count of events")
        by_kind.setdefault(row[0], []).append((lo, hi, int(n)))
    return by_kind


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


def plot_periods(by_kind, out):
    """Step histograms of event periods per kind (log-spaced bins)."""
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
        fail("usage: plot_run.py OUTDIR", 2)
    run = sys.argv[1]
    if not os.path.isdir(run):
        fail(f"{run}: no such folder (expected the output folder of 'clockwork run')")
    diagnostics = os.path.join(run, "diagnostics.csv")
    d = read_columns(diagnostics)
    missing = [c for c in ("time", "px", "py", "pz", "Lx", "Ly", "Lz", "kinetic", "potential",
                           "total") if c not in d]
    if missing:
        fail(f"{diagnostics}: missing columns {', '.join(missing)}")
    contact = ("active_layers", "deepest_layer", "deepest_layer_ever", "certificates",
               "certificate_reschedules_per_s")
    if "active_layers" in d and any(c not in d for c in contact):
        fail(f"{diagnostics}: missing contact columns "
             f"{', '.join(c for c in contact if c not in d)}")
    periods = os.path.join(run, "event_periods.csv")
    by_kind = read_periods(periods) if os.path.exists(periods) else None

    # Imported only now: a damaged input is reported even where matplotlib is missing.
    global plt
    try:
        import matplotlib
        matplotlib.use("Agg")  # headless: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is not installed (Debian: apt install python3-matplotlib): no plots",
             EXIT_IO)
    plots = os.path.join(run, "plots")
    try:
        os.makedirs(plots, exist_ok=True)
        plot_energy(d, os.path.join(plots, "energy.png"))
        plot_momentum(d, os.path.join(plots, "momentum.png"))
        if "active_layers" in d:
            plot_contact(d, os.path.join(plots, "contact.png"))
        else:
            print("no contact columns in diagnostics.csv: contact.png skipped")
        if by_kind is not None:
            plot_periods(by_kind, os.path.join(plots, "event_periods.png"))
        else:
            print("no event_periods.csv (run without event counts): event_periods.png skipped")
    except OSError as e:
        fail(f"{e.filename or plots}: cannot write: {e.strerror}", EXIT_IO)


if __name__ == "__main__":
    main()
