#pragma once
// Phantom-body scenes shared by the phantom tests: typed specs for the World
// (io/world/world.hpp), and the JSON documents the scene-reader tests refuse.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/types.hpp"
#include "io/world/world.hpp"
#include "tests/support/advanced.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork::test {

/// A phantom-mesh tick at `h_imp` solved by `solver` ("newton" or "ncg"; the default:
/// NCG) to `tolerance` (0: the default).
inline PhantomSpec phantom_spec(double h_imp, const std::string& solver = "", double tolerance = 0.0) {
  PhantomSpec p;
  p.h_imp = h_imp;
  if (solver == "newton") p.solver.kind = ImplicitSolverKind::ProjectedNewton;
  if (solver == "ncg") p.solver.kind = ImplicitSolverKind::PreconditionedNcg;
  if (tolerance > 0.0) p.solver.tolerance = tolerance;
  return p;
}

/// A `size` m square grid of `res` × `res` cells centred on `center` (area density
/// 0.1 kg/m², poisson 0.3, bending 1e-4 N m) integrated by the phantom mesh.
inline ShellSpec phantom_cloth_spec(const std::string& name, int res, double size, const Vec3& center,
                                    double young, PhantomSpec phantom) {
  ShellSpec s = cloth_spec(name, size, res, center,
                           {.area_density = 0.1, .young = young, .poisson = 0.3, .bending = 1e-4});
  s.phantom = std::move(phantom);
  return s;
}

/// The cloth of hanging_cloth (below), its axes `u`, `v` (orthonormal).
inline ShellSpec hanging_cloth_spec(double young, int res, const std::string& solver,
                                    const Vec3& v = Vec3::UnitZ()) {
  ShellSpec s = cloth_spec("c", 0.5, res, Vec3(0, 0, 1), {.area_density = 0.1, .young = young, .poisson = 0.3,
                                                          .bending = 1e-4},
                           Vec3::UnitX(), v);
  s.phantom = phantom_spec(1e-3, solver, 1e-6);
  s.pins = {grid_corner(res, res, "u0v1"), grid_corner(res, res, "u1v1")};
  return s;
}

/// A world of 1 s at 30 frames per second (the tests' default) holding `body`.
inline World world_of(const std::string& name, ShellSpec body, const Vec3& gravity = Vec3::Zero(),
                      double end_time = 1.0) {
  World w({.name = name, .end_time = end_time, .frame_rate = 30, .gravity = gravity});
  w.add_shell(std::move(body));
  return w;
}

/// hanging_cloth's world: 10 s under gravity.
inline World hanging_world(ShellSpec body) {
  return world_of("hang", std::move(body), {0, 0, -9.81}, 10.0);
}

inline nlohmann::json phantom_cloth(const std::string& name, int res, double size, const Vec3& center,
                     double young, const nlohmann::json& phantom) {
  return {{"name", name},
          {"shape", {{"type", "grid"}, {"size", {size, size}}, {"resolution", {res, res}},
                     {"center", {center.x(), center.y(), center.z()}}}},
          {"material", {{"area_density", 0.1}, {"young", young}, {"poisson", 0.3}, {"bending", 1e-4}}},
          {"integrator", "phantom"},
          {"phantom", with_advanced("phantom", phantom)}};
}

/// A phantom cloth hanging from two corners (JSON; the reader's refusals are tested on it).
inline nlohmann::json hanging_cloth(double young, int res, const std::string& solver) {
  nlohmann::json body = phantom_cloth("c", res, 0.5, Vec3(0, 0, 1), young,
                              {{"h_imp", 1e-3}, {"solver", solver}, {"tolerance", 1e-6}});
  body["shape"]["axes"] = {{1, 0, 0}, {0, 0, 1}};
  body["pins"] = {"u0v1", "u1v1"};
  return {{"name", "hang"}, {"end_time", 10.0}, {"frame_rate", 30}, {"gravity", {0, 0, -9.81}}, {"bodies", {body}}};
}

}  // namespace clockwork::test
