/// A whole run of Schroeder et al.'s asynchronous scheme (CTest label `slow`: ~15 s in
/// Release): an elastic ball dropped on a static plane with the §6 collision response.
#include <doctest/doctest.h>

#include "io/mesh/tet_mesh.hpp"
#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

using namespace clockwork;

namespace {

/// An elastic ball (r = 0.1 m, 6 cells across, corotational, E = 1e5 Pa, β = 0.002)
/// dropped from z = 1 m in `integrator`.
World ball_scene(SchroederSpec integrator) {
  World w({.name = "ball", .end_time = 1.6, .frame_rate = 24, .gravity = {0, 0, -9.81}});
  SolidSpec ball = test::solid_spec("ball", make_tet_sphere({0, 0, 1}, 0.1, 6), {1e5, 0.3, 1000},
                                    FemKind::Corotational);
  ball.material.rayleigh_beta = 0.002;
  ball.integrator = std::move(integrator);
  w.add_solid(std::move(ball));
  return w;
}

}  // namespace

TEST_CASE(
    "schroeder scenes: a ball dropped on the §6 ground lands on it, bounces and comes to rest") {
  SchroederSpec settings;
  settings.settings.frame_dt = 0.04;
  settings.settings.epsilon = 0.5;
  settings.settings.colliders.push_back(StaticCollider::plane({0, 0, 0.5}, Vec3::UnitZ(), 0.3));
  Scene s = test::build(ball_scene(std::move(settings)));
  const VertexState& st = s.kernel->state();
  double lowest = kNever, vz_max = -kNever;
  int on_plane = 0;
  Vec3 c = Vec3::Zero(), vc = Vec3::Zero();
  for (int k = 1; k <= 40; ++k) {  // 1.6 s
    const double t = 0.04 * k;
    s.kernel->run_until(t);
    double low = kNever, m = 0.0;
    c.setZero();
    vc.setZero();
    for (Index a = 0; a < st.size(); ++a) {
      low = std::min(low, st.position_at(a, t).z());
      c += st.mass(a) * st.position_at(a, t);
      vc += st.mass(a) * st.velocity(a);
      m += st.mass(a);
    }
    c /= m;
    vc /= m;
    lowest = std::min(lowest, low);
    if (std::abs(low - 0.5) < 1e-12) ++on_plane;
    vz_max = std::max(vz_max, vc.z());
  }
  CHECK(s.bodies_of<SchroederSource>()[0]->stepper().counters().collisions > 0);
  CHECK(lowest >= 0.5 - 1e-12);  // positions land on the plane, never below it,
  CHECK(on_plane > 5);           // and on it, not above it (no Δt v_rel gap)
  CHECK(vz_max > 0.3);           // the elastic ball bounced (the particles' impulses are inelastic)
  // At rest on the plane after the bounces: the centre about a radius above it.
  CHECK(c.z() > 0.57);
  CHECK(c.z() < 0.61);
  CHECK(std::abs(vc.z()) < 0.1);
}
