/// Whole runs of tet solids (CTest label `slow`): a ball bouncing off the ground's
/// penalty layers under both coarse-step integrators.
#include <doctest/doctest.h>

#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

using namespace clockwork;

TEST_CASE("solid scenes: a ball dropped on the ground bounces off the penalty layers or the planes in the step") {
  // The third run: Zhao with the ground left to the layers (`obstacle_contact` false).
  for (const std::string integrator : {"backward_euler", "zhao", "zhao_layers"}) {
    CAPTURE(integrator);
    World w({.name = "drop", .end_time = 0.4, .frame_rate = 10, .gravity = {0, 0, -9.81}});
    SolidSpec b = test::solid_spec("ball", make_tet_sphere({0, 0, 0.12}, 0.1, 4), {1e5, 0.3, 500},
                                   FemKind::Corotational);
    if (integrator == "backward_euler") {
      b.integrator = BackwardEulerSpec{.h = 0.005};
    } else {
      b.integrator = test::zhao_spec(0.005, 4, test::vertices_in_box(b.mesh.vertices, {-1, -1, -1}, {1, 1, 0.06}));
      if (integrator == "zhao_layers") b.obstacles = SolveContactSpec{.on = false};
    }
    w.add_solid(std::move(b));
    w.add_obstacle(test::ground_spec({0, 0, 0}, 1.0));
    w.enable_contact({});
    Scene s = test::build(std::move(w));
    const Index first = s.bodies[0].first_vertex, count = s.bodies[0].vertex_count;
    double lowest = 1e9, vz_max = -1e9;
    for (int k = 1; k <= 40; ++k) {
      const double t = 0.01 * k;
      s.kernel->run_until(t);
      Vec3 vc = Vec3::Zero();
      double m = 0.0;
      for (Index a = first; a < first + count; ++a) {
        lowest = std::min(lowest, s.kernel->state().position_at(a, t).z());
        vc += s.kernel->state().mass(a) * s.kernel->state().velocity(a);
        m += s.kernel->state().mass(a);
      }
      vz_max = std::max(vz_max, vc.z() / m);
    }
    CHECK(lowest > 0.0);   // never through the ground
    CHECK(vz_max > 0.1);   // it came back up (the planes, or the layers, bounce it)
    if (integrator != "zhao_layers") {  // the ground is in the step's solve
      CHECK(s.bodies_of<SolidSource>()[0]->contact().obstacle_planes > 0);
    } else {
      CHECK(s.bodies_of<SolidSource>()[0]->contact().obstacle_planes == 0);
      CHECK(s.contact->counters().layer_activations > 0);
      // The bottom region's substeps after a layer impulse are solved from the kernel's
      // state, not taken from the plan made before the impulse.
      const SolidCounters& c = s.bodies_of<SolidSource>()[0]->counters();
      CHECK(c.resolved_substeps > 0);
      CHECK(c.resolved_substeps < c.fine_steps);
    }
  }
}
