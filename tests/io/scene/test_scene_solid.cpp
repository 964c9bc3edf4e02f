/// Tet solids in scenes: bad input named; the coarse (and fine) step events in the
/// kernel reproduce the solvers they wrap; contact with the ground during a run.
#include <doctest/doctest.h>

#include <filesystem>
#include <cmath>
#include <fstream>

#include "engine/diagnostics.hpp"
#include "engine/observer.hpp"
#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"
#include "tests/support/scenes.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
using nlohmann::json;

namespace {

/// A 6 × 2 × 2-cell bar clamped at x = 0 under gravity.
json bar_scene(const std::string& integrator) {
  json doc = json::parse(R"({
    "name": "bar", "end_time": 0.1, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{
      "name": "bar",
      "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [6, 2, 2], "cell": 0.05},
      "material": {"model": "linear", "young": 1e6, "poisson": 0.3, "density": 1000,
                   "rayleigh": {"beta": 1e-4},
                   "regions": {"all": {"density": 800}}},
      "pins": {"box": {"min": [-1, -1, -1], "max": [1e-9, 1, 1]}}
    }]})");
  json& b = doc["bodies"][0];
  b["integrator"] = integrator;
  if (integrator == "backward_euler") b["backward_euler"] = {{"h", 0.004}};
  else b["zhao"] = json::parse(R"({"h_L": 0.004, "regions": [{"box": {"min": [0.21, -1, -1], "max": [1, 1, 1]}, "m": 1}]})");
  return doc;
}

using test::error_of;  // names the document "test.json"

std::vector<Vec3> positions_at(const Scene& s, double t) {
  std::vector<Vec3> x;
  const VertexState& st = s.kernel->state();
  for (Index a = 0; a < st.size(); ++a) x.push_back(st.position_at(a, t));
  return x;
}

double max_difference(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).norm());
  return d;
}

}  // namespace

TEST_CASE("solid scenes: a bar builds with lumped masses, pins and its coarse-step source") {
  Scene s = build_scene(bar_scene("backward_euler"), "test.json", ".");
  REQUIRE(s.bodies_of<SolidSource>().size() == 1);
  const VertexState& st = s.kernel->state();
  CHECK(st.size() == 7 * 3 * 3);
  double mass = 0.0;
  int pinned = 0;
  for (Index a = 0; a < st.size(); ++a) {
    if (st.kinematic(a)) ++pinned;
    else mass += st.mass(a);
  }
  CHECK(pinned == 9);
  // 800 kg/m³ (the region override) × 0.3 × 0.1 × 0.1 m³, minus the pinned share.
  CHECK(mass < 2.4);
  CHECK(mass > 2.0);
  CHECK(s.bodies[0].triangles.size() == 2 * (2 * 6 * 2 * 2 + 2 * 2 * 2));  // boundary faces
  CHECK(s.terms.back().kind == "coarse:backward_euler");
}

TEST_CASE("solid scenes: Zhao with m = 1 in the kernel reproduces backward Euler") {
  Scene be = build_scene(bar_scene("backward_euler"), "test.json", ".");
  Scene zh = build_scene(bar_scene("zhao"), "test.json", ".");
  const double t = 0.1;  // 25 steps
  be.kernel->run_until(t);
  zh.kernel->run_until(t);
  const auto xb = positions_at(be, t), xz = positions_at(zh, t);
  double sag = 0.0;
  for (std::size_t a = 0; a < xb.size(); ++a) sag = std::max(sag, std::abs(xb[a].z()));
  CHECK(sag > 1e-4);  // it moved
  CHECK(max_difference(xb, xz) < 1e-10 * sag);
}

TEST_CASE("solid scenes: fine events put S on its substeps (eq. 21-22)") {
  // m = 4: the kernel's positions at the coarse times equal the solver's own update.
  for (const char* coupling : {"conservative", "paper"}) {
  CAPTURE(coupling);
  json doc = bar_scene("zhao");
  doc["bodies"][0]["zhao"]["regions"][0]["m"] = 4;
  doc["bodies"][0]["zhao"]["advanced"]["coupling"] = coupling;
  Scene s = build_scene(doc, "test.json", ".");
  const SolidSource& src = *s.bodies_of<SolidSource>()[0];
  const MultirateSolver& solver = *src.multirate();
  CHECK((solver.settings().coupling == MultirateCoupling::Paper) ==
        (std::string(coupling) == "paper"));
  MultirateSolver reference(src.model(), solver.regions(),
                            [&] {
                              std::vector<bool> f;
                              for (Index a = 0; a < s.kernel->state().size(); ++a)
                                f.push_back(s.kernel->state().kinematic(a));
                              return f;
                            }(),
                            solver.settings());
  const std::size_t n = s.kernel->state().size();
  Eigen::VectorXd x(3 * n), v = Eigen::VectorXd::Zero(3 * n), f(3 * n);
  for (Index a = 0; a < n; ++a) {
    x.segment<3>(3 * a) = s.kernel->state().position(a);
    f.segment<3>(3 * a) = s.kernel->state().kinematic(a)
                              ? Vec3::Zero()
                              : Vec3(src.model().lumped_mass()[a] * Vec3(0, 0, -9.81));
  }
  const double h = solver.settings().h_L, hS = h / 4;
  MultirateStep step;
  for (int k = 0; k < 5; ++k) {
    reference.step(x, v, f, step);
    Eigen::VectorXd dx = h * (v + step.dv_L);
    for (Index a : solver.regions()[0].vertices) {
      Vec3 d = Vec3::Zero();
      for (int r = 0; r < 4; ++r) d += hS * (v + step.dv_S[0][r]).segment<3>(3 * a);
      dx.segment<3>(3 * a) = d;
    }
    x += dx;
    v += step.dv_L + step.dv_S[0].back();
  }
  s.kernel->run_until(5 * h);
  double worst = 0.0, moved = 0.0;
  for (Index a = 0; a < n; ++a) {
    worst = std::max(worst, (s.kernel->state().position_at(a, 5 * h) - x.segment<3>(3 * a)).norm());
    moved = std::max(moved, (x.segment<3>(3 * a) - s.kernel->state().position_at(a, 0.0)).norm());
  }
  CHECK(moved > 1e-5);
  CHECK(worst < 1e-12 * (1.0 + moved));
  CHECK(src.counters().fine_steps == 5 * 3);
  CHECK(src.counters().resolved_substeps == 0);  // nothing else moved: the plan held
  }
}

TEST_CASE("solid scenes: bad input is named") {
  {
    json doc = bar_scene("zhao");
    doc["bodies"][0]["zhao"]["regions"][0]["m"] = 0;
    CHECK(error_of(doc) ==
          "test.json: /bodies/0/zhao/regions/0/m: m (h_L / h_S) must be a positive integer, got 0");
    doc["bodies"][0]["zhao"]["regions"][0]["m"] = 2.5;
    CHECK(error_of(doc).find("/m: m (h_L / h_S) must be a positive integer, got 2.5") !=
          std::string::npos);
    doc["bodies"][0]["zhao"]["regions"][0]["m"] = 2;
    doc["bodies"][0]["zhao"]["advanced"]["coupling"] = "midpoint";
    CHECK(error_of(doc).find("test.json: /bodies/0/zhao/advanced/coupling: expected one of 'conservative', "
                             "'paper'") == 0);
    doc["bodies"][0]["zhao"]["advanced"].erase("coupling");
    doc["bodies"][0]["zhao"]["advanced"]["symmetric_solver"] = "cholmod";
    CHECK(error_of(doc).find("test.json: /bodies/0/zhao/advanced/symmetric_solver: expected one of "
                             "'block_cholesky', 'ldlt'") == 0);
  }
  {
    json doc = bar_scene("zhao");
    doc["bodies"][0]["zhao"]["regions"].push_back(
        json::parse(R"({"vertices": [62], "m": 2})"));
    CHECK(error_of(doc).find("/bodies/0/zhao/regions: vertex 62 is in two regions") !=
          std::string::npos);
  }
  {
    json doc = bar_scene("zhao");
    doc["bodies"][0]["zhao"]["regions"][0] = json::parse(R"({"regions": ["jaw"], "m": 2})");
    const std::string e = error_of(doc);
    CHECK(e.find("/bodies/0/zhao/regions/0/regions/0") != std::string::npos);
    CHECK(e.find("jaw") != std::string::npos);
    CHECK(e.find("all") != std::string::npos);  // the regions that exist
  }
  {
    json doc = bar_scene("backward_euler");
    doc["bodies"][0]["backward_euler"]["h"] = 0;
    CHECK(error_of(doc) == "test.json: /bodies/0/backward_euler/h: must be > 0, got 0");
    doc = bar_scene("backward_euler");
    doc["bodies"][0]["zhao"] = {{"h_L", 0.1}};
    CHECK(error_of(doc).find("/bodies/0/zhao: needs \"integrator\": \"zhao\"") != std::string::npos);
    doc = bar_scene("backward_euler");
    doc["bodies"][0]["material"]["model"] = "neo-hookean";
    CHECK(error_of(doc).find("/bodies/0/material/model: expected one of 'linear', 'corotational'") !=
          std::string::npos);
  }
  {
    // A degenerate (flat) tet in a TetGen file is named.
    const auto dir = test::fresh_dir("solid_bad_mesh");
    std::ofstream(dir / "t.node") << "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n";
    std::ofstream(dir / "t.ele") << "1 4 0\n0 0 1 2 3\n";
    json doc = bar_scene("backward_euler");
    doc["bodies"][0]["shape"] = {{"type", "tetgen"}, {"file", (dir / "t").string()}};
    doc["bodies"][0].erase("pins");
    const std::string e = error_of(doc);
    CAPTURE(e);
    CHECK(e.find("/bodies/0/shape") != std::string::npos);
    CHECK(e.find("degenerate") != std::string::npos);
  }
}

TEST_CASE("solid scenes: a frame at a coarse step's time always holds the same steps") {
  // h = 1/240 s and 30 frames/s: every 8th step is at a frame's time. Free fall (no
  // pins): after k steps P_z = −M g h k, so each frame tells how many steps it holds;
  // steps accumulated as t + h drift by ulps and a frame held 8i steps or 8i + 1.
  for (const std::string integrator : {"backward_euler", "zhao"}) {
    CAPTURE(integrator);
    json doc = bar_scene(integrator);
    doc["bodies"][0].erase("pins");
    const double h = 1.0 / 240.0;
    if (integrator == "zhao") {
      doc["bodies"][0]["zhao"]["h_L"] = h;
      doc["bodies"][0]["zhao"]["regions"][0]["m"] = 4;
    } else {
      doc["bodies"][0]["backward_euler"]["h"] = h;
    }
    Scene s = build_scene(doc, "test.json", ".");
    double mass = 0.0;
    for (Index a = 0; a < s.kernel->state().size(); ++a) mass += s.kernel->state().mass(a);
    std::vector<double> steps;
    auto observer = std::make_unique<ObserverSource>(
        30.0, 30, [&](int, double t, Kernel& k) { steps.push_back(-measure(k, t).linear_momentum.z() / (mass * 9.81 * h)); });
    ObserverSource& obs = *observer;
    obs.start(s.kernel->add_source(std::move(observer)), *s.kernel);
    s.kernel->run_until(1.0);
    REQUIRE(steps.size() == 31);
    const double first = std::round(steps[1]) - 8.0;
    for (std::size_t i = 1; i < steps.size(); ++i) {
      CAPTURE(i);
      CHECK(steps[i] == doctest::Approx(8.0 * double(i) + first).epsilon(1e-9));
    }
  }
}

TEST_CASE("solid scenes: backward_euler's damping key picks the Rayleigh stiffness") {
  // Corotational, β > 0: the stiffness at the step's end ("tangent") and the projected one
  // at its start (the default, "projected") give different motions; a bad value is named.
  json doc = bar_scene("backward_euler");
  doc["bodies"][0]["material"]["model"] = "corotational";
  doc["bodies"][0]["material"]["rayleigh"]["beta"] = 5e-3;
  const double t = 0.04;
  std::vector<std::vector<Vec3>> x;
  for (const char* damping : {"", "projected", "tangent"}) {
    json d = doc;
    if (*damping) d["bodies"][0]["backward_euler"]["advanced"]["damping"] = damping;
    Scene s = build_scene(d, "test.json", ".");
    s.kernel->run_until(t);
    x.push_back(positions_at(s, t));
  }
  CHECK(max_difference(x[0], x[1]) == 0.0);  // the default is "projected"
  CHECK(max_difference(x[1], x[2]) > 1e-9);
  doc["bodies"][0]["backward_euler"]["advanced"]["damping"] = "vega";
  const std::string e = error_of(doc);
  CAPTURE(e);
  CHECK(e.find("test.json: /bodies/0/backward_euler/advanced/damping: expected one of 'projected', 'tangent'") == 0);
}

TEST_CASE("solid scenes: zhao's damping key picks the linearisation's stiffness") {
  // Corotational, β > 0, m = 4: the unprojected tangent K(x_n) ("tangent", Zhao eq. 5 as
  // printed) and the PSD-projected K̂(x_n) (the default, "projected") give different
  // motions; linear FEM's K is PSD, so there the two are one; a bad value is named.
  json doc = bar_scene("zhao");
  doc["bodies"][0]["zhao"]["regions"][0]["m"] = 4;
  doc["bodies"][0]["material"]["rayleigh"]["beta"] = 5e-3;
  const double t = 0.04;
  for (const char* model : {"corotational", "linear"}) {
    CAPTURE(model);
    doc["bodies"][0]["material"]["model"] = model;
    std::vector<std::vector<Vec3>> x;
    for (const char* damping : {"", "projected", "tangent"}) {
      json d = doc;
      if (*damping) d["bodies"][0]["zhao"]["advanced"]["damping"] = damping;
      Scene s = build_scene(d, "test.json", ".");
      s.kernel->run_until(t);
      x.push_back(positions_at(s, t));
    }
    CHECK(max_difference(x[0], x[1]) == 0.0);  // the default is "projected"
    if (std::string(model) == "linear") CHECK(max_difference(x[1], x[2]) == 0.0);
    else CHECK(max_difference(x[1], x[2]) > 1e-9);
  }
  doc["bodies"][0]["zhao"]["advanced"]["damping"] = "exact";
  const std::string e = error_of(doc);
  CAPTURE(e);
  CHECK(e == "test.json: /bodies/0/zhao/advanced/damping: expected one of 'projected', 'tangent', "
             "got \"exact\"");
}
