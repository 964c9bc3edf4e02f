"""The clockwork Python module (io/python/clockwork_module.cpp), a second client of the
World API: worlds built from NumPy arrays run the same physics as the scene files and
the C++ API, keep closed forms, and refuse bad input with the field named.

Run by CTest (tests/CMakeLists.txt) with PYTHONPATH at the module and CLOCKWORK_EXE,
CLOCKWORK_SOURCE_DIR set; one CTest test per test method."""
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
