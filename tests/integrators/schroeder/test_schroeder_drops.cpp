/// Issue 41, the drops row for Schroeder et al.'s schemes (CTest label `slow`): the ball
/// of demos/schroeder_sphere.json — its mesh, material, frame (1/24 s), ε = ½ and §6
/// ground (μ = 0.3) — without its sideways velocity, dropped 4 mm and 15 cm onto the
/// ground in the asynchronous, semi-implicit and fully-implicit schemes, with β = 0 and
/// the demo's β = 0.002. Every quantity is recomputed from the kernel's state: at the
/// frames the total energy (kinetic of the kernel's velocities, gravity, elastic; no
/// penalty layers in this scene), every 2 ms the lowest particle, the tets' orientation
/// and the centre-of-mass velocity.
///
/// Before: the fully-implicit ball dropped 15 cm gained up to 10.7 J in one frame (8.5 J
/// above its initial 10.8 J), inverted 8 tets and never rested (kinetic friction stopped
/// particles after a position update's solve; docs/schroeder.md, decision 11);
/// the asynchronous one without damping rose 2.9 J above its initial energy in flight
/// after the bounce (its interior, vibrating, deformed for a whole frame with no force
/// of its own; decision 12).
///
/// The 15 cm bounce is physics, not a numerical defect. Converged references of the
/// same ball and damping (β = 0.002) bounce with a first restitution (upward over
/// downward centre velocity) of 0.765: the semi-implicit scheme at Δt = 0.1 ms (0.761 at
/// 0.2 ms; at its automatic 0.65 ms 0.746), and backward Euler at h = 0.5 ms on the
/// penalty-layer ground without friction 0.741. The 0.2 ms reference still holds up to
/// 0.39 J of kinetic energy from 1 s to 1.25 s after landing and 0.093 J from 1.25 s to
/// 1.5 s (1e-4 of the potential is 1.1e-3 J): no scheme should rest within 1 s. So for
/// 15 cm the semi-implicit and asynchronous runs must bounce like the reference
/// (restitution within 10 %: the asynchronous scheme, whose substeps in contact are
/// coupled with the frame-rate interior, gives 0.70; the two references differ by 3 %)
/// and decay; the rest within 1 s is required where physics allows it: the 4 mm drops,
/// and the fully-implicit scheme, which at the frame step damps the bounce away (as the
/// paper says).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/support/schroeder_frames.hpp"

using namespace clockwork;
using namespace clockwork::test;

namespace {

/// The first-bounce restitution of the converged reference (see the header).
constexpr double kReferenceRestitution = 0.765;

/// How long a drop runs after its landing: 1.25 s where the test asks for rest or decay
/// (the kinetic energy from landing + 1 s to + 1.25 s); 0.5 s for the undamped runs that
/// are checked for energy, tets and plane only (a quarter of the CI's Release test time
/// was these drops; the energy of every drop never rose above its initial value at all,
/// docs/schroeder.md).
constexpr double kToRest = 1.25, kEnergyOnly = 0.5;

/// The demo's ball in `scheme`, at rest, its lowest particle `drop` above the plane;
/// β = `beta` (0: no Rayleigh damping).
World ball_drop(const std::string& scheme, double drop, double beta) {
  const Vec3 demo(0, 0, 0.3);
  const Scene probe = build(schroeder_sphere_world(schroeder_sphere_spec(scheme, demo, Vec3::Zero(), beta)));
  const double low = measure_frame(probe, 0.0).lowest;
  return schroeder_sphere_world(
      schroeder_sphere_spec(scheme, Vec3(0, 0, demo.z() - low + drop), Vec3::Zero(), beta));
}

struct SchroederDrop {
  double initial = 0.0, highest = 0.0;
  double initial_potential = 0.0;  ///< gravity, relative to the plane
  double lowest = kNever;
  int inverted = 0;
  bool finite_normal = true;
  double landing = -1.0;      ///< first sample with a particle on the plane, s
  double impact = 0.0;        ///< centre velocity (z) just before it, m/s
  double rebound = 0.0;       ///< highest upward centre velocity within 0.15 s after it
  double kinetic_mid = 0.0;   ///< highest kinetic energy from landing + 0.5 s to + 0.75 s, J
  double kinetic_late = 0.0;  ///< the same from landing + 1 s to + 1.25 s
};

SchroederDrop run_schroeder_drop(const std::string& scheme, double drop, double beta, double after_landing) {
  Scene s = build(ball_drop(scheme, drop, beta));
  const double frame = 1.0 / 24.0, sample = frame / 20.0;  // 2.08 ms
  const FrameState first = measure_frame(s, 0.0);
  SchroederDrop d;
  d.initial = first.kinetic + first.potential;
  d.highest = d.initial;
  d.initial_potential = first.potential - first.elastic;
  double before = 0.0;  // centre velocity at the last sample before landing
  for (int k = 1;; ++k) {
    const double t = k * sample;
    if (d.landing >= 0.0 && t > d.landing + after_landing) break;
    REQUIRE(t < 3.0);
    run_to_frame(s, t);
    const FrameState f = measure_frame(s, t);
    if (k % 20 == 0) d.highest = std::max(d.highest, f.kinetic + f.potential);  // a frame
    d.lowest = std::min(d.lowest, f.lowest);
    d.inverted = std::max(d.inverted, f.inverted);
    d.finite_normal = d.finite_normal && f.finite_normal;
    const double vz = f.centre_velocity.z();
    if (d.landing < 0.0) {
      if (f.lowest < 1e-9) {
        d.landing = t;
        d.impact = before;
      }
      before = vz;
      continue;
    }
    const double since = t - d.landing;
    if (since <= 0.15) d.rebound = std::max(d.rebound, vz);
    if (since >= 0.5 && since <= 0.75) d.kinetic_mid = std::max(d.kinetic_mid, f.kinetic);
    if (since >= 1.0) d.kinetic_late = std::max(d.kinetic_late, f.kinetic);
  }
  return d;
}

/// The checks every drop must pass, from its release to `after_landing` after its
/// landing: the total energy at the frames never above its initial value by more than
/// 1e-3 of it, no inverted tet and no particle below the plane at any sample, every
/// coordinate finite and normal.
SchroederDrop check_schroeder_drop(const std::string& scheme, double drop, double beta,
                                   double after_landing) {
  CAPTURE(scheme);
  CAPTURE(drop);
  CAPTURE(beta);
  const SchroederDrop d = run_schroeder_drop(scheme, drop, beta, after_landing);
  MESSAGE(fmt::format(
      "{} drop {} beta {} to landing + {} s: highest − initial {:.3g} J of {:.4g} J; landing "
      "{:.3f} s at {:.3f} m/s, rebound {:.3f} m/s (e = {:.3f}); kinetic from landing + 0.5 s "
      "{:.3g} J, from + 1 s {:.3g} J (1e-4 of the potential: {:.3g} J)",
      scheme, drop, beta, after_landing, d.highest - d.initial, d.initial, d.landing, d.impact,
      d.rebound, d.rebound / -d.impact, d.kinetic_mid, d.kinetic_late, 1e-4 * d.initial_potential));
  CAPTURE(d.initial);
  CAPTURE(d.highest);
  CHECK(d.highest <= d.initial + 1e-3 * std::abs(d.initial));
  CHECK(d.inverted == 0);
  CHECK(d.lowest >= -1e-12);
  CHECK(d.finite_normal);
  return d;
}

// Without damping the semi-implicit and asynchronous balls keep vibrating (0.05 J and
// 7e-3 J of kinetic energy 1 s after landing): only the demo's damping must rest, the
// undamped drop is checked for energy, tets and plane to landing + 0.5 s.
void check_schroeder_drop_4mm(const char* scheme) {
  check_schroeder_drop(scheme, 0.004, 0.0, kEnergyOnly);
  const SchroederDrop d = check_schroeder_drop(scheme, 0.004, 0.002, kToRest);
  INFO(scheme, ", kinetic 1 s after landing ", d.kinetic_late);
  CHECK(d.kinetic_late < 1e-4 * d.initial_potential);
}

void check_schroeder_drop_15cm(const char* scheme) {
  for (const double beta : {0.0, 0.002}) {
    if (std::string(scheme) == "fully_implicit") {
      // Its velocity in the landing frame is already the contact solve's; undamped, it
      // is checked for energy, tets and plane only.
      const SchroederDrop d = check_schroeder_drop(scheme, 0.15, beta, beta > 0.0 ? kToRest : kEnergyOnly);
      INFO(scheme, " beta ", beta, ": kinetic 1 s after landing ", d.kinetic_late);
      if (beta > 0.0) CHECK(d.kinetic_late < 1e-4 * d.initial_potential);
      continue;
    }
    const SchroederDrop d = check_schroeder_drop(scheme, 0.15, beta, kToRest);
    INFO(scheme, " beta ", beta, ": kinetic 0.5 s after landing ", d.kinetic_mid, ", 1 s after ",
         d.kinetic_late);
    CHECK(d.impact == doctest::Approx(-std::sqrt(2 * 9.81 * 0.15)).epsilon(0.03));
    const double e = d.rebound / -d.impact;
    CAPTURE(e);
    if (beta > 0.0) CHECK(std::abs(e - kReferenceRestitution) <= 0.1 * kReferenceRestitution);
    CHECK(d.kinetic_late < d.kinetic_mid);
  }
}

}  // namespace

// One test case a scheme: CTest runs them side by side (the asynchronous and
// semi-implicit drops take 20-60 s each in Release).
TEST_CASE("schroeder drops: the demo ball dropped 4 mm never gains energy and rests within 1 s, asynchronous") {
  check_schroeder_drop_4mm("schroeder");
}

TEST_CASE("schroeder drops: the demo ball dropped 4 mm never gains energy and rests within 1 s, semi-implicit") {
  check_schroeder_drop_4mm("semi_implicit");
}

TEST_CASE("schroeder drops: the demo ball dropped 4 mm never gains energy and rests within 1 s, fully implicit") {
  check_schroeder_drop_4mm("fully_implicit");
}

TEST_CASE(
    "schroeder drops: the demo ball dropped 15 cm never gains energy and bounces as the converged "
    "reference, asynchronous") {
  check_schroeder_drop_15cm("schroeder");
}

TEST_CASE(
    "schroeder drops: the demo ball dropped 15 cm never gains energy and bounces as the converged "
    "reference, semi-implicit") {
  check_schroeder_drop_15cm("semi_implicit");
}

TEST_CASE("schroeder drops: the demo ball dropped 15 cm never gains energy and is damped at rest, fully implicit") {
  check_schroeder_drop_15cm("fully_implicit");
}
