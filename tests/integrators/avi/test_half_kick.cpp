// The start of an explicit AVI stencil or a phantom tick (StartFrom, engine/event_source.hpp):
// from a scene's initial state the first impulse is a half kick, so free fall is
// second-order accurate; a whole one put every later height off by −g h t / 2.
#include <doctest/doctest.h>

#include <cmath>

#include "integrators/avi/force_source.hpp"
#include "integrators/energy/gravity_energy.hpp"
#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork {
namespace {


constexpr double kG = 9.81;                 // m/s², along −z
const Vec3 kV0(0.25, -0.125, 1.5);          // m/s, the body's linear velocity at t = 0
constexpr double kZ0 = 1.0;                 // m, the cloth's centre height
constexpr double kCoarse = 1.0 / 128.0;     // s, the longest gravity period / h_imp

/// A 1 m cloth in free fall with a linear velocity and a small random one (so that the
/// membrane and hinges work: internal impulses change no total momentum, the centre of
/// mass feels gravity alone). Explicit: gravity ticks every `h`, the elastic stencils
/// at their own stable periods; phantom: one implicit tick every `h`.
World falling_cloth(double h, bool phantom) {
  ShellSpec body = test::cloth_spec("cloth", 1.0, 8, {0.0, 0.0, kZ0},
                                    {.area_density = 0.1, .young = 50.0, .poisson = 0.3, .bending = 1e-4});
  body.velocity = test::velocity(kV0, Vec3::Zero(), 0.02);
  if (phantom) {
    body.phantom = PhantomSpec{.h_imp = h};
    body.phantom->solver.tolerance = 1e-10;
  } else {
    body.periods.gravity = h;
  }
  World w({.name = "fall", .end_time = 1.0, .frame_rate = 10, .gravity = {0.0, 0.0, -kG}, .seed = 7});
  w.add_shell(std::move(body));
  return w;
}

/// The mass centre's height at t.
double centre_height(const VertexState& s, double t) {
  double mz = 0.0, m = 0.0;
  for (Index a = 0; a < s.size(); ++a) {
    mz += s.mass(a) * s.position_at(a, t).z();
    m += s.mass(a);
  }
  return mz / m;
}

/// The largest |z_com(t) − (z0 + v0 t − g t²/2)| over times a third of a coarse period
/// past a coarse tick: a third (or two thirds) of the way through an interval at every
/// step, so that the chord's own O(h²) error, g τ (h − τ)/2, is the same multiple of
/// h² for h, h/2 and h/4 (and the ratio is exact, not sampled at a tick).
double height_error(double h, bool phantom) {
  Scene scene = test::build(falling_cloth(h, phantom));
  const VertexState& s = scene.kernel->state();
  // The random velocities move the mass centre too: take its own initial velocity.
  double mvz = 0.0, m = 0.0;
  for (Index a = 0; a < s.size(); ++a) {
    mvz += s.mass(a) * s.velocity(a).z();
    m += s.mass(a);
  }
  const double vz0 = mvz / m;
  const double z0 = centre_height(s, 0.0);
  double worst = 0.0;
  for (int k : {4, 8, 16, 32}) {
    const double t = (k + 1.0 / 3.0) * kCoarse;
    scene.kernel->run_until(t);
    const double exact = z0 + vz0 * t - 0.5 * kG * t * t;
    worst = std::max(worst, std::abs(centre_height(s, t) - exact));
  }
  return worst;
}

}  // namespace

TEST_CASE("free fall: the mass centre's height error is O(h^2), explicit and phantom") {
  for (const bool phantom : {false, true}) {
    CAPTURE(phantom);
    const double e1 = height_error(kCoarse, phantom);
    const double e2 = height_error(kCoarse / 2, phantom);
    const double e4 = height_error(kCoarse / 4, phantom);
    CAPTURE(e1);
    CAPTURE(e2);
    CAPTURE(e4);
    // The chord between ticks: g τ (h − τ)/2 with τ = h/3 or 2h/3, i.e. g h²/9.
    CHECK(e1 == doctest::Approx(kG * kCoarse * kCoarse / 9.0).epsilon(1e-6));
    CHECK(e1 / e2 >= 3.0);
    CHECK(e1 / e2 <= 5.0);
    CHECK(e2 / e4 >= 3.0);
    CHECK(e2 / e4 <= 5.0);
  }
}

TEST_CASE("a staggered stencil's first impulse covers the time from the start, a resumed one is whole") {
  // One vertex, gravity ticking every h from the offset s: its first impulse is
  // (s + h/2) m g, so at every tick x = x0 + v0 t − g t²/2 + g s²/2 (the fall it
  // missed before its first tick, O(h²)), and v = v0 − g (t + h/2) between ticks.
  const double h = 1.0 / 64.0, offset = 0.375 * h;
  const Vec3 g(0.0, 0.0, -kG), x0(0.0, 0.0, 2.0), v0(0.5, 0.0, 1.0);
  for (const StartFrom from : {StartFrom::initial_state, StartFrom::resumed_frame}) {
    const bool fresh = from == StartFrom::initial_state;
    CAPTURE(fresh);
    Kernel k;
    k.state().add(x0, v0, 0.5);
    auto source = std::make_unique<ForceSource<GravityEnergy>>("force:gravity");
    source->add({0}, GravityEnergy{0.5, g}, h, offset);
    ForceSource<GravityEnergy>& ref = *source;
    ref.start(k.add_source(std::move(source)), k, from);
    const int ticks = 40;
    const double t = offset + (ticks - 1) * h;  // the last tick processed
    k.run_until(t + 0.5 * h);
    const Vec3 x = k.state().position_at(0, t);
    const double first = fresh ? offset + 0.5 * h : h;  // the first impulse's span
    const Vec3 expected = x0 + v0 * t + g * (first * (t - offset) + 0.5 * (t - offset) * (t - offset - h));
    CHECK((x - expected).norm() <= 1e-13);
    CHECK((k.state().velocity(0) - (v0 + g * (first + (ticks - 1) * h))).norm() <= 1e-13);
    if (fresh) {
      CHECK((x - (x0 + v0 * t + 0.5 * g * t * t - 0.5 * g * offset * offset)).norm() <= 1e-13);
    }
  }
}

}  // namespace clockwork
