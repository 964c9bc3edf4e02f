// Pins released by their script (engine/kinematic_script.hpp; `pin_motion.release`):
// from the release on, the vertices move exactly as free ones that started there with
// the script's velocity — explicit AVI and the phantom integrator. A release takes a
// whole first kick of gravity; a scene's initial state a half one (StartFrom), so the
// free vertex starts with the script's velocity plus that missing half kick.
#include <doctest/doctest.h>

#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork {
namespace {


// Dyadic numbers throughout, so that both runs' arithmetic is exact where it must
// agree (positions drift by t·v from different clocks).
constexpr double kTick = 1.0 / 64.0;        // gravity period and h_imp, s
constexpr double kRelease = 6.0 * kTick;    // s, on a tick: released before it runs
constexpr double kSpan = 20.0 * kTick;      // s after the release
const Vec3 kScriptVelocity(0.25, 0.125, 0.5);  // m/s
const Vec3 kGravity(0, 0, -8.0);                // m/s²

/// A right isosceles triangle (its rest-shape strain is exactly zero), bending off,
/// membrane ticks far apart: only gravity moves it. Pinned to a script with
/// `kScriptVelocity` and released at kRelease, or free from the start at `offset`.
ShellSpec triangle(bool released, bool phantom) {
  const Vec3 offset = released ? Vec3::Zero() : Vec3(kRelease * kScriptVelocity);
  ShellSpec body;
  body.name = "tri";
  for (const Vec3& x : {Vec3(0, 0, 1), Vec3(0.5, 0, 1), Vec3(0, 0.5, 1)})
    body.mesh.vertices.push_back({x.x() + offset.x(), x.y() + offset.y(), x.z() + offset.z()});
  body.mesh.triangles = {{0, 1, 2}};
  body.material = ShellMaterial{.area_density = 0.25, .young = 1.0, .poisson = 0.25, .bending = 0.0};
  const Vec3 v_free = kScriptVelocity + 0.5 * kTick * kGravity;
  if (released) {
    body.pins = {0, 1, 2};
    body.pin_motion = MotionSpec{.keyframes = {{0.0, Vec3(0, 0, 0)}, {1.0, kScriptVelocity}}, .release = kRelease};
  } else {
    body.velocity = test::velocity(v_free);
  }
  if (phantom) {
    body.phantom = PhantomSpec{.h_imp = kTick};
  } else {
    body.periods.membrane = 1024.0;
    body.periods.gravity = kTick;
    body.allow_unstable_periods = true;  // the membrane ticks once: gravity alone
  }
  return body;
}

World triangle_scene(ShellSpec body) {
  World w({.name = "release", .end_time = 1.0, .frame_rate = 10, .gravity = kGravity});
  w.add_shell(std::move(body));
  return w;
}

World triangle_scene(bool released, bool phantom) { return triangle_scene(triangle(released, phantom)); }

}  // namespace

TEST_CASE("a released pin falls under gravity exactly as a free vertex started at the release with a whole first kick") {
  for (const bool phantom : {false, true}) {
    CAPTURE(phantom);
    Scene released = test::build(triangle_scene(true, phantom));
    Scene free = test::build(triangle_scene(false, phantom));
    const VertexState& a = released.kernel->state();
    const VertexState& b = free.kernel->state();
    REQUIRE(a.kinematic(0));
    REQUIRE(!b.kinematic(0));
    released.kernel->run_until(kRelease + kSpan);
    free.kernel->run_until(kSpan);
    for (Index v = 0; v < 3; ++v) {
      CAPTURE(v);
      CHECK(!a.kinematic(v));
      CHECK(a.mass(v) == b.mass(v));
      const Vec3 xa = a.position_at(v, kRelease + kSpan), xb = b.position_at(v, kSpan);
      CAPTURE(xa.transpose());
      CAPTURE(xb.transpose());
      CHECK(xa == xb);
      CHECK(a.velocity(v) == b.velocity(v));
      // And it did fall: ~½ g t² below the script's straight line.
      CHECK(xa.z() < 1.0 + (kRelease + kSpan) * kScriptVelocity.z() - 0.4 * 4.0 * kSpan * kSpan);
    }
  }
}

TEST_CASE("pin_motion: a pins subset moves, the other pins stay, released ones become free") {
  ShellSpec body = triangle(true, false);
  body.pin_motion->moved = {2};
  Scene s = test::build(triangle_scene(std::move(body)));
  const VertexState& st = s.kernel->state();
  const Vec3 x0 = st.position(0);
  s.kernel->run_until(kRelease - kTick);
  CHECK(st.kinematic(2));
  CHECK(st.position_at(2, kRelease - kTick).isApprox(Vec3(0, 0.5, 1) + (kRelease - kTick) * kScriptVelocity));
  s.kernel->run_until(kRelease + kSpan);
  CHECK(st.kinematic(0));
  CHECK(st.kinematic(1));
  CHECK(!st.kinematic(2));
  CHECK(st.position_at(0, kRelease + kSpan) == x0);
}

}  // namespace clockwork
