#pragma once
/// Square cloth scenes for benchmarks, built with the World (io/world/world.hpp).
#include "io/mesh/mesh.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "io/scene/scene.hpp"
#include "io/world/world.hpp"

namespace clockwork::bench {

/// An n-by-n-cell cloth (n+1)² vertices, pinned at two corners, under gravity.
/// `bending` false leaves only membrane (and gravity if `gravity`) stencils.
inline Scene make_cloth_scene(int n, bool bending = true, bool gravity = true) {
  World w({.name = "bench_cloth",
           .end_time = 1000.0,
           .frame_rate = 1.0,
           .gravity = gravity ? Vec3(0.0, 0.0, -9.81) : Vec3::Zero()});
  ShellSpec cloth;
  cloth.name = "cloth";
  cloth.mesh = make_grid(1.0, 1.0, n, n, {0.0, 0.0, 1.0}, Vec3::UnitX(), Vec3::UnitY());
  cloth.material = ShellMaterial{.area_density = 0.1, .young = 500.0, .poisson = 0.3,
                                 .bending = bending ? 1e-4 : 0.0};
  // The grid's u0v1 and u1v1 corners (vertex j (n + 1) + i).
  const Index n1 = static_cast<Index>(n) + 1;
  cloth.pins = {static_cast<Index>(n) * n1, static_cast<Index>(n) * n1 + static_cast<Index>(n)};
  w.add_shell(std::move(cloth));
  return w.release();
}

/// demos/cloth_drop.json, written with the API: a 24 × 24 cloth dropped onto a sphere
/// and the ground, Coulomb friction 0.4, the contact grid's cell one grid edge.
inline Scene make_cloth_drop_scene() {
  World w({.name = "cloth_drop", .end_time = 2.5, .frame_rate = 30, .gravity = {0, 0, -9.81}});
  // The demo's axes [1, 0, 0] and [0, 0.1, 0.995], made orthonormal as the scene
  // reader does.
  const Vec3 u = Vec3::UnitX(), v = (Vec3(0, 0.1, 0.995) - Vec3(0, 0.1, 0.995).dot(u) * u).normalized();
  ShellSpec cloth;
  cloth.name = "cloth";
  cloth.mesh = make_grid(1.2, 1.2, 24, 24, {0.05, 0.15, 1.3}, u, v);
  cloth.material = ShellMaterial{.area_density = 0.1, .young = 500.0, .poisson = 0.3, .bending = 1e-4};
  w.add_shell(std::move(cloth));
  w.add_obstacle({.name = "ball", .mesh = make_sphere({0, 0, 0.3}, 0.3, 3)});
  w.add_obstacle({.name = "ground", .mesh = make_ground({0, 0, 0}, 2.5, 10)});
  ContactSpec contact;
  contact.settings.friction = 0.4;
  contact.settings.cell_size = 0.05;
  w.enable_contact(contact);
  return w.release();
}

}  // namespace clockwork::bench
