/// The energy safeguard of the linearised implicit steps (integrators/implicit/energy_safeguard.hpp,
/// docs/backward-euler.md "Linearised steps and the energy safeguard"; issue 41): a small stiff
/// corotational bar, frictionless, spinning fast in free space or landing tilted and fast
/// on the ground, integrated by backward Euler with max_newton 1 and by Zhao's scheme
/// (m = 1 and m > 1). One linear solve per step cannot follow the bar turning a large
/// angle in a step. The total energy recomputed from the kernel's state at every step
/// (kinetic + gravity + elastic + the layers' potential) must never rise above its
/// initial value by more than 1e-3 of it — and, the safeguard switched off
/// (SolidSource::set_energy_safeguard), the same scenes must gain energy: the safeguard
/// is what holds it.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>

#include "contact/contact_system.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/world/world.hpp"
#include "tests/support/solid_energy.hpp"
#include "tests/support/world_specs.hpp"

using namespace clockwork;

namespace {

/// Backward Euler's linearised step (m = 0), its converged Newton step (m = −1), or
/// Zhao's scheme with the bar's lower end a region at m.
struct Integrator {
  int m = 0;
};

/// A 0.2 × 0.05 × 0.05 m corotational bar (48 tets, 1 MPa, 1000 kg/m³), h = h_L = 10 ms.
/// `landing`: tilted 0.1 m above a frictionless ground, falling at 3 m/s; otherwise
/// spinning about a transverse axis at 40 rad/s (0.4 rad per step) without gravity.
World bar_scene(const Integrator& integrator, bool landing) {
  World w({.name = "safeguard", .end_time = 1.0, .frame_rate = 10,
           .gravity = landing ? Vec3(0.0, 0.0, -9.81) : Vec3::Zero()});
  SolidSpec b = test::block_spec("bar", {-0.1, -0.025, 0.1}, {4, 1, 1}, 0.05, {1e6, 0.3, 1000},
                                 FemKind::Corotational);
  if (integrator.m > 0) {
    b.integrator = test::zhao_spec(0.01, integrator.m,
                                   test::vertices_in_box(b.mesh.vertices, {-1, -1, -1}, {-0.04, 1, 1}));
  } else {
    BackwardEulerSpec be{.h = 0.01};
    if (integrator.m == 0) be.settings.max_newton = 1;
    b.integrator = be;
  }
  b.velocity = landing ? test::velocity({0.0, 0.0, -3.0}, {0.0, 20.0, 0.0})
                       : test::velocity(Vec3::Zero(), {0.0, 40.0, 0.0});
  w.add_solid(std::move(b));
  if (landing) w.add_obstacle(test::ground_spec({0, 0, 0}, 1.0));
  ContactSpec contact;
  contact.settings.thickness = 0.001;
  w.enable_contact(contact);
  return w;
}

struct Run {
  double initial = 0.0, highest = 0.0;
  std::uint64_t safeguarded = 0, steps = 0, rotation_limited = 0;
};

/// Runs 0.5 s, measuring before every large step (the observer's order: the state of one
/// instant, a Zhao region's substeps of the step ending there all taken).
Run run_bar(const Integrator& integrator, bool landing, bool safeguard) {
  Scene s = test::build(bar_scene(integrator, landing));
  s.bodies_of<SolidSource>()[0]->set_energy_safeguard(safeguard);
  const Vec3 g = landing ? Vec3(0.0, 0.0, -9.81) : Vec3::Zero();
  Run r;
  r.initial = r.highest = test::solid_total_energy(s, 0.0, g);
  for (int k = 1; k <= 50; ++k) {
    const double t = k / 100.0;  // as the steps' clock (engine/step_clock.hpp), not 0.01 k
    try {
      s.kernel->run_until(std::nextafter(t, 0.0));
    } catch (const NumericalFailure&) {  // the health check stopped a run gone wild
      r.highest = HUGE_VAL;
      break;
    }
    const double e = test::solid_total_energy(s, t, g);
    r.highest = std::max(r.highest, std::isfinite(e) ? e : HUGE_VAL);
    // Without the safeguard a gain is all the run has to show; what follows it (a
    // blow-up the layers then chase) only costs time.
    if (!safeguard && r.highest > r.initial + 1e-3 * std::abs(r.initial)) break;
  }
  r.safeguarded = s.bodies_of<SolidSource>()[0]->counters().safeguarded;
  r.steps = s.bodies_of<SolidSource>()[0]->counters().coarse_steps;
  r.rotation_limited = s.bodies_of<SolidSource>()[0]->counters().rotation_limited;
  return r;
}

const char* describe(const Integrator& integrator) {
  return integrator.m == 0 ? "backward Euler max_newton 1" : integrator.m < 0 ? "backward Euler Newton" : "Zhao";
}

/// Landing: the total energy never above its initial value (+ 1e-3 of it) with the
/// safeguard, and above that without it.
void check_landing(const Integrator& integrator) {
  CAPTURE(integrator.m);
  const Run on = run_bar(integrator, true, true);
  const Run off = run_bar(integrator, true, false);
  MESSAGE(fmt::format("{} m {} landing: initial {:.4g} J; highest − initial {:.3g} J with the safeguard "
                      "({} of {} steps re-solved), {:.3g} J without",
                      describe(integrator), integrator.m, on.initial, on.highest - on.initial,
                      on.safeguarded, on.steps, off.highest - off.initial));
  CHECK(on.highest <= on.initial + 1e-3 * std::abs(on.initial));
  CHECK(on.safeguarded > 0);
  CHECK(off.safeguarded == 0);
  CHECK(off.highest > off.initial + 1e-3 * std::abs(off.initial));
}

/// Spinning: with the safeguard never above the initial value (+ 1e-3 of it), without
/// it above that. The rigid rotation that gives back the angular momentum the step
/// lost (SolidSource::keep_angular_momentum) is cut where all of it would create
/// energy (energy_limited_share): without that cut the bar gains energy even with
/// converged Newton steps, whose own check cannot see it.
void check_spinning(const Integrator& integrator) {
  CAPTURE(integrator.m);
  const Run on = run_bar(integrator, false, true);
  const Run off = run_bar(integrator, false, false);
  MESSAGE(fmt::format("{} m {} spinning: initial {:.4g} J; highest − initial {:.3g} J with the safeguard "
                      "({} of {} steps re-solved, {} rotations cut), {:.3g} J without",
                      describe(integrator), integrator.m, on.initial, on.highest - on.initial,
                      on.safeguarded, on.steps, on.rotation_limited, off.highest - off.initial));
  CHECK(on.highest <= on.initial + 1e-3 * std::abs(on.initial));
  CHECK(on.rotation_limited > 0);
  CHECK(off.safeguarded == 0);
  CHECK(off.rotation_limited == 0);
  CHECK(off.highest > off.initial + 1e-3 * std::abs(off.initial));
  if (integrator.m != -1) CHECK(on.safeguarded > 0);
}

}  // namespace

TEST_CASE("linearised safeguard: backward Euler with max_newton 1 never gains energy on a fast stiff bar, and does without the safeguard") {
  check_landing({0});
  check_spinning({0});
}

TEST_CASE("linearised safeguard: converged backward Euler on a fast spinning bar never gains energy from the angular-momentum rotation") {
  check_spinning({-1});
}

TEST_CASE("linearised safeguard: Zhao steps (m = 1 and m = 4) never gain energy on a fast stiff bar, and do without the safeguard") {
  for (const int m : {1, 4}) {
    check_landing({m});
    check_spinning({m});
  }
}
