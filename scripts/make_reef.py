#!/usr/bin/env python3
"""Writes demos/reef.json: the reef knot of Harmon et al. 2009 (the phantom-mesh paper's
§5.2, Table 1, "Reef") built procedurally — two ribbons tied loosely in a reef knot
and pulled tight by scripted ends.

The knot is two interlocking bights, in the xy plane, z up. Ribbon A comes in from the
left along y = +yA(x), makes a U-turn (a half circle of radius W about (D, 0)) and goes
back left along y = -yA(x); ribbon B is A reflected through the origin (x, y, z -> -x, -y, -z): it comes in
from the right, turns about (-D, 0) and goes back right. yA grows from N (narrow, at
x <= -D: inside B's U-turn) to W (wide, at x >= D: A's U-turn goes round B's legs);
yB = yA(-x). So each bight collars the other's two legs and the legs cross once on each
side at x = 0: six crossings. Heights: A at +H where it crosses B's U-turn and at its
own U-turn, -H at x = 0 (zA = -H cos(pi x / D) between); B the mirror, zB = -zA.
So B's bight passes under both of A's legs and both of B's legs pass under A's bight:
both parts of each ribbon lie on the same side of the other ribbon's bight — the reef
(with one leg over and one under at each bight it would be the granny).

Each ribbon is a strip of width WIDTH across its centreline, flat across (its width
along the horizontal normal z x tangent; with TILT > 0, tilted up by TILT on its U-turn
and the last half of the legs before it, tilt_at). The last rows at both ends of each ribbon are
pinned and pulled by `pin_motion`: A's ends to -x, B's to +x, at PULL_SPEED.

Usage: scripts/make_reef.py [OUT [RUNTIME]]          (default demos/reef.json: the coarse
       knot, 648 vertices, 5 mm mesh, the shortened test's scene)
       scripts/make_reef.py --fine [OUT [RUNTIME]]   (default demos/reef_fine.json: the paper's
       scale, FINE below)
Other options (experiments): --edge M --across N --thickness M --cell M --bending NM
--stiffness N_PER_M --pull-speed M_PER_S --pull-time S --end-time S --frame-rate HZ --h-imp S
--tick-rule midpoint|backward_euler (backward Euler ticks need no rayleigh_beta: docs/phantom.md).
"""
import argparse
import json
import math

W = 0.035           # m, half-width of the bights (U-turn radius)
N = 0.011           # m, half-distance of a ribbon's legs inside the other's U-turn
D = 0.045           # m, U-turn centres at x = +-D
H = 0.006           # m, heights of the crossings (+-H): 2H = 12 thicknesses apart
LEG = 0.16          # m, legs end at x = -+LEG
WIDTH = 0.01        # m, ribbon width
ACROSS = 2          # cells across the ribbon
EDGE = 0.005        # m, target edge length along the ribbon
THICKNESS = 0.001   # m, contact thickness eta1
CELL = 0.006        # m, hash-grid cell
SLACK_FAR = 0.5     # m/s
PULL_SPEED = 0.1    # m/s, each end
PULL_TIME = 0.87    # s: 8.7 cm per end, where the coarse knot has jammed (legs under tension)
END_TIME = 1.2      # s: then held still
H_IMP = 5e-5        # s, the phantom period (below)
FRAME_RATE = 30

# Ribbon: 0.15 kg/m², stretch stiffness E.t = 2e4 N/m, small bending.
MATERIAL = {"area_density": 0.15, "young": 2e4, "poisson": 0.3, "bending": 1e-6}
# Numerical knobs in "advanced" (docs/scene-format.md); the tolerance is the default 1e-6.
PHANTOM = {"rayleigh_beta": 1e-4, "advanced": {"solver": "ncg"}}
# What the shipped scenes' descriptions say about their advanced keys (written only when
# no option changes them).
ADVANCED_NOTE = 'Advanced keys: phantom solver "ncg" (the phantom-mesh paper\'s nonlinear CG with a Cholesky preconditioner refreshed every 50 ticks); contact cell_size 0.006 m and slack_far 0.5 m/s (the settings its runs were measured with, instead of the defaults 2 x mean edge and 3 sqrt(g x mean edge); scripts/make_reef.py).'
FINE_ADVANCED_NOTE = 'Advanced keys: phantom solver "ncg" (the phantom-mesh paper\'s nonlinear CG with a Cholesky preconditioner refreshed every 50 ticks), tolerance 1e-5 (each iteration cuts the residual 100-300 times), factorization "vertex_block" (1.7x faster triangular solves) and refresh 200 (a refresh is PSD projections of 47 k element Hessians and a factorisation; every 200 ticks gave the same iterations per tick, bench/results/history_reef.md "cheaper ticks"); contact cell_size 1.5 mm and slack_far 0.1 m/s (the ~20 same-ribbon triangle pairs per triangle would otherwise fail every ~0.5 ms), stiffness 20 N/m (first layer) and position_slack 40 um (vertices rattling in the jam are bounded by balls: docs/contact.md "Position envelopes").'

# The phantom period. The paper's coupling carries a contact force F on a vertex of mass
# m through a mismatch ~ F h^2 / m between the copies (docs/phantom.md "Contact force and
# the step"); at 1e-3 s the coarse knot's mismatch passes the 1 mm layer as it grips
# (8 mm at 4 cm of pull) and the run stops on a crease at 4.5 cm. At 1e-4 s the pull
# reaches the jam, and the held knot creases 0.12 s later; at 5e-5 s it holds.


# The paper-scale knot (--fine): 10 cells across (1 mm) and 1.1 mm along, 10714 vertices
# against the paper's 10642, so that a ribbon can twist and fold across its width at
# more than the mesh scale. The contact layer is thinned with the mesh: eta1 must stay
# well below the ~0.7 edge between neighbouring, non-adjacent triangles of a flat ribbon
# (they would touch at rest, and every such pair's slab certificate would fail within a
# fraction of a millisecond). Cell 1.5 mm and slack_far 0.1 m/s: the ~20 same-ribbon
# triangle pairs per triangle (gaps ~0.4 mm over eta1) would otherwise fail every
# ~0.5 ms. First-layer stiffness 20 N/m. Pulled at 10 cm/s for 0.9 s (9 cm per end),
# meant to go past the jam, then held to 1.1 s. The U-turns stand on edge (TILT 90
# degrees): flat, a U-turn drawn tighter is bent in its own plane, and with a flat
# (symmetric) start the phantom's elastic solution crushes its inner edge in-plane
# instead of buckling out of it; the first fine run (flat) stopped at 0.14 s with an
# edge-edge pair of adjacent rows in a U-turn through 4096 layers. On edge, tightening a
# U-turn bends the ribbon out of its plane.
#
# The ribbon is soft, as the paper's must be: its explicit step at this mesh, 4.61e-5 s
# (Table 1, Reef), is a wave speed of a few m/s. Ours is the coarse knot's material (E t
# 2e4 N/m, 0.15 kg/m^2) with stretch and bending stiffness divided by FINE_SOFTENING^2 =
# 58^2 (E t 5.9 N/m, bending 3e-9 N m: a soft knit ribbon), which puts explicit AVI's
# step at 4.56e-5 s, and the knot is dominated by contact, as the issue and the paper
# describe it. Until 2026-11-27 the fine knot kept the coarse material with bending
# 1e-5 N m: explicit steps of 0.79 us, a phantom period of 7.5e-6 s to carry its
# 0.34 N legs through the coupling, 57 min per phantom run and an estimated 11-15 h per
# explicit run (bench/results/history_reef.md, "At the paper's scale"). Everything that sets a
# time scale of the material follows it: the Rayleigh time beta times 58, and the
# phantom period. The coupling carries a contact force F on a vertex of mass m through a
# mismatch ~ F h^2 / m: with the knot's forces 58^2 times smaller, h = 1.25e-4 s keeps the
# mismatch at tens of um (at 5e-4 s it reached 1.4 mm, 3.5 eta1, and a ribbon crushed
# itself through 4096 layers at 0.79 s).
# Position envelopes of 0.04 mm (eta1 / 10; docs/contact.md "Position envelopes"): in the
# jam vertices rattle between the layers and their phantoms, each velocity change leaving
# even the widest velocity envelope and rescheduling its 200-1250 triangle-pair
# certificates; in balls they reschedule them only when they have moved 0.04 mm.
FINE = {"EDGE": 0.0011, "ACROSS": 10, "THICKNESS": 0.0004, "CELL": 0.0015, "SLACK_FAR": 0.1,
        "PULL_SPEED": 0.1, "PULL_TIME": 0.9, "END_TIME": 1.1, "TILT": 0.5 * math.pi, "STIFFNESS": 20.0,
        "H_IMP": 1.25e-4, "POSITION_SLACK": 4e-5}
FINE_BENDING = 1e-5   # N m, before softening: creases wider than the mesh
FINE_SOFTENING = 58.0
FINE_BETA = 1e-4      # s, before softening
# The fine knot's ticks: NCG residual 1e-5 relative (each iteration cuts the residual
# 100-300 times), the vertex-block factor (its triangular solves are 1.7 times faster)
# and a preconditioner refresh every 200 ticks (a refresh is PSD projections of 47 k
# element Hessians and a factorisation). Chosen on the stiff knot's 7.5e-6 s ticks
# (bench/results/history_reef.md "At the paper's scale", "cheaper ticks").
FINE_PHANTOM = {"tolerance": 1e-5, "factorization": "vertex_block", "refresh": 200}
TILT = 0.0          # rad, the width's angle above the horizontal on the U-turns (tilt_at)
STIFFNESS = None    # N/m, first layer's stiffness (None: the default)
POSITION_SLACK = None  # m, radius of the far certificates' position envelopes (None: off)


def ya(x):
    if x <= -D:
        return N
    if x >= D:
        return W
    return 0.5 * (W + N) + 0.5 * (W - N) * math.sin(0.5 * math.pi * x / D)


def za(x):
    if abs(x) >= D:
        return H
    return -H * math.cos(math.pi * x / D)


def centreline_a(samples=4000):
    """Ribbon A's centreline, dense: upper leg from x = -LEG to D, U-turn, lower leg."""
    pts = []
    for k in range(samples + 1):
        x = -LEG + (D + LEG) * k / samples
        pts.append((x, ya(x), za(x)))
    for k in range(1, samples):
        th = math.pi * k / samples
        pts.append((D + W * math.sin(th), W * math.cos(th), H))
    for k in range(samples + 1):
        x = D - (D + LEG) * k / samples
        pts.append((x, -ya(x), za(x)))
    return pts


def resample(pts, edge):
    s = [0.0]
    for p, q in zip(pts, pts[1:]):
        s.append(s[-1] + math.dist(p, q))
    n = max(2, round(s[-1] / edge))
    out, j = [], 0
    for k in range(n + 1):
        t = s[-1] * k / n
        while j < len(s) - 2 and s[j + 1] < t:
            j += 1
        f = (t - s[j]) / (s[j + 1] - s[j])
        out.append(tuple(a + f * (b - a) for a, b in zip(pts[j], pts[j + 1])))
    return out


def tilt_at(p):
    """Angle of the ribbon's width above the horizontal at centreline point p (ribbon A):
    0 (flat) on the legs up to x = D/2, TILT on the U-turn, a smoothstep between."""
    if TILT == 0:
        return 0.0
    t = min(max((p[0] - 0.5 * D) / (0.5 * D), 0.0), 1.0)
    return TILT * t * t * (3 - 2 * t)


def strip(centre, flip):
    """Vertices (row k, column i: index k (ACROSS + 1) + i) and triangles of a strip
    WIDTH wide across the centreline, flat across."""
    verts, tris = [], []
    m = len(centre)
    tilt = [tilt_at(p) for p in centre]
    for k in range(m):
        p = centre[max(k - 1, 0)]
        q = centre[min(k + 1, m - 1)]
        tx, ty = q[0] - p[0], q[1] - p[1]
        norm = math.hypot(tx, ty)
        nx, ny = -ty / norm, tx / norm        # z x t, horizontal
        for i in range(ACROSS + 1):
            s = WIDTH * (i / ACROSS - 0.5)
            c, e = math.cos(tilt[k]), math.sin(tilt[k])
            x, y, z = (centre[k][0] + s * c * nx, centre[k][1] + s * c * ny,
                       centre[k][2] + s * e)
            if flip:
                x, y, z = -x, -y, -z
            verts.append([round(x, 7), round(y, 7), round(z, 7)])
    row = ACROSS + 1
    for k in range(m - 1):
        for i in range(ACROSS):
            a, b, c, d = k * row + i, k * row + i + 1, (k + 1) * row + i, (k + 1) * row + i + 1
            if (k + i) % 2 == 0:
                tris += [[a, b, d], [a, d, c]]
            else:
                tris += [[a, b, c], [b, d, c]]
    return verts, tris


def ribbon(name, flip):
    centre = resample(centreline_a(), EDGE)
    verts, tris = strip(centre, flip)
    row = ACROSS + 1
    rows = len(verts) // row
    ends = [k * row + i for k in (0, 1, rows - 2, rows - 1) for i in range(row)]
    pull = PULL_SPEED * PULL_TIME * (1 if flip else -1)
    return {
        "name": name,
        "shape": {"type": "mesh", "vertices": verts, "triangles": tris},
        "material": MATERIAL,
        "pins": ends,
        "pin_motion": {"keyframes": [{"time": 0.0, "offset": [0, 0, 0]},
                                     {"time": PULL_TIME, "offset": [round(pull, 6), 0, 0]}]},
        "integrator": "phantom",
        "phantom": {"h_imp": H_IMP, **PHANTOM},
    }


# Measured with clockwork run --profile on both variants (Release), docs/performance.md.
RUNTIME = ("phantom 1.7 min wall (2.9 s per frame, median of 3), explicit AVI (phantom keys "
           "removed) 3.8 min (6.4 s per frame, one run), each on one core of a 2-core AMD EPYC VM, "
           "the other core busy (2026-11-27); 0 intersecting frames in both; both jam at 8.7 cm of "
           "pull (turning points 1.74 and 1.78 cm apart) and hold the legs at 1.0 N (explicit 1.5 N)")

# Measured with clockwork run demos/reef_fine.json --profile (Release), docs/performance.md.
FINE_RUNTIME = ("8 min wall on one core of a 2-core AMD EPYC VM (2026-11-27, the other core busy; "
                "7-24 s per frame): pulled 9 cm per end, jammed at 0.9 s, turning points 1.64 cm "
                "apart at 1.1 s, 0 of 34 frames intersecting, 0 unconverged ticks, phantom mismatch "
                "at most 32 um; the ribbon is soft (E t 5.9 N/m, bending 3e-9 N m), so that explicit "
                "AVI's step is the paper's, 4.6e-5 s; explicit AVI (phantom keys removed) takes "
                "23 min, 2.9x the phantom's (docs/performance.md)")

DESCRIPTION = ("The reef knot of Harmon et al. 2009 (the phantom-mesh paper's Reef): two "
               "ribbons (1 cm wide, MESH, VERTS vertices in all) tied loosely in a reef knot — two "
               "interlocking bights, both parts of each ribbon on the same side of the "
               "other's bight — and pulled tight by their scripted ends (A's to -x, B's to "
               "+x, SPEED cm/s each, PULL cm in all, HOLD); no gravity; phantom integrator at h_imp = HIMP s. Full "
               "run (END s, FRAMES frames): RUNTIME. Generated by scripts/make_reef.py.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("runtime", nargs="?")
    ap.add_argument("--fine", action="store_true")
    for opt in ("edge", "thickness", "cell", "bending", "stiffness", "pull_speed", "pull_time",
                "end_time", "h_imp", "position_slack"):
        ap.add_argument("--" + opt.replace("_", "-"), type=float)
    ap.add_argument("--across", type=int)
    ap.add_argument("--frame-rate", type=int)
    ap.add_argument("--tick-rule", choices=("midpoint", "backward_euler"))
    args = ap.parse_args()
    g = globals()
    if args.fine:
        g.update(FINE)
        MATERIAL["young"] = MATERIAL["young"] / FINE_SOFTENING**2
        MATERIAL["bending"] = FINE_BENDING / FINE_SOFTENING**2
        PHANTOM["advanced"].update(FINE_PHANTOM)
        PHANTOM["rayleigh_beta"] = FINE_BETA * FINE_SOFTENING
    for opt in ("edge", "across", "thickness", "cell", "stiffness", "pull_speed", "pull_time",
                "end_time", "frame_rate", "h_imp", "position_slack"):
        if getattr(args, opt) is not None:
            g[opt.upper()] = getattr(args, opt)
    if args.bending is not None:
        MATERIAL["bending"] = args.bending
    if args.tick_rule == "backward_euler":
        PHANTOM.pop("rayleigh_beta")
        PHANTOM["advanced"]["tick_rule"] = args.tick_rule
    out = args.out or ("demos/reef_fine.json" if args.fine else "demos/reef.json")
    runtime = args.runtime or (FINE_RUNTIME if args.fine else RUNTIME)
    bodies = [ribbon("ribbonA", False), ribbon("ribbonB", True)]
    verts = sum(len(b["shape"]["vertices"]) for b in bodies)
    scene = {
        "name": "reef",
        "description": DESCRIPTION.replace("VERTS", str(verts)).replace("END", str(END_TIME))
        .replace("MESH", f"{ACROSS} cells across, {EDGE * 1000:g} mm edges along")
        .replace("SPEED", f"{PULL_SPEED * 100:g}").replace("PULL", f"{PULL_SPEED * PULL_TIME * 100:g}")
        .replace(", HOLD", f", then held still to {END_TIME:g} s" if END_TIME > PULL_TIME else "")
        .replace("HIMP", f"{H_IMP:g}")
        .replace("FRAMES", str(int(END_TIME * FRAME_RATE) + 1)).replace("RUNTIME", runtime),
        "end_time": END_TIME,
        "frame_rate": FRAME_RATE,
        "bodies": bodies,
        "contact": {"thickness": THICKNESS, "friction": 0.3,
                    "advanced": {"cell_size": CELL, "slack_far": SLACK_FAR}},
    }
    if STIFFNESS is not None:
        scene["contact"]["advanced"]["stiffness"] = STIFFNESS
    if POSITION_SLACK is not None:
        scene["contact"]["advanced"]["position_slack"] = POSITION_SLACK
    options = [o for o in vars(args) if o not in ("out", "runtime", "fine")]
    if all(getattr(args, o) is None for o in options):
        scene["description"] += " " + (FINE_ADVANCED_NOTE if args.fine else ADVANCED_NOTE)
    with open(out, "w") as f:
        json.dump(scene, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
