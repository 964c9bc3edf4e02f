// One body-integrator interface (integrators/body_integrator.hpp): a scene holds one
// list of its bodies' integrators, started in the registry's order, and what the
// diagnostics, frames and run summary read of a body comes through that list.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/diagnostics.hpp"
#include "integrators/avi/explicit_shell.hpp"
#include "io/scene/json_reader.hpp"
#include "io/scene/scene.hpp"
#include "tests/support/errors.hpp"

using namespace clockwork;

namespace {

// Every scheme, added in an order that is not the start order, far apart and without
// contact: the bodies' energies are then the whole system's.
const char* kEverySchemeScene = R"({
  "name": "every_scheme", "end_time": 0.1, "frame_rate": 50, "gravity": [0, 0, -9.81],
  "bodies": [
    {"name": "schroeder_block", "shape": {"type": "tet_bar", "origin": [3, 0, 0.004], "cells": [2, 2, 2], "cell": 0.05},
     "material": {"model": "corotational", "young": 2e5, "poisson": 0.3, "density": 500},
     "integrator": "schroeder", "schroeder": {"frame_dt": 0.01}},
    {"name": "phantom_cloth", "shape": {"type": "grid", "size": [0.3, 0.3], "resolution": [6, 6], "center": [0, 3, 1]},
     "material": {"area_density": 0.2, "young": 2000, "poisson": 0.3, "bending": 0.001},
     "integrator": "phantom", "phantom": {"h_imp": 0.002}},
    {"name": "cloth", "shape": {"type": "grid", "size": [0.3, 0.3], "resolution": [6, 6], "center": [0, 0, 1]},
     "material": {"area_density": 0.1, "young": 500, "poisson": 0.3, "bending": 0.0001}, "pins": ["u0v1"]},
    {"name": "zhao_block", "shape": {"type": "tet_bar", "origin": [-3, 0, 0.004], "cells": [2, 2, 2], "cell": 0.05},
     "material": {"model": "corotational", "young": 2e5, "poisson": 0.3, "density": 500},
     "integrator": "zhao", "zhao": {"h_L": 0.01, "regions": [{"name": "top", "box": {"min": [-9, -9, 0.06], "max": [9, 9, 9]}, "m": 2}]}},
    {"name": "chain", "shape": {"type": "chain", "start": [0, -3, 1], "end": [1, -3, 1], "segments": 4},
     "material": {"node_mass": 1.0, "stiffness": [2500.0]}, "pins": ["first"], "periods": {"spring": 0.001},
     "velocity": {"vertices": [{"vertex": 2, "velocity": [0.5, 0.3, 0]}]}},
    {"name": "be_block", "shape": {"type": "tet_bar", "origin": [0, 6, 0.004], "cells": [2, 2, 2], "cell": 0.05},
     "material": {"model": "corotational", "young": 2e5, "poisson": 0.3, "density": 500},
     "velocity": {"linear": [0.1, 0, 0.2]}, "integrator": "backward_euler", "backward_euler": {"h": 0.005}}
  ]
})";

Scene every_scheme() { return build_scene(parse_json_text(kEverySchemeScene, "every.json"), "every.json", "."); }

bool close(double a, double b, double scale) { return std::abs(a - b) <= 1e-12 * std::max(1.0, scale); }

}  // namespace

TEST_CASE("body integrators: one list, started kind by kind in the registry's order, bodies of a kind as added") {
  Scene s = every_scheme();
  std::vector<std::string> started;
  for (const BodyIntegrator* i : s.integrators) started.push_back(std::string(i->kind()) + ":" + i->body());
  // Backward Euler and Zhao share one start order (they always started together).
  CHECK(started == std::vector<std::string>{"explicit:cloth", "explicit:chain", "phantom:phantom_cloth",
                                            "zhao:zhao_block", "backward_euler:be_block",
                                            "schroeder:schroeder_block"});
  // Only the explicit adapters are the scene's own; the others are the kernel's sources.
  CHECK(s.kept_integrators.size() == 2);
  CHECK(s.bodies_of<PhantomSource>().size() == 1);
  CHECK(s.bodies_of<SolidSource>().size() == 2);
  CHECK(s.bodies_of<SchroederSource>().size() == 1);
  CHECK(s.bodies_of<ExplicitShell>().size() == 2);
}

TEST_CASE("body integrators: each body names its integrator, which owns exactly the body's vertices") {
  Scene s = every_scheme();
  for (const Body& b : s.bodies) {
    INFO(b.name);
    REQUIRE(b.integrator != nullptr);
    CHECK(b.integrator->body() == b.name);
    CHECK(std::count(s.integrators.begin(), s.integrators.end(), b.integrator) == 1);
    const auto v = b.integrator->body_vertices();
    REQUIRE(v.size() == b.vertex_count);
    for (Index i = 0; i < b.vertex_count; ++i) CHECK(v[i] == b.first_vertex + i);
    // Only a phantom keeps a state per vertex beside the kernel's (its PLY columns).
    CHECK(b.integrator->has_vertex_copy() == (b.integrator->kind() == "phantom"));
  }
}

TEST_CASE("body integrators: the bodies' energies and momenta add up to the diagnostics of the whole system") {
  Scene s = every_scheme();
  for (double t : {0.0, 0.0237, 0.05}) {
    INFO("t = " << t);
    if (t > 0) s.kernel->run_until(std::nextafter(t, -kNever));
    const Diagnostics d = measure(*s.kernel, t);
    BodyEnergy sum;
    for (const BodyIntegrator* i : s.integrators) {
      const BodyEnergy e = measure_body(*i, s.kernel->state(), t);
      INFO(i->body());
      CHECK(std::isfinite(e.total()));
      // Every body has elastic or gravitational energy of its own.
      CHECK(e.potential != 0.0);
      sum.kinetic += e.kinetic;
      sum.potential += e.potential;
      sum.linear_momentum += e.linear_momentum;
      sum.angular_momentum += e.angular_momentum;
    }
    CHECK(close(sum.kinetic, d.kinetic, d.kinetic));
    CHECK(close(sum.potential, d.potential, std::abs(d.potential)));
    for (int k = 0; k < 3; ++k) {
      CHECK(close(sum.linear_momentum[k], d.linear_momentum[k], d.linear_momentum.norm()));
      CHECK(close(sum.angular_momentum[k], d.angular_momentum[k], d.angular_momentum.norm()));
    }
  }
}

TEST_CASE("body integrators: the run summary's lines and totals come from the integrators") {
  Scene s = every_scheme();
  s.kernel->run_until(0.02);
  IntegratorTotals totals;
  for (const BodyIntegrator* i : s.integrators) {
    i->add_totals(totals);
    const std::vector<std::string> lines = i->summary_lines();
    if (i->kind() == "phantom") {
      REQUIRE(!lines.empty());
      CHECK(lines[0].rfind("  phantom: ", 0) == 0);
      CHECK(lines[0].find(" ticks, ") != std::string::npos);
    } else {
      CHECK(lines.empty());
    }
  }
  std::uint64_t safeguarded = 0;
  for (const SolidSource* solid : s.bodies_of<SolidSource>()) safeguarded += solid->counters().safeguarded;
  CHECK(totals.safeguarded_steps == safeguarded);
}

TEST_CASE("body integrators: the registry orders every kind and refuses one without its row") {
  int last = -1;
  for (const IntegratorKind& k : integrator_kinds()) {
    INFO(k.name);
    CHECK(k.start_order >= last);
    CHECK(start_rank(k.name) == k.start_order);
    last = k.start_order;
  }
  CHECK(test::what_thrown([] { (void)start_rank("verlet"); }) ==
        "body integrator kind 'verlet' is not in integrator_kinds()");
}
