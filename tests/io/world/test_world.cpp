// The typed World API (io/world/world.hpp): worlds built in C++ run the same physics
// as the scene files that describe them, keep the closed forms, and refuse bad specs
// with a message naming the call and the field.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "io/scene/json_reader.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "io/scene/scene.hpp"
#include "io/world/world.hpp"
#include "tests/support/errors.hpp"

using namespace clockwork;

namespace {

/// The kernel's own loop, without the World: every event before t, positions at t.
std::vector<Vec3> positions_at(Scene& scene, const std::string& body, double t) {
  scene.kernel->run_until(std::nextafter(t, -kNever));
  for (const Body& b : scene.bodies)
    if (b.name == body) {
      std::vector<Vec3> x(b.vertex_count);
      for (Index i = 0; i < b.vertex_count; ++i)
        x[i] = scene.kernel->state().position_at(b.first_vertex + i, t);
      return x;
    }
  FAIL("no body ", body);
  return {};
}

/// demos/hanging_cloth.json, written with the API.
World hanging_cloth() {
  World w({.name = "hanging_cloth", .end_time = 3.0, .frame_rate = 30, .gravity = {0, 0, -9.81}});
  ShellSpec cloth;
  cloth.name = "cloth";
  cloth.mesh = make_grid(1.0, 1.0, 24, 24, {0, 0, 1.5}, Vec3::UnitX(), Vec3::UnitY());
  cloth.material = ShellMaterial{.area_density = 0.1, .young = 500.0, .poisson = 0.3, .bending = 1e-4};
  cloth.pins = {24 * 25, 24 * 25 + 24};  // the grid's u0v1 and u1v1 corners
  w.add_shell(std::move(cloth));
  return w;
}

const char* kBlockOnGround = R"({
  "name": "block", "end_time": 1.0, "frame_rate": 25, "gravity": [0, 0, -9.81],
  "contact": {"friction": 0.5},
  "bodies": [{"name": "block", "shape": {"type": "tet_bar", "origin": [-0.05, -0.05, 0.05],
              "cells": [2, 2, 2], "cell": 0.05},
              "material": {"model": "corotational", "young": 2e5, "poisson": 0.3, "density": 1000},
              "velocity": {"linear": [0.3, 0, -0.5]},
              "integrator": "backward_euler", "backward_euler": {"h": 0.005}}],
  "obstacles": [{"name": "ground", "shape": {"type": "ground", "center": [0, 0, 0], "half_size": 1,
                 "divisions": 2}}]
})";

/// kBlockOnGround, written with the API.
World block_on_ground() {
  World w({.name = "block", .end_time = 1.0, .frame_rate = 25, .gravity = {0, 0, -9.81}});
  SolidSpec block;
  block.name = "block";
  block.mesh = make_tet_bar({-0.05, -0.05, 0.05}, 2, 2, 2, 0.05);
  block.material.kind = FemKind::Corotational;
  block.material.per_tet.assign(block.mesh.tets.size(), TetMaterial{2e5, 0.3, 1000});
  block.velocity = {.linear = {0.3, 0, -0.5}, .given = true};
  block.integrator = BackwardEulerSpec{.h = 0.005};
  w.add_solid(std::move(block));
  w.add_obstacle({.name = "ground", .mesh = make_ground({0, 0, 0}, 1.0, 2)});
  ContactSpec contact;
  contact.settings.friction = 0.5;
  w.enable_contact(contact);
  return w;
}

}  // namespace

TEST_CASE("world: a hanging cloth built with the API runs bit-identically to demos/hanging_cloth.json") {
  Scene from_file = load_scene(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/hanging_cloth.json");
  World w = hanging_cloth();
  w.advance_to(0.2);
  const std::vector<Vec3> api = w.positions("cloth");
  const std::vector<Vec3> file = positions_at(from_file, "cloth", 0.2);
  REQUIRE(api.size() == file.size());
  double moved = 0.0;
  const std::vector<Vec3> start = make_grid(1.0, 1.0, 24, 24, {0, 0, 1.5}, Vec3::UnitX(), Vec3::UnitY()).vertices;
  for (std::size_t a = 0; a < api.size(); ++a) {
    CHECK(api[a] == file[a]);  // the same floating-point operations in the same order
    moved = std::max(moved, (api[a] - start[a]).norm());
  }
  CHECK(moved > 0.01);  // it fell: the comparison is not of two initial states
  CHECK(w.time() == doctest::Approx(0.2));
  CHECK(w.scene().bodies.size() == 1);
}

TEST_CASE("world: a backward-Euler block landing on a frictional ground matches its scene file and loses energy") {
  Scene from_file = build_scene(parse_json_text(kBlockOnGround, "block.json"), "block.json", ".");
  World w = block_on_ground();
  const double e0 = w.total_energy();
  double highest = e0;
  for (int k = 1; k <= 20; ++k) {
    w.advance_to(0.02 * k);
    highest = std::max(highest, w.total_energy());
  }
  const std::vector<Vec3> api = w.positions("block");
  const std::vector<Vec3> file = positions_at(from_file, "block", 0.4);
  REQUIRE(api.size() == file.size());
  for (std::size_t a = 0; a < api.size(); ++a) CHECK(api[a] == file[a]);
  // Landed (it started 5 cm up; the solve's planes keep it about 2 η(1) ≈ 1 cm above
  // the ground) and never above its initial energy.
  double lowest = 1.0;
  for (const Vec3& x : api) lowest = std::min(lowest, x.z());
  CHECK(lowest > 0.0);
  CHECK(lowest < 0.02);
  CHECK(highest <= e0 * (1.0 + 1e-9));
  CHECK(w.velocities("block").size() == api.size());
}

TEST_CASE("world: a solid in free fall follows backward Euler's closed form") {
  // No contact, no damping: every vertex keeps v_n = v0 + n h g and
  // x_n = x0 + n h v0 + h² g n(n+1)/2 (the elastic forces of a rigid motion vanish).
  const double h = 0.01;
  const Vec3 g(0, 0, -9.81), v0(0.2, -0.1, 1.0);
  World w({.name = "fall", .end_time = 1.0, .gravity = g});
  SolidSpec s;
  s.name = "cube";
  s.mesh = make_tet_bar({0, 0, 0}, 1, 1, 1, 0.1);
  s.material.per_tet.assign(s.mesh.tets.size(), TetMaterial{1e6, 0.3, 500});
  s.velocity = {.linear = v0, .given = true};
  s.integrator = BackwardEulerSpec{.h = h};
  const std::vector<Vec3> x0 = s.mesh.vertices;
  w.add_solid(std::move(s));
  const int n = 30;
  w.advance_to(n * h);
  const std::vector<Vec3> x = w.positions("cube");
  const Vec3 v_n = v0 + n * h * g;
  for (std::size_t a = 0; a < x.size(); ++a) {
    const Vec3 expected = x0[a] + n * h * v0 + h * h * g * (n * (n + 1) / 2.0);
    CHECK((x[a] - expected).norm() < 1e-12);
  }
  for (const Vec3& v : w.velocities("cube")) CHECK((v - v_n).norm() < 1e-12);
}

TEST_CASE("world: bad specs are refused naming the call, the field and the value") {
  World w({.name = "bad"});
  ShellSpec cloth;
  cloth.name = "cloth";
  cloth.mesh = make_grid(1.0, 1.0, 2, 2, {0, 0, 0}, Vec3::UnitX(), Vec3::UnitY());
  cloth.material = ShellMaterial{.area_density = 0.1, .young = -5.0, .poisson = 0.3, .bending = 0.0};
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }) ==
        "World: add_shell 'cloth': material/young: must be > 0, got -5");
  cloth.material = ShellMaterial{.area_density = 0.1, .young = 5.0, .poisson = 0.6, .bending = 0.0};
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }) ==
        "World: add_shell 'cloth': material/poisson: must be in [0, 0.5), got 0.6");
  cloth.material = ShellMaterial{.area_density = 0.1, .young = 5.0, .poisson = 0.3, .bending = 0.0};
  cloth.pins = {99};
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }) ==
        "World: add_shell 'cloth': pins: vertex 99 out of range (0..9)");
  cloth.pins = {};
  const auto t0 = cloth.mesh.triangles[0];
  cloth.mesh.vertices[t0[2]] = 0.5 * (cloth.mesh.vertices[t0[0]] + cloth.mesh.vertices[t0[1]]);
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }).find("World: add_shell 'cloth': shape: triangle 0 (") == 0);
  cloth.mesh = make_grid(1.0, 1.0, 2, 2, {0, 0, 0}, Vec3::UnitX(), Vec3::UnitY());
  cloth.name = "../x";
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }).find("World: add_shell '../x': name: must be a name usable in file names") == 0);
  cloth.name = "cloth";
  w.add_shell(cloth);
  CHECK(test::what_thrown([&] { w.add_shell(cloth); }) ==
        "World: add_shell 'cloth': name: duplicate body or obstacle name");
  w.add_obstacle({.name = "ground", .mesh = make_ground({0, 0, -1}, 1.0, 1)});
  // An obstacle without contact is refused when the world starts.
  CHECK(test::what_thrown([&] { w.advance_to(0.1); }) ==
        "World: add_obstacle 'ground': obstacles need contact (enable_contact)");

  World solid({.name = "bad_solid", .end_time = 1.0});
  SolidSpec s;
  s.name = "cube";
  s.mesh = make_tet_bar({0, 0, 0}, 1, 1, 1, 0.1);
  s.material.per_tet.assign(s.mesh.tets.size(), TetMaterial{1e6, 0.3, 500});
  s.integrator = BackwardEulerSpec{.h = 2.0};
  CHECK(test::what_thrown([&] { solid.add_solid(s); }) ==
        "World: add_solid 'cube': backward_euler/h: the step must not exceed end_time (1 s)");
  s.integrator = BackwardEulerSpec{.h = 0.0};
  CHECK(test::what_thrown([&] { solid.add_solid(s); }) ==
        "World: add_solid 'cube': backward_euler/h: must be > 0, got 0");
  s.integrator = BackwardEulerSpec{.h = 0.01};
  s.material.per_tet.pop_back();
  CHECK(test::what_thrown([&] { solid.add_solid(s); }) ==
        fmt::format("World: add_solid 'cube': material: {} tet materials for {} tets",
                    s.material.per_tet.size(), s.mesh.tets.size()));
}

TEST_CASE("world: a scene file's refusals still name its JSON pointer through the World") {
  const std::string doc = R"({"name": "s", "end_time": 1, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{"name": "c", "shape": {"type": "mesh", "vertices": [[0,0,0],[1,0,0],[2,0,0]],
                "triangles": [[0,1,2]]},
                "material": {"area_density": 0.1, "young": 5, "poisson": 0.3, "bending": 0}}]})";
  CHECK(test::what_thrown([&] { build_scene(parse_json_text(doc, "s.json"), "s.json", "."); })
            .find("s.json: /bodies/0/shape: triangle 0 (vertices 0, 1, 2) is degenerate, got") == 0);
}
