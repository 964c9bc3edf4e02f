#pragma once
/// Typed builders for the specs the physics tests hand to the World (io/world/world.hpp):
/// the scene format's "grid" and "tet_bar" shapes with their materials, a Zhao region,
/// the "ground" obstacle, named grid corners, vertices in a box, initial velocities.
/// Each builds the same spec the JSON front-end (io/scene/scene.cpp) reads from the
/// equivalent scene object, so that a test moved off JSON runs the same floating-point
/// operations.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "io/mesh/mesh.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/scene/scene.hpp"
#include "io/world/world.hpp"

namespace clockwork::test {

/// The scene of a World, moved out (what build_scene returns for a document).
inline Scene build(World world) { return world.release(); }

/// A grid's axes as the scene reader leaves them: `u` normalised, `v` made orthogonal
/// to it and normalised (exact for the unit axes).
inline std::pair<Vec3, Vec3> grid_axes(Vec3 u, Vec3 v) {
  u.normalize();
  v = (v - v.dot(u) * u).normalized();
  return {u, v};
}

/// A "grid" shape: `size_u` × `size_v` m of `nu` × `nv` cells centred on `center`,
/// spanned by the axes `u` and `v` (grid_axes).
inline ShellSpec cloth_spec(std::string name, double size_u, double size_v, int nu, int nv,
                            const Vec3& center, const ShellMaterial& material,
                            const Vec3& u = Vec3::UnitX(), const Vec3& v = Vec3::UnitY()) {
  ShellSpec s;
  s.name = std::move(name);
  const auto [au, av] = grid_axes(u, v);
  s.mesh = make_grid(size_u, size_v, nu, nv, center, au, av);
  s.material = material;
  return s;
}

/// A square grid: `size` m, `res` × `res` cells.
inline ShellSpec cloth_spec(std::string name, double size, int res, const Vec3& center,
                            const ShellMaterial& material, const Vec3& u = Vec3::UnitX(),
                            const Vec3& v = Vec3::UnitY()) {
  return cloth_spec(std::move(name), size, size, res, res, center, material, u, v);
}

/// The vertex a grid pin name ("u0v0", "u1v0", "u0v1", "u1v1") picks in a grid of
/// `nu` × `nv` cells.
inline Index grid_corner(int nu, int nv, const std::string& corner) {
  const Index i = corner[1] == '0' ? 0 : static_cast<Index>(nu);
  const Index j = corner[3] == '0' ? 0 : static_cast<Index>(nv);
  return j * static_cast<Index>(nu + 1) + i;
}

/// A solid of `mesh`, one material for every tet, model `kind`; no integrator yet.
inline SolidSpec solid_spec(std::string name, TetMesh mesh, const TetMaterial& material,
                            FemKind kind = FemKind::Linear) {
  SolidSpec s;
  s.name = std::move(name);
  s.mesh = std::move(mesh);
  s.material.kind = kind;
  s.material.per_tet.assign(s.mesh.tets.size(), material);
  return s;
}

/// A "tet_bar" solid: `cells` cubes of `cell` m from `origin`.
inline SolidSpec block_spec(std::string name, const Vec3& origin, std::array<int, 3> cells,
                            double cell, const TetMaterial& material,
                            FemKind kind = FemKind::Linear) {
  return solid_spec(std::move(name), make_tet_bar(origin, cells[0], cells[1], cells[2], cell),
                    material, kind);
}

/// A Zhao integrator at large step `h_L` with one small-step region "S1" at `m`.
inline ZhaoSpec zhao_spec(double h_L, int m, std::vector<Index> region) {
  ZhaoSpec z;
  z.settings.h_L = h_L;
  z.regions.push_back({.name = "S1", .vertices = std::move(region), .m = m});
  return z;
}

/// A square "ground" obstacle of `half_size` m around `center` (z up), `divisions` ×
/// `divisions` squares, with its exact surface (what Schroeder solids' solves see).
inline ObstacleSpec ground_spec(const Vec3& center, double half_size, int divisions = 8,
                                std::string name = "ground") {
  return {.name = std::move(name),
          .mesh = make_ground(center, half_size, divisions),
          .surface = StaticCollider::ground(center, half_size)};
}

/// `w` with the sweep's ground (at z = 0, `half_size` m) and contact: 1 mm layers, μ = 0.5
/// (scripts/sweep_solids.py's drops).
inline World on_sweep_ground(World w, double half_size) {
  w.add_obstacle(ground_spec({0, 0, 0}, half_size));
  ContactSpec contact;
  contact.settings.thickness = 0.001;
  contact.settings.friction = 0.5;
  w.enable_contact(contact);
  return w;
}

/// The vertices inside the box [lo, hi] (a scene's {"box": {"min", "max"}}).
inline std::vector<Index> vertices_in_box(const std::vector<Vec3>& x, const Vec3& lo, const Vec3& hi) {
  std::vector<Index> out;
  for (Index a = 0; a < x.size(); ++a)
    if ((x[a].array() >= lo.array()).all() && (x[a].array() <= hi.array()).all()) out.push_back(a);
  return out;
}

/// Per-vertex fixed flags of the vertices inside [lo, hi] (a solid's {"pins": {"box"}}).
inline std::vector<bool> fixed_in_box(const std::vector<Vec3>& x, const Vec3& lo, const Vec3& hi) {
  std::vector<bool> fixed(x.size(), false);
  for (Index a : vertices_in_box(x, lo, hi)) fixed[a] = true;
  return fixed;
}

/// A scene's "velocity" object: rigid motion plus Gaussian noise of deviation `random`.
inline VelocitySpec velocity(const Vec3& linear, const Vec3& angular = Vec3::Zero(), double random = 0.0) {
  return {.linear = linear, .angular = angular, .random = random, .given = true};
}

}  // namespace clockwork::test
