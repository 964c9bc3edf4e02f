#!/usr/bin/env python3
"""Writes demos/cape.json: the phantom-mesh paper's cape in wind (§5.2, Table 1, Fig. 7)
built procedurally — a kinematic character of capsules and a sphere walking forward on
a script, wearing a cape of 77 x 76 = 5852 vertices (paper: 5854) pinned along its top
edge behind the shoulders, in a strong head wind.

Usage: scripts/make_cape.py [OUT]                  (default demos/cape.json)
       scripts/make_cape.py --from-behind [OUT]    (default demos/cape_behind.json)

--from-behind writes the body-contact variant: the same character and cape, the cape
1 cm behind the back, the wind from behind (5 m/s, 4 m/s relative to the walk) pressing
it onto the back, hips and legs. Its phantom ticks see the obstacles
(`obstacle_contact`, docs/phantom.md "Obstacles in the tick"): without them the cape's
primary vertices at the contact are kicked away from the body at up to ~9 m/s and local
edge strain reaches 20-50 % within 30 ms (docs/performance.md); with them it stays
below 2 %. Its `bending` is 2e-4 N·m (0.3 mm of the membrane's material) instead of
2e-5: wrapped round the legs the thinner sheet folds at the mesh scale, which the
implicit tick cannot follow (8 % strain in the side flaps by 0.13 s).
"""
import json
import math
import sys

# The character faces +x and walks along +x; z is up. Obstacles only translate
# (docs/scene-format.md, "motion"), so the walk is the whole body gliding forward with
# a bob of the gait (down at each foot fall, twice per stride), the same for every
# part; the cape's pins follow the same keyframes (`pin_motion`).
WALK_SPEED = 1.0      # m/s
BOB = 0.03            # m, vertical amplitude of the gait
STEP_PERIOD = 0.5     # s per step (one bob)
END_TIME = 1.0        # s

# Cape: 0.70 m wide at the shoulders, 1.05 m long, hanging 4 cm behind the back.
CAPE_WIDTH = 0.70
CAPE_LENGTH = 1.05
CAPE_CELLS = (76, 75)  # (across, down): 77 x 76 = 5852 vertices
CAPE_TOP = 1.52        # m, height of the pinned edge (just above the shoulders' top)
CAPE_X = -0.20         # m, plane of the cape behind the character's back (x = -0.16)


def r6(v):
    return [round(c, 6) for c in v]


def capsule(name, a, b, radius):
    return {"name": name, "shape": {"type": "capsule", "a": r6(a), "b": r6(b), "radius": radius,
                                    "segments": 12, "rings": 3}}


def character():
    """Torso, shoulders, neck, head, arms and legs; 10 parts, overlapping at the joints."""
    parts = [
        capsule("torso", [0, 0, 0.98], [0, 0, 1.32], 0.15),
        capsule("shoulders", [0, -0.19, 1.40], [0, 0.19, 1.40], 0.07),
        capsule("neck", [0, 0, 1.40], [0, 0, 1.52], 0.05),
        {"name": "head", "shape": {"type": "sphere", "center": [0, 0, 1.64], "radius": 0.11,
                                   "subdivisions": 2}},
        capsule("arm_left", [0, 0.25, 1.38], [0.03, 0.27, 0.82], 0.045),
        capsule("arm_right", [0, -0.25, 1.38], [0.03, -0.27, 0.82], 0.045),
        capsule("hips", [0, -0.11, 0.95], [0, 0.11, 0.95], 0.10),
        capsule("leg_left", [0, 0.10, 0.90], [0.02, 0.11, 0.08], 0.07),
        capsule("leg_right", [0, -0.10, 0.90], [-0.02, -0.11, 0.08], 0.07),
    ]
    return parts


def walk_keyframes():
    """Piecewise-linear translation: forward at WALK_SPEED, z bobbing by BOB (a
    triangle wave, down at each foot fall), rest after END_TIME."""
    keys = []
    steps = int(round(END_TIME / STEP_PERIOD))
    for i in range(2 * steps + 1):
        t = 0.5 * STEP_PERIOD * i
        z = 0.0 if i % 2 == 0 else -BOB
        keys.append({"time": round(t, 6), "offset": r6([WALK_SPEED * t, 0.0, z])})
    return keys


def cape():
    nu, nv = CAPE_CELLS
    # The grid's axes: u across the back (+y), v up (+z); vertex (i, j) has index
    # j (nu + 1) + i, so the top edge (v = 1) is the last row.
    top_row = [nv * (nu + 1) + i for i in range(nu + 1)]
    return {
        "name": "cape",
        "shape": {"type": "grid", "size": [CAPE_WIDTH, CAPE_LENGTH], "resolution": [nu, nv],
                  "center": [CAPE_X, 0.0, CAPE_TOP - 0.5 * CAPE_LENGTH],
                  "axes": [[0, 1, 0], [0, 0, 1]]},
        # A heavy woollen cloth: 0.25 kg/m², stretch stiffness E·t = 3e4 N/m (woven
        # fabrics: roughly 1e3-1e5 N/m), bending 2e-5 N·m. The paper's bound is strain
        # < 5 %; measured over the full run: edge strain <= 0.36 % (scripts/edge_strain.py).
        # Explicit AVI periods: 9.5e-6 s (paper: 4.41e-6 s).
        "material": {"area_density": 0.25, "young": 3e4, "poisson": 0.3, "bending": 2e-5},
        "pins": top_row,
        "pin_motion": {"keyframes": walk_keyframes()},
        "integrator": "phantom",
        # The paper's h_imp; stiffness-proportional damping as in the hats
        # (docs/phantom.md, Damping). The cape turns by up to ~0.01 rad per tick while
        # its membrane is ~1000x stiffer than the inertia term, so a preconditioner one
        # tick old is already poor: with the default stall_iterations (20) most ticks
        # refactor after 20 iterations (20.9 per tick); refactoring after 6 takes 9.2
        # per tick and 16 % less solver time (first 0.1 s: 54.6 s against 65.1 s).
        # The solves are most of the run: the vertex-block factorisation makes them
        # 1.7x faster (docs/performance.md, "Block factorisation").
        # The numerical knobs sit in "advanced" (docs/scene-format.md); the tolerance is
        # the default 1e-6.
        "phantom": {"h_imp": 1e-3, "rayleigh_beta": 1e-4,
                    "advanced": {"solver": "ncg", "stall_iterations": 6, "factorization": "vertex_block"}},
    }


BEHIND_DESCRIPTION = (
    "Body-contact variant of the cape (scripts/make_cape.py --from-behind): the character "
    "walks forward at 1 m/s with a 5 m/s wind from behind that presses the cape (5852 "
    "vertices, starting 1 cm behind the back at the walking speed) onto the torso, hips "
    "and legs; phantom integrator at h_imp = 1e-3 s, rayleigh_beta 1e-3, with the "
    "obstacles in its ticks (obstacle_contact): edge strain <= 1.8 %, no intersecting frame. "
    "Full run (1 s, 30 frames): 13.1 min on a 2-core AMD EPYC VM under load (3-4), "
    "Release (26.2 s per frame). See docs/performance.md, \"The cape pressed onto the "
    "character\". " + 'Advanced keys: phantom solver "ncg" (the phantom-mesh paper\'s nonlinear CG with a Cholesky preconditioner refreshed every 50 ticks); stall_iterations 6 (as the cape); obstacle_contact true (the ticks see the torso: without it the edge strain reached 31 % by 0.032 s, docs/performance.md); contact cell_size 0.016 m (as the cape).')


def from_behind(scene):
    """The body-contact variant (module docstring): the cape 1 cm behind the back
    (x = -0.15), moving with the walk at t = 0 (so it does not fall behind before the
    wind brings it on), a 5 m/s wind from behind with 1 m/s of cross wind (24 Pa normal
    to the sheet relative to the walk), and rayleigh_beta 1e-3: pressed onto the body
    the cape is compressed across its width into folds where the membrane's energy is
    not convex, and with 1e-4 NCG needed 80.8 iterations per tick over 0.033-0.067 s
    (7 unconverged ticks) against 33.8 (1 unconverged) with 1e-3."""
    scene["name"] = "cape_behind"
    scene["description"] = BEHIND_DESCRIPTION
    scene["wind"] = {"velocity": [5.0, 1.0, 0.0], "drag": 6.0}
    cape_body = scene["bodies"][0]
    cape_body["shape"]["center"][0] = -0.16
    cape_body["velocity"] = {"linear": r6([WALK_SPEED, 0.0, -BOB / (0.5 * STEP_PERIOD)])}
    cape_body["phantom"]["rayleigh_beta"] = 1e-3
    cape_body["phantom"]["advanced"]["obstacle_contact"] = True
    # Measured and shipped with the default (scalar) factorisation.
    del cape_body["phantom"]["advanced"]["factorization"]
    cape_body["material"]["bending"] = 2e-4
    return scene


DESCRIPTION = ("The phantom-mesh paper's cape in wind: a character of capsules and a sphere "
               "walks forward at 1 m/s into a 10 m/s head wind, wearing a cape of 5852 "
               "vertices pinned at the shoulders; phantom integrator at h_imp = 1e-3 s. "
               "Full run (1 s, 30 frames): 2.5 min on one core of a 2-core AMD EPYC VM, the other "
               "core busy, Release (5.1 s per frame, median of 3; implicit solves 61 %, certificates "
               "35 %; vertex-block factorisation); edge strain <= 0.35 %. Explicit AVI (the phantom "
               "keys removed): 54 min on one core, the other busy (107 s per frame, 21.2x slower; "
               "one run, 2026-11-27), edge strain <= 1.75 %; 0 intersecting frames in both. Generated by "
               "scripts/make_cape.py. " + 'Advanced keys: phantom solver "ncg" (the phantom-mesh paper\'s nonlinear CG with a Cholesky preconditioner refreshed every 50 ticks); stall_iterations 6 (the cape turns fast and a stale preconditioner is poor: refactoring after 6 stalled iterations instead of 20 takes 9.2 iterations per tick instead of 20.9, 16 % less solver time); factorization "vertex_block" (1.7x faster solves, the solves being most of the run); contact cell_size 0.016 m (the default, 2.7 cm, pairs 320 k self-contact triangle pairs instead of 140 k: certificate upkeep over 0.2 s 75 s instead of 22 s, bench/results/history_cape.md).')


def main():
    args = sys.argv[1:]
    behind = "--from-behind" in args
    args = [a for a in args if a != "--from-behind"]
    out = args[0] if args else ("demos/cape_behind.json" if behind else "demos/cape.json")
    obstacles = character()
    keys = walk_keyframes()
    for o in obstacles:
        o["motion"] = {"keyframes": keys}
    obstacles.append({"name": "ground", "shape": {"type": "ground", "center": [1.0, 0, 0],
                                                  "half_size": 2.5, "divisions": 4}})
    scene = {
        "name": "cape",
        "description": DESCRIPTION,
        "end_time": END_TIME,
        "frame_rate": 30,
        "gravity": [0, 0, -9.81],
        # A strong head wind with a little cross wind, so the cape streams behind and
        # flutters sideways. Linear normal drag c (u·N) n: c = 6 kg/(m²·s) gives 60 Pa
        # at 10 m/s normal to the sheet, about ½ ρ u² of air.
        "wind": {"velocity": [-10.0, 2.0, 0.0], "drag": 6.0},
        "bodies": [cape()],
        # Hash-grid cell 1.6 cm (the default, twice the mean edge, is 2.7 cm): the
        # self-contact triangle pairs of the 11 k-triangle cape drop from 320 k to 140 k
        # and certificate maintenance over the first 0.2 s from 75 s to 22 s
        # (bench/results/history_cape.md, "The cape in wind").
        "contact": {"friction": 0.3, "advanced": {"cell_size": 0.016}},
        "obstacles": obstacles,
    }
    if behind:
        scene = from_behind(scene)
    with open(out, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
