/// Schroeder solids dropped on a "ground" *obstacle* (the contact system's, not a §6
/// collider of their own): the World gives their solves the obstacle's exact surface as
/// a collider 2 η1 above it (docs/schroeder.md "Obstacles in the solve"). Before, only
/// the penalty layers' explicit impulses held them, once per frame step (1/24 s): a
/// fully-implicit 27-vertex block dropped 4 mm went from 0.26 J to ~1000 J within
/// 0.25 s, with inverted tets and intersecting frames (the sweep's
/// tests/data/sweep/min_fully_implicit_ground.json). Every quantity is recomputed from
/// the kernel's state at each frame: kinetic, gravity and elastic energy, the layers'
/// potential, inverted tets, the lowest particle. The same ground without its exact
/// surface (a mesh, as an OBJ or a "grid" gives) reaches the solves as a triangle-mesh
/// collider (contact/obstacles/mesh_collider.hpp) and must hold the cube as well.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "contact/contact_system.hpp"
#include "contact/intersections/intersection_check.hpp"
#include "io/world/world.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/files.hpp"
#include "tests/support/schroeder_frames.hpp"
#include "tests/support/world_specs.hpp"

using namespace clockwork;
namespace {

/// The cube (the world's one Schroeder body, beside the obstacle's kinematic vertices)
/// at time t: kinetic energy of the kernel's velocities, the source's potential
/// (gravity + elastic), inverted tets, the lowest particle, finiteness.
struct FrameState {
  double kinetic = 0.0, potential = 0.0, lowest = 1e9;
  Vec3 centre = Vec3::Zero();  ///< mean position
  int inverted = 0;
  bool finite_normal = true;
};

FrameState measure(const Scene& s, double t) {
  const VertexState& st = s.kernel->state();
  const SchroederSource& src = *s.bodies_of<SchroederSource>()[0];
  FrameState f;
  Eigen::VectorXd x(3 * static_cast<Eigen::Index>(src.vertices().size()));
  for (std::size_t i = 0; i < src.vertices().size(); ++i) {
    const Index a = src.vertices()[i];
    const Vec3 xa = st.position_at(a, t), va = st.velocity(a);
    x.segment<3>(3 * static_cast<Eigen::Index>(i)) = xa;
    f.kinetic += 0.5 * st.mass(a) * va.squaredNorm();
    f.lowest = std::min(f.lowest, xa.z());
    f.centre += xa / double(src.vertices().size());
    for (int k = 0; k < 3; ++k)
      for (double c : {xa[k], va[k]})
        f.finite_normal = f.finite_normal && std::isfinite(c) && std::fpclassify(c) != FP_SUBNORMAL;
  }
  f.potential = src.potential_energy(st, t);
  for (const auto& tet : src.model().tets())
    if (tet_signed_volume(x.segment<3>(3 * tet[0]), x.segment<3>(3 * tet[1]), x.segment<3>(3 * tet[2]),
                          x.segment<3>(3 * tet[3])) <= 0.0)
      ++f.inverted;
  return f;
}

constexpr double kFrame = 1.0 / 24.0;
constexpr double kThickness = 0.001;  // η1: the colliders sit 2 η1 above the ground

/// A 0.1 m corotational cube (2 × 2 × 2 cells, E = 0.2 MPa, 500 kg/m³, Rayleigh β
/// `beta`) with its bottom `drop` above a ground obstacle, integrated by `scheme`; the
/// ground with its exact surface, or as a bare mesh.
World cube_on_ground(const std::string& scheme, double drop, double beta, double friction, bool exact = true) {
  World w({.name = "cube", .end_time = 3.0, .frame_rate = 24, .gravity = {0, 0, -9.81}});
  SolidSpec b = test::block_spec("cube", {-0.05, -0.05, drop}, {2, 2, 2}, 0.05, {2e5, 0.3, 500},
                                 FemKind::Corotational);
  b.material.rayleigh_beta = beta;
  SchroederSpec integrator;
  integrator.settings.frame_dt = kFrame;
  if (scheme == "semi_implicit") integrator.settings.scheme = SchroederScheme::SemiImplicit;
  if (scheme == "fully_implicit") integrator.settings.scheme = SchroederScheme::FullyImplicit;
  b.integrator = std::move(integrator);
  w.add_solid(std::move(b));
  ObstacleSpec ground = test::ground_spec({0, 0, 0}, 0.6);
  if (!exact) ground.surface.reset();
  w.add_obstacle(std::move(ground));
  ContactSpec contact;
  contact.settings.thickness = kThickness;
  contact.settings.friction = friction;
  w.enable_contact(contact);
  return w;
}

struct Drop {
  double initial = 0.0, highest = 0.0, drop_potential = 0.0;
  double lowest = 1e9;
  int inverted = 0;
  double kinetic_at_rest = 0.0;  ///< the largest kinetic energy from 1 s after landing
  bool finite = true;
  int intersecting_frames = 0;  ///< frames where a cube triangle crosses a ground one
  Vec3 rest = Vec3::Zero();     ///< the cube's mean position at the end
};

/// Whether any two colliding triangles of the scene cross at time t (the independent
/// checker of `clockwork check-intersections`).
bool any_intersection(const Scene& s, double t) {
  const VertexState& st = s.kernel->state();
  std::vector<Vec3> x;
  for (Index a = 0; a < st.size(); ++a) x.push_back(st.position_at(a, t));
  std::vector<std::array<Index, 3>> tris;
  for (const Body& b : s.bodies)
    for (const auto& tri : b.triangles) tris.push_back({b.first_vertex + tri[0], b.first_vertex + tri[1], b.first_vertex + tri[2]});
  return !find_intersections(x, tris).empty();
}

Drop run_drop(const std::string& scheme, double drop, double beta, double friction, bool exact = true) {
  Scene s = test::build(cube_on_ground(scheme, drop, beta, friction, exact));
  const auto total = [&](const FrameState& f, double t) {
    return f.kinetic + f.potential + s.contact->potential_energy(s.kernel->state(), t);
  };
  const FrameState first = measure(s, 0.0);
  Drop d;
  d.initial = d.highest = total(first, 0.0);
  // What the landing has to dissipate: the fall to the colliders (2 η1 up).
  const double mass = 0.1 * 0.1 * 0.1 * 500.0;
  d.drop_potential = mass * 9.81 * (drop - 2.0 * kThickness);
  const double landing = std::sqrt(2.0 * std::max(0.0, drop - 2.0 * kThickness) / 9.81);
  const int frames = static_cast<int>(std::ceil((landing + 1.25) / kFrame));
  for (int k = 1; k <= frames; ++k) {
    const double t = k * kFrame;
    test::run_to_frame(s, t);
    const FrameState f = measure(s, t);
    d.highest = std::max(d.highest, total(f, t));
    d.lowest = std::min(d.lowest, f.lowest);
    d.inverted = std::max(d.inverted, f.inverted);
    d.finite = d.finite && f.finite_normal;
    if (t >= landing + 1.0) d.kinetic_at_rest = std::max(d.kinetic_at_rest, f.kinetic);
    d.intersecting_frames += any_intersection(s, t);
    d.rest = f.centre;
  }
  MESSAGE(fmt::format("{} ground, {} drop {} β {} μ {}: highest − initial {:.3g} J of {:.4g} J, lowest {:.4g} m, "
                      "inverted {}, kinetic from 1 s after landing {:.3g} J (drop {:.3g} J)",
                      exact ? "exact" : "mesh", scheme, drop, beta, friction, d.highest - d.initial, d.initial, d.lowest,
                      d.inverted, d.kinetic_at_rest, d.drop_potential));
  return d;
}

constexpr const char* kSchemes[] = {"schroeder", "semi_implicit", "fully_implicit"};

}  // namespace

TEST_CASE("schroeder obstacles: a cube dropped 4 mm on a ground obstacle never gains energy and rests, in every scheme") {
  for (const char* scheme : kSchemes) {
    for (const double friction : {0.0, 0.5}) {
      CAPTURE(std::string(scheme));
      CAPTURE(friction);
      const Drop d = run_drop(scheme, 0.004, 0.01, friction);
      CHECK(d.highest <= d.initial * (1.0 + 1e-3));
      CHECK(d.inverted == 0);
      CHECK(d.finite);
      CHECK(d.lowest >= kThickness);  // held by the colliders, clear of the first layer
      CHECK(d.kinetic_at_rest < 1e-4 * d.drop_potential);
    }
  }
}

TEST_CASE("schroeder obstacles: a cube dropped 15 cm on a ground obstacle never gains energy nor inverts, in every scheme") {
  for (const char* scheme : kSchemes) {
    CAPTURE(std::string(scheme));
    const Drop d = run_drop(scheme, 0.15, 0.0, 0.5);
    CHECK(d.highest <= d.initial * (1.0 + 1e-3));
    CHECK(d.inverted == 0);
    CHECK(d.finite);
    CHECK(d.lowest >= kThickness);
  }
}

TEST_CASE("schroeder obstacles: a cube dropped 4 mm on a ground mesh without its exact surface rests as on the exact one, in every scheme") {
  for (const char* scheme : kSchemes) {
    CAPTURE(std::string(scheme));
    const Drop mesh = run_drop(scheme, 0.004, 0.01, 0.5, false);
    CHECK(mesh.highest <= mesh.initial * (1.0 + 1e-3));
    CHECK(mesh.inverted == 0);
    CHECK(mesh.finite);
    CHECK(mesh.intersecting_frames == 0);
    CHECK(mesh.lowest >= kThickness);
    CHECK(mesh.kinetic_at_rest < 1e-4 * mesh.drop_potential);
    // The mesh collider of a flat ground is the exact ground's top: the cube comes to
    // rest at the same height, within a tenth of η1.
    const Drop exact = run_drop(scheme, 0.004, 0.01, 0.5, true);
    CHECK(exact.intersecting_frames == 0);
    MESSAGE(fmt::format("{}: rest on the mesh − on the exact ground: ({:.3g}, {:.3g}, {:.3g}) m", scheme,
                        mesh.rest.x() - exact.rest.x(), mesh.rest.y() - exact.rest.y(), mesh.rest.z() - exact.rest.z()));
    CHECK(std::abs(mesh.rest.z() - exact.rest.z()) < 0.1 * kThickness);
    CHECK((mesh.rest - exact.rest).norm() < 1e-9);
  }
}

/// The tool's stderr for a fully-implicit cube over `obstacle` (a JSON object).
static test::CliResult run_cube_over(const std::string& dir_name, const std::string& obstacle) {
  const std::filesystem::path dir = test::fresh_dir(dir_name);
  const std::filesystem::path scene = dir / "pole.json";
  std::ofstream(scene) << R"({
    "name": "pole", "end_time": 0.05, "frame_rate": 24, "gravity": [0, 0, -9.81],
    "contact": {"thickness": 0.001},
    "obstacles": [)" << obstacle << R"(],
    "bodies": [{"name": "cube", "shape": {"type": "tet_bar", "origin": [0.1, 0, 0.2], "cells": [1, 1, 1], "cell": 0.05},
                "material": {"model": "corotational", "young": 2e5, "poisson": 0.3, "density": 500},
                "integrator": "fully_implicit", "fully_implicit": {"frame_dt": 0.041666666666666667}}]
  })";
  return test::run_cli(fmt::format("run {} --out {}", scene.string(), (dir / "out").string()));
}

TEST_CASE("schroeder obstacles: a static mesh obstacle is seen, a moving one is named in a warning") {
  const std::string pole = R"({"name": "pole", "shape": {"type": "cylinder", "base": [0, 0, 0], "axis": [0, 0, 1],
                                                        "radius": 0.02, "length": 0.1})";
  const test::CliResult still = run_cube_over("schroeder_obstacle_still", pole + "}");
  CAPTURE(still.err);
  CHECK(still.exit_code == 0);
  CHECK(still.err.find("does not see obstacle") == std::string::npos);
  const test::CliResult moving = run_cube_over(
      "schroeder_obstacle_moving",
      pole + R"(, "motion": {"keyframes": [{"time": 0, "offset": [0, 0, 0]}, {"time": 1, "offset": [0.1, 0, 0]}]}})");
  CAPTURE(moving.err);
  CHECK(moving.exit_code == 0);
  CHECK(moving.err.find("pole.json: /bodies/0: Schroeder solid 'cube' does not see obstacle 'pole' in its solve "
                        "(it moves)") != std::string::npos);
}
