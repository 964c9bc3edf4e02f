"""The clockwork Python module (io/python/clockwork_module.cpp), a second client of the
World API: worlds built from NumPy arrays run the same physics as the scene files and
the C++ API, keep closed forms, and refuse bad input with the field named.

Run by CTest (tests/CMakeLists.txt) with PYTHONPATH at the module and CLOCKWORK_EXE,
CLOCKWORK_SOURCE_DIR set; one CTest test per test method."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import clockwork as cw

EXE = os.environ.get("CLOCKWORK_EXE", "")
SOURCE = os.environ.get("CLOCKWORK_SOURCE_DIR", "")


def read_ply_positions(path):
    """x, y, z of every vertex of an ASCII PLY frame written by the tool."""
    with open(path) as f:
        lines = f.read().splitlines()
    count = next(int(l.split()[2]) for l in lines if l.startswith("element vertex"))
    start = lines.index("end_header") + 1
    return np.array([[float(v) for v in l.split()[:3]] for l in lines[start:start + count]])


def hanging_cloth():
    """demos/hanging_cloth.json, written in Python."""
    w = cw.World(name="hanging_cloth", end_time=3.0, frame_rate=30, gravity=(0, 0, -9.81))
    vertices, triangles = cw.grid(1.0, 1.0, 24, 24, center=(0, 0, 1.5))
    w.add_shell("cloth", vertices, triangles, area_density=0.1, young=500.0, poisson=0.3,
                bending=1e-4, pins=[24 * 25, 24 * 25 + 24])
    return w, vertices


class WorldTest(unittest.TestCase):
    def test_hanging_cloth_matches_the_demo_run_by_the_tool(self):
        w, start = hanging_cloth()
        w.advance_to(0.2)
        x = w.positions("cloth")
        self.assertEqual(x.shape, (625, 3))
        self.assertEqual(x.dtype, np.float64)
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([EXE, "run", os.path.join(SOURCE, "demos/hanging_cloth.json"), "--out", out,
                            "--overwrite", "--until", "0.2"], check=True, capture_output=True)
            frame = read_ply_positions(os.path.join(out, "frames", "cloth_00006.ply"))
        # The frame at t = 0.2 s holds the same doubles (written with 17 digits).
        np.testing.assert_array_equal(x, frame)
        self.assertGreater(np.abs(x - start).max(), 0.01)  # it moved
        # The pinned corners did not.
        np.testing.assert_array_equal(x[[600, 624]], start[[600, 624]])

    def test_solid_in_free_fall_follows_backward_euler(self):
        h, n = 0.01, 25
        g = np.array([0.0, 0.0, -9.81])
        v0 = np.array([0.3, 0.0, 2.0])
        w = cw.World(name="fall", end_time=1.0, gravity=tuple(g))
        vertices, tets = cw.tet_bar((0, 0, 0), 1, 1, 2, 0.1)
        w.add_solid("bar", vertices, tets, young=1e6, poisson=0.3, density=500.0, h=h,
                    velocity=tuple(v0))
        w.advance_to(n * h)
        expected = vertices + n * h * v0 + h * h * g * (n * (n + 1) / 2)
        np.testing.assert_allclose(w.positions("bar"), expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(w.velocities("bar"), np.tile(v0 + n * h * g, (len(vertices), 1)),
                                   rtol=0, atol=1e-12)
        self.assertAlmostEqual(w.time, n * h)

    def test_solid_dropped_on_the_ground_never_gains_energy_and_comes_to_rest(self):
        w = cw.World(name="drop", end_time=2.0, gravity=(0, 0, -9.81))
        vertices, tets = cw.tet_bar((-0.05, -0.05, 0.05), 2, 2, 2, 0.05)
        w.add_solid("block", vertices, tets, young=2e5, poisson=0.3, density=1000.0, h=0.005,
                    rayleigh_beta=0.01)
        ground, triangles = cw.ground((0, 0, 0), 1.0)
        w.add_obstacle("ground", ground, triangles)
        w.enable_contact(friction=0.5)
        e0 = w.total_energy()
        energies = []
        for k in range(1, 201):
            w.advance_to(0.01 * k)
            energies.append(w.total_energy())
        self.assertLessEqual(max(energies), e0 * (1 + 1e-9))
        self.assertLess(np.abs(w.velocities("block")).max(), 1e-3)  # at rest after 2 s
        self.assertGreater(w.positions("block")[:, 2].min(), 0.0)

    def test_schroeder_block_dropped_on_a_ground_comes_to_rest_above_it(self):
        # A 0.1 m cube 4 mm above a ground obstacle, with its exact surface and as a bare
        # mesh (the §6 mesh collider), in the asynchronous and fully-implicit schemes.
        rest = {}
        for surface in (None, {"type": "ground", "center": (0, 0, 0), "half_size": 0.6}):
            for scheme in ("asynchronous", "fully_implicit"):
                with self.subTest(scheme=scheme, exact=surface is not None):
                    w = cw.World(name="schroeder_drop", end_time=2.0, frame_rate=24, gravity=(0, 0, -9.81))
                    vertices, tets = cw.tet_bar((-0.05, -0.05, 0.004), 2, 2, 2, 0.05)
                    w.add_solid("block", vertices, tets, young=2e5, poisson=0.3, density=500.0,
                                rayleigh_beta=0.01, integrator="schroeder", scheme=scheme, frame_dt=1 / 24)
                    ground, triangles = cw.ground((0, 0, 0), 0.6, divisions=4)
                    w.add_obstacle("ground", ground, triangles, surface=surface)
                    w.enable_contact(friction=0.5, thickness=0.001)
                    e0 = w.total_energy()
                    energies = []
                    for k in range(1, 37):
                        w.advance_to(k / 24)
                        energies.append(w.total_energy())
                    x, v = w.positions("block"), w.velocities("block")
                    self.assertIsInstance(x, np.ndarray)
                    self.assertEqual(x.shape, vertices.shape)
                    self.assertLessEqual(max(energies), e0 * (1 + 1e-3))
                    # It fell (4 mm less the colliders' 2 thicknesses) and rests on them.
                    self.assertAlmostEqual(x[:, 2].min(), 0.002, delta=1e-6)
                    self.assertLess(np.abs(v).max(), 1e-6)
                    self.assertLess(energies[-1], e0 - 0.9 * 0.5 * 9.81 * 0.002)
                    rest[(scheme, surface is not None)] = x
        for scheme in ("asynchronous", "fully_implicit"):
            np.testing.assert_allclose(rest[(scheme, False)], rest[(scheme, True)], rtol=0, atol=1e-9)

    def test_zhao_and_schroeder_blocks_match_the_same_scene_run_by_the_tool(self):
        # A block falling and spinning, its top at h_L / 4 (Zhao) or in the asynchronous
        # scheme with the scene file's defaults (ε 0.5, substep from the stability limit).
        zhao = {"h_L": 0.01, "regions": [{"m": 4, "box": {"min": [-1, -1, 0.09], "max": [1, 1, 1]}}]}
        cases = [("zhao", zhao, dict(integrator="zhao", h_L=0.01, m=4, region_min=(-1, -1, 0.09),
                                      region_max=(1, 1, 1))),
                 ("schroeder", {"frame_dt": 0.02}, dict(integrator="schroeder", frame_dt=0.02))]
        for integrator, json_settings, kwargs in cases:
            with self.subTest(integrator=integrator):
                w = cw.World(name="spin", end_time=0.2, frame_rate=30, gravity=(0, 0, -9.81))
                vertices, tets = cw.tet_bar((0, 0, 0), 2, 2, 2, 0.05)
                w.add_solid("block", vertices, tets, young=2e5, poisson=0.3, density=500.0,
                            angular_velocity=(0, 3, 1), **kwargs)
                w.advance_to(0.2)
                x = w.positions("block")
                scene = {"name": "spin", "end_time": 0.2, "frame_rate": 30, "gravity": [0, 0, -9.81],
                         "bodies": [{"name": "block",
                                     "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 2, 2],
                                               "cell": 0.05},
                                     "material": {"model": "corotational", "young": 2e5, "poisson": 0.3,
                                                  "density": 500.0},
                                     "velocity": {"angular": [0, 3, 1]},
                                     "integrator": integrator, integrator: json_settings}]}
                with tempfile.TemporaryDirectory() as out:
                    path = os.path.join(out, "spin.json")
                    with open(path, "w") as f:
                        json.dump(scene, f)
                    subprocess.run([EXE, "run", path, "--out", os.path.join(out, "run"), "--until", "0.2"],
                                   check=True, capture_output=True)
                    frame = read_ply_positions(os.path.join(out, "run", "frames", "block_00006.ply"))
                np.testing.assert_array_equal(x, frame)
                self.assertGreater(np.abs(x - vertices).max(), 0.05)  # it fell and turned

    def test_bad_integrator_and_surface_arguments_raise_naming_the_argument(self):
        w = cw.World(name="bad_args")
        vertices, tets = cw.tet_bar((0, 0, 0), 1, 1, 1, 0.1)
        solid = dict(young=1e6, poisson=0.3, density=500.0)
        cases = [
            (dict(integrator="verlet"), "integrator: expected 'backward_euler', 'zhao' or 'schroeder', got 'verlet'"),
            (dict(integrator="zhao", m=2, region_min=(0, 0, 0), region_max=(1, 1, 1)), "h_L: required by integrator='zhao'"),
            (dict(integrator="zhao", h_L=0.01, m=0, region_min=(0, 0, 0), region_max=(1, 1, 1)),
             "m: h_L / h_S must be a positive integer, got 0"),
            (dict(integrator="zhao", h_L=0.01, m=2, region_min=(5, 5, 5), region_max=(6, 6, 6)),
             "region_min, region_max: the box contains no vertex of the solid"),
            (dict(integrator="zhao", h_L=0.01, m=2), "region_min: required by integrator='zhao' (the small-step region S as an axis box)"),
            (dict(integrator="schroeder"), "frame_dt: required by scheme='asynchronous'"),
            (dict(integrator="schroeder", scheme="explicit", frame_dt=0.01),
             "scheme: expected 'asynchronous', 'semi_implicit' or 'fully_implicit', got 'explicit'"),
            (dict(integrator="schroeder", frame_dt=-0.01), "frame_dt: must be > 0, got -0.01"),
            (dict(integrator="schroeder", frame_dt=0.01, epsilon=2.0), "epsilon: must be in [0, 1], got 2.0"),
            (dict(integrator="schroeder", scheme="fully_implicit", frame_dt=0.01, epsilon=0.5),
             "epsilon: only for scheme='asynchronous'"),
            (dict(h=0.0), "h: must be > 0, got 0.0"),
            (dict(integrator="schroeder", frame_dt=0.01, h=0.01),
             "h: only for integrator='backward_euler' (this solid's is 'schroeder')"),
            (dict(h_L=0.01), "h_L: only for integrator='zhao' (this solid's is 'backward_euler')"),
            (dict(frame_dt=0.01), "frame_dt: only for integrator='schroeder' (this solid's is 'backward_euler')"),
        ]
        for kwargs, message in cases:
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(ValueError) as e:
                    w.add_solid("s", vertices, tets, **solid, **kwargs)
                self.assertEqual(str(e.exception), message)
        ground, triangles = cw.ground((0, 0, 0), 1.0)
        surfaces = [
            ({"type": "plane"}, "surface: type: expected 'ground', 'sphere' or 'capsule', got 'plane'"),
            ({"type": "sphere", "center": (0, 0, 0)}, "surface: 'radius' is required"),
            ({"type": "sphere", "center": (0, 0, 0), "radius": -1.0}, "surface: sphere radius -1 must be positive"),
            ({"type": "ground", "center": (0, 0), "half_size": 1.0}, "surface: 'center' must be 3 numbers"),
            ({"type": "ground", "center": (0, 0, 0), "half_size": 1.0, "radius": 2},
             "surface: unknown key 'radius' for a ground"),
            ({"type": "capsule", "a": (0, 0, 0), "b": (0, 0, 0), "radius": 0.1},
             "surface: capsule ends (0, 0, 0) and (0, 0, 0) coincide"),
        ]
        for surface, message in surfaces:
            with self.subTest(surface=str(surface)):
                with self.assertRaises(ValueError) as e:
                    w.add_obstacle("ground", ground, triangles, surface=surface)
                self.assertEqual(str(e.exception), message)

    def test_bad_input_names_the_call_and_the_field(self):
        w = cw.World(name="bad")
        vertices, triangles = cw.grid(1.0, 1.0, 2, 2, center=(0, 0, 0))
        with self.assertRaises(ValueError) as e:
            w.add_shell("cloth", vertices, triangles, area_density=0.1, young=-5.0, poisson=0.3)
        self.assertEqual(str(e.exception), "World: add_shell 'cloth': material/young: must be > 0, got -5")
        with self.assertRaises(ValueError) as e:
            w.add_shell("cloth", vertices[:, :2], triangles, area_density=0.1, young=5.0, poisson=0.3)
        self.assertEqual(str(e.exception), "vertices: expected an array of shape (n, 3)")
        with self.assertRaises(ValueError) as e:
            w.add_shell("cloth", vertices, triangles + 100, area_density=0.1, young=5.0, poisson=0.3)
        self.assertIn("triangles: row 0 holds vertex 100", str(e.exception))
        with self.assertRaises(ValueError) as e:
            w.add_solid("s", *cw.tet_bar((0, 0, 0), 1, 1, 1, 0.1), young=1e6, poisson=0.3, density=1.0,
                        model="neo")
        self.assertEqual(str(e.exception), "model: expected 'linear' or 'corotational', got 'neo'")
        with self.assertRaises(ValueError) as e:
            w.advance_to(0.1)
        self.assertEqual(str(e.exception), "World: needs at least one body")
        w.add_shell("cloth", vertices, triangles, area_density=0.1, young=5.0, poisson=0.3)
        with self.assertRaises(ValueError) as e:
            w.positions("nobody")
        self.assertEqual(str(e.exception), "World: no body named 'nobody'")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
