// Issue 41: a spinning, damped Zhao block keeps its angular momentum — in free flight and
// in contact with an explicit cloth and with a backward-Euler block (the sweep's
// tests/data/sweep/pair_{explicit,be}_zhao_m{1,4}_spin.json, shortened to 0.1 s; no
// gravity, no obstacles).
//
// Measured before (sweep_solids.py, column dL): 4.2e-5 (explicit cloth, m = 1), 4.0e-5
// (m = 4), 3.8e-5 (backward Euler at 5 ms, m = 4) of Σ |x × m v|, while backward Euler
// against m = 1 read 3e-15. The partner was not the cause: the block alone loses the
// same 4.24e-5 in its step at t = 10 ms (and 8.9e-5 by 30 ms), and backward Euler
// against m = 1 loses it too once the lower block is 15 cm down instead of 10 cm (the
// pair planes of the step at 10 ms then masked it). Each step's rigid rotation that
// gives the step back the angular momentum it lost (SolidSource::keep_angular_momentum)
// was cut by the energy rule (energy_limited_share: to 0.61 of itself at 10 ms, 0.89 at
// 20 ms, 0.95 at 30 ms): with β = h_L the linearised step of a body spinning at 1 rad/s
// leaves it stretched (the drift x + h v of a rotation lengthens every radius by
// (h Ω)²/2, and β K, which damps the centripetal velocity change as a strain rate, holds
// the stretch: elastic energy 5e-7 J after one step, 8e-6 J at 60 ms against 1e-8 J
// undamped), so the step with L exact ends 2.7e-6 J above its start — more than the
// per-step tolerance (1.1e-6 J), and the rule allowed no net gain at all. The fix: the
// rotations of a body may together create up to kRotationBudget of its energy scale
// (docs/backward-euler.md "Angular momentum and energy"); this block needs 1.5e-5 of it.
//
// Asserted, recomputed from the kernel's state (engine/diagnostics.hpp's `measure`)
// just before every 10 ms step: |ΔP| ≤ 1e-10 of Σ m|v|, |ΔL| ≤ 1e-10 of Σ |x × m v|, no
// rotation cut, the bodies met, and the total energy never above its start by more than
// 1e-3 of it (alone: +1.5e-5 at m = 1, +1.3e-5 at m = 4; see check_spinning for the two
// pairs that gain energy in contact with or without the spin). Measured after: |ΔL|
// ≤ 1.6e-14 in all six cases.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "contact/contact_system.hpp"
#include "engine/diagnostics.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/world/world.hpp"
#include "tests/support/momentum.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork {
namespace {

enum class Lower { None, ExplicitCloth, BackwardEuler };

constexpr double kSpinEnd = 0.1;   ///< s: the contact (20–60 ms) and after it
constexpr double kSpinStep = 0.01; ///< s: Zhao's h_L, the readings' spacing

/// The sweep's pair: the lower body at rest at z = 0 (a 0.2 m explicit cloth of 10 × 10
/// cells, or a 0.15 × 0.15 × 0.1 m backward-Euler block at 5 ms whose top is at z = 0),
/// and 2 cm above it a 0.15 × 0.15 × 0.1 m corotational Zhao block (E 0.2 MPa, ν 0.3,
/// 500 kg/m³, β 0.01, h_L 10 ms, its bottom layer of vertices a region at m) moving at
/// (0.1, 0.05, −1) m/s and spinning at (0.3, −0.5, 0.8) rad/s.
World spinning_pair(Lower lower, int m) {
  World w({.name = "spin", .end_time = kSpinEnd, .frame_rate = 100, .gravity = {0, 0, 0}});
  const TetMaterial material{2e5, 0.3, 500};
  if (lower == Lower::ExplicitCloth)
    w.add_shell(test::cloth_spec("lower", 0.2, 10, {0, 0, 0},
                                 {.area_density = 0.2, .young = 2000.0, .poisson = 0.3, .bending = 0.001}));
  if (lower == Lower::BackwardEuler) {
    SolidSpec b = test::block_spec("lower", {-0.075, -0.075, -0.1}, {3, 3, 2}, 0.05, material, FemKind::Corotational);
    b.material.rayleigh_beta = 0.01;
    b.integrator = BackwardEulerSpec{.h = 0.005};
    w.add_solid(std::move(b));
  }
  SolidSpec up = test::block_spec("upper", {-0.05, -0.06, 0.02}, {3, 3, 2}, 0.05, material, FemKind::Corotational);
  up.material.rayleigh_beta = 0.01;
  up.integrator = test::zhao_spec(kSpinStep, m, test::vertices_in_box(up.mesh.vertices, {-1, -1, -1}, {1, 1, 0.03}));
  up.velocity = test::velocity({0.1, 0.05, -1.0}, {0.3, -0.5, 0.8});
  w.add_solid(std::move(up));
  w.enable_contact(ContactSpec{});
  return w;
}

std::string lower_name(Lower lower) {
  return lower == Lower::None ? "alone" : lower == Lower::ExplicitCloth ? "explicit cloth" : "backward Euler";
}

void check_spinning(Lower lower, int m) {
  CAPTURE(lower_name(lower));
  CAPTURE(m);
  Scene s = test::build(spinning_pair(lower, m));
  Kernel& k = *s.kernel;
  REQUIRE(s.contact);
  const test::MomentumScale scale = test::momentum_scale(k.state());
  const Diagnostics d0 = measure(k, 0.0);
  double highest = d0.total(), dP = 0.0, dL = 0.0;
  const int readings = static_cast<int>(std::lround(kSpinEnd / kSpinStep));
  for (int i = 1; i <= readings; ++i) {
    const double t = kSpinStep * i;
    k.run_until(std::nextafter(t, 0.0));  // after the step's substeps, before the next step
    const Diagnostics d = measure(k, t);
    highest = std::max(highest, d.total());
    dP = std::max(dP, (d.linear_momentum - d0.linear_momentum).norm() / scale.linear);
    dL = std::max(dL, (d.angular_momentum - d0.angular_momentum).norm() / scale.angular);
  }
  std::uint64_t cut = 0;
  for (const SolidSource* solid : s.bodies_of<SolidSource>()) cut += solid->counters().rotation_limited;
  MESSAGE(fmt::format("Zhao m = {} spinning, {}: |dP| {:.2g}, |dL| {:.2g}, highest energy {:+.2g} of {:.4g} J, "
                      "{} rotations cut, {} layer activations",
                      m, lower_name(lower), dP, dL, highest / d0.total() - 1.0, d0.total(), cut,
                      s.contact->counters().layer_activations));
  // The bodies met: the lower body (at rest at first) ends with a mean velocity above 5 %
  // of the upper's at the start (the sweep's `exchange`). Not the layers: a solid's pair
  // planes with another solid keep 2 η(1), and no layer fires between the two blocks
  // (io/world/world_contact.cpp).
  if (lower != Lower::None) {
    const Body& body = *std::find_if(s.bodies.begin(), s.bodies.end(), [](const Body& b) { return b.name == "lower"; });
    Vec3 p_lower = Vec3::Zero();
    double m_lower = 0.0, m_total = 0.0;
    for (Index a = 0; a < static_cast<Index>(k.state().size()); ++a) {
      if (k.state().kinematic(a)) continue;
      m_total += k.state().mass(a);
      if (a < body.first_vertex || a >= body.first_vertex + body.vertex_count) continue;
      m_lower += k.state().mass(a);
      p_lower += k.state().mass(a) * k.state().velocity(a);
    }
    const double exchange = (p_lower.norm() / m_lower) / (d0.linear_momentum.norm() / (m_total - m_lower));
    MESSAGE(fmt::format("exchange {:.3g}", exchange));
    CHECK(exchange > 0.05);
  }
  CHECK(dP <= 1e-10);
  CHECK(dL <= 1e-10);
  CHECK(cut == 0);
  // The energy bound where the pair meets it without the spin: the sweep's
  // pair_explicit_zhao_m1 (+2.0e-3) and pair_be_zhao_m4 (+62 %; test_pair_energy's
  // may_fail case) gain energy in contact whatever the rotation (here +1.9e-3 and +99 %
  // before and after the budget).
  const bool energy_bound = lower == Lower::None || (lower == Lower::ExplicitCloth) == (m == 4);
  if (energy_bound) CHECK(highest <= d0.total() * (1.0 + 1e-3));
}

}  // namespace

TEST_CASE("a spinning damped Zhao block keeps angular momentum in free flight") {
  check_spinning(Lower::None, 1);
  check_spinning(Lower::None, 4);
}

TEST_CASE("a spinning damped Zhao block keeps momentum against an explicit cloth") {
  check_spinning(Lower::ExplicitCloth, 1);
  check_spinning(Lower::ExplicitCloth, 4);
}

TEST_CASE("a spinning damped Zhao block keeps momentum against a backward-Euler block") {
  check_spinning(Lower::BackwardEuler, 1);
  check_spinning(Lower::BackwardEuler, 4);
}

}  // namespace clockwork
