#!/usr/bin/env python3
"""Writes demos/hats.json: the phantom-mesh paper's hat cascade (§5.2, Table 1) built
procedurally — 9 stiff thin-shell hats (crown + brim, 113 vertices each) dropped in a
staggered spiral onto a rigid vertical pole, so that the off-centre ones tilt off it.

Usage: scripts/make_hats.py [OUT]   (default demos/hats.json)
"""
import json
import math
import sys

HATS = 9
POLE_TOP = 0.5        # m
CROWN_RADIUS = 0.04   # m; the pole (radius 1.2 cm) fits inside the crown
CROWN_HEIGHT = 0.03
BRIM_RADIUS = 0.075
SEGMENTS = 16         # 1 + 7 rings x 16 = 113 vertices per hat, 1017 in all (paper: 973)


def hat(i):
    # A spiral staircase: every hat 6 cm above the previous one, turned by 137.5°
    # (the golden angle) and off the pole's axis by 0, 1.5 or 3 cm — the last land on
    # the crown's rim and tilt off. Every other hat is tipped by 8° about its offset.
    angle = math.radians(137.5 * i)
    offset = 0.015 * (i % 3)
    centre = [offset * math.cos(angle), offset * math.sin(angle), POLE_TOP + 0.05 + 0.06 * i]
    tip = math.radians(8.0 if i % 2 else 0.0)
    # axes: u along the offset direction tipped up by `tip`, v horizontal across it.
    u = [math.cos(angle) * math.cos(tip), math.sin(angle) * math.cos(tip), math.sin(tip)]
    v = [-math.sin(angle), math.cos(angle), 0.0]
    return {
        "name": f"hat{i}",
        "shape": {"type": "hat", "center": [round(c, 6) for c in centre],
                  "axes": [[round(c, 6) for c in u], [round(c, 6) for c in v]],
                  "crown_radius": CROWN_RADIUS, "crown_height": CROWN_HEIGHT,
                  "brim_radius": BRIM_RADIUS, "segments": SEGMENTS},
        # Felt-like stiff shell: membrane E·t = 2e5 N/m, bending 2e-3 N·m (explicit
        # AVI needs periods of ~2e-6 s for them).
        "material": {"area_density": 0.2, "young": 2e5, "poisson": 0.3, "bending": 2e-3},
        "integrator": "phantom",
        # The paper's h_imp; a little stiffness-proportional damping keeps the midpoint
        # rule stable through the impacts (docs/phantom.md).
        "phantom": {"h_imp": 1e-3, "solver": "ncg", "tolerance": 1e-6, "rayleigh_beta": 1e-4},
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "demos/hats.json"
    scene = {
        "name": "hats",
        "description": "DESCRIPTION",
        "end_time": 1.5,
        "frame_rate": 30,
        "gravity": [0, 0, -9.81],
        "bodies": [hat(i) for i in range(HATS)],
        "contact": {"friction": 0.3},
        "obstacles": [
            {"name": "pole", "shape": {"type": "cylinder", "base": [0, 0, 0], "axis": [0, 0, 1],
                                       "radius": 0.012, "length": POLE_TOP, "segments": 12,
                                       "rings": 4}},
            {"name": "ground", "shape": {"type": "ground", "center": [0, 0, 0], "half_size": 0.5,
                                         "divisions": 4}},
        ],
    }
    with open(out, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
