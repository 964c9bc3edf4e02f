// Issue 41, "Must show": the momentum matrix. For every unordered pair of the six
// integrator kinds {explicit cloth (AVI), phantom cloth, backward Euler solid, Zhao
// m = 1, Zhao m = 4 with the contact inside S, Schroeder's asynchronous solid} (a kind
// with itself included: 21 pairs), two bodies collide with no gravity and no
// obstacles: the upper one falls onto the lower one, off its centre, sliding and
// spinning about a tilted axis, so that neither the linear nor the angular momentum is
// zero by symmetry. Total linear momentum P = Σ m v and angular momentum L = Σ x × m v
// about the origin (engine/diagnostics.hpp's `measure`: the kernel state plus what a
// phantom mesh carries outside it) must stay at their initial values to 1e-10 of
// Σ m|v| and Σ |x × m v| before, during and after the contact.
//
// When: every coarse-step body steps at 2 ms (backward Euler h, Zhao h_L, Schroeder's
// frame). The momentum is read 10 µs before each multiple of 2 ms: after a Zhao large
// step's last substep (its S–L share "in flight" has closed, docs/zhao.md "Contact
// inside the large step") and after a Schroeder frame's last substep, before the coarse
// events of the next step. Schroeder's kernel velocity is then its coupled step's
// half-step velocity v^{n+½} (docs/schroeder.md): its linear momentum equals
// vⁿ's (the half step's forces sum to zero); its angular momentum is the one kept
// exact (vⁿ's differs from it by the half step's torque; vⁿ is not visible outside the
// source).
//
// Measured (each pair's worst reading; the cases print them): linear momentum
// ≤ 1.7e-13 of Σ m|v| in all 21 pairs, with the solids' steps seeing the contact in
// their solves (docs/backward-euler.md "Contact inside the step"). Angular momentum ≤ 1.2e-13
// of Σ |x × m v| in the three cloth–cloth pairs (penalty impulses act along the
// distance direction, AVI and phantom ticks keep L), and ≤ 1.2e-13 in the pairs of
// backward Euler and Zhao m = 1 with each other, with an explicit and with a phantom
// cloth: their coarse step, one kick at t_n, is rotated rigidly so that it changes L
// by exactly the external impulses' torque (SolidSource::keep_angular_momentum), the
// planes' impulses at x_n. A phantom cloth takes a plane's reaction J on both copies
// (PhantomSource::receive_impulse), which moves its momentum at the copies' centre
// (q + q̃)/2, not at the primary q where the plane balanced it; and J moves the point
// where the cloth's next tick applies its interval's elastic impulse (h/2) g off the
// midpoint about which g is torque-free. That tick's rigid rotation cancels both
// torques with its constraint torque. Without it these two pairs drifted 3.7e-6 and
// 3.1e-6 (1.5e-7 from the lever arm (q̃ − q)/2, the rest from the tick). A Zhao m = 4
// region's increments land at its substeps, at the positions the plan has reached by
// then; the step's rotation is solved against that plan (the later kicks' positions
// move with it: (I + B) ω = −excess, SolidSource::keep_angular_momentum_multirate),
// and a substep taken off the plan (an outside impulse landed on the region) cancels
// the torque of its response and of its planned increment landing at x instead of
// x_plan (SolidSource::cancel_response_torque): ≤ 8.8e-14 in its five pairs (before,
// 1e-4 .. 1.7e-2) and 2.7e-14 alone (1.6e-4). A Schroeder solid's kernel event (the
// velocity update of one substep and the position update of the next) changes the
// velocities the kernel holds from v^{n−½} to v^{n+½}; the event's internal impulses
// (that change less its external impulses: gravity, Rayleigh α, §6 colliders; other
// bodies' kicks are not part of it) are given a rigid rotation about the mass centre
// that cancels their torque (SchroederStepper::keep_angular_momentum, docs/schroeder.md
// decision 13). Measured before it, the lone block's events had an internal
// torque of 1.5e-5 (mean; max 4e-5) of Σ |x × m v| each, the same in uncoupled substeps
// and around the coupled one. Now ≤ 7.5e-14 in the six Schroeder pairs (before, 9.7e-5
// .. 8.5e-3) and 2.1e-15 alone (1.2e-4).
// Before the rotations, the solids' own steps changed L, not the contact — the control
// cases below, a lone solid with random initial velocities and no contact at all,
// drifted 5e-5 .. 1.6e-4 (backward Euler, Zhao m = 1 and m = 4 now 3e-16 .. 3e-14,
// Schroeder 2.1e-15):
// - linear FEM is not rotation invariant: its forces' torque Σ x × f = Σ u × f =
//   −Σ u × (K u) (Σ X × K u = 0 since K(ω × X) = 0) is quadratic in the displacement,
//   so even its exact flow changes L once deformed (a lone backward Euler block: 2.7e-5
//   at h = 5 ms, 4.6e-5 at 1.25 ms — no convergence in h);
// - backward Euler (and Zhao, m = 1 reading identically to it): L_{n+1} − L_n =
//   −h² Σ v_{n+1} × f(x_{n+1}) per step, O(h) over a run (corotational, lone block:
//   1.8e-4 at 5 ms, 7.5e-5 at 1.25 ms; two corotational blocks in contact 7.4e-3 at
//   5 ms, 9.6e-4 at 1 ms);
// - Schroeder's §3.1 substep (x^{n+1} = xⁿ + Δt v½, v^{n+1} = vⁿ + Δt a(x^{n+1}))
//   changes L by (Δt²/2) Σ f(xⁿ) × vⁿ (leapfrog's Σ v½ × v½ would be zero), the
//   coupled step likewise through its implicit terms, and the reading sees v½.
// The contact makes it larger only by deforming the soft blocks (E = 0.2 MPa hit at
// 1 m/s). Before the rotations, with corotational solids (pair_scene(...,
// FemKind::Corotational), forces without torque) the same 18 pairs still drifted 6e-5 ..
// 8e-3 (linear momentum ≤ 2e-14): the integrators' own change of L, backward Euler's
// and Schroeder's above.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/diagnostics.hpp"
#include "io/world/world.hpp"
#include "tests/support/momentum.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork {
namespace {

enum class Kind { Explicit, Phantom, BackwardEuler, Zhao1, Zhao4, Schroeder };

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::Explicit:
      return "explicit cloth";
    case Kind::Phantom:
      return "phantom cloth";
    case Kind::BackwardEuler:
      return "backward_euler";
    case Kind::Zhao1:
      return "zhao m=1";
    case Kind::Zhao4:
      return "zhao m=4";
    case Kind::Schroeder:
      return "schroeder";
  }
  return "?";
}

constexpr double kCell = 0.05;     ///< tet blocks' cell, m
constexpr double kStep = 0.002;    ///< every coarse step (BE h, Zhao h_L, Schroeder frame), s
constexpr double kGap = 0.004;     ///< between the bodies at t = 0, m (2 thicknesses)
constexpr double kEndTime = 0.06;  ///< simulated, s
constexpr double kBefore = 1e-5;   ///< read this long before each coarse step, s

/// Where a body is and how it moves: its footprint centred on (cx, cy), its lowest
/// point at `bottom`; `hit_on_top`: the other body comes from above (Zhao m = 4 puts
/// S at the face that gets hit); `random`: Gaussian noise on its initial velocities.
struct Placement {
  std::string name;
  double cx = 0.0, cy = 0.0, bottom = 0.0;
  Vec3 linear = Vec3::Zero(), angular = Vec3::Zero();
  bool hit_on_top = true;
  double random = 0.0;
};

bool is_cloth(Kind k) { return k == Kind::Explicit || k == Kind::Phantom; }

/// Cells along z of a kind's block: Schroeder's needs an interior cell, whose tets the
/// automatic partition makes fully implicit (3 × 3 × 2 has none: every tet would be
/// semi-implicit).
int layers(Kind k) { return k == Kind::Schroeder ? 3 : 2; }

/// Height of a body of kind `k`, m (a cloth is flat).
double height(Kind k) { return is_cloth(k) ? 0.0 : layers(k) * kCell; }

/// A 0.1 × 0.1 m cloth of 5 × 5 cells (area density 0.2 kg/m²).
ShellSpec cloth(Kind k, const Placement& at) {
  ShellSpec c = test::cloth_spec(at.name, 0.1, 5, {at.cx, at.cy, at.bottom},
                                 {.area_density = 0.2, .young = 500.0, .poisson = 0.3, .bending = 1e-4});
  if (k == Kind::Phantom) c.phantom = PhantomSpec{.h_imp = 0.002};
  c.velocity = test::velocity(at.linear, at.angular, at.random);
  return c;
}

/// A tet block of 3 × 3 × layers(k) cells of 5 cm (E = 0.2 MPa, ρ = 500), FEM model
/// `fem`. The matrix uses linear FEM: backward Euler keeps a free *rigidly* spinning
/// linear block's angular momentum (2e-14 here; docs/backward-euler.md), a corotational one
/// not (1e-4); a deformed one neither (see the top).
SolidSpec block(Kind k, const Placement& at, FemKind fem) {
  const double side = 3 * kCell;
  SolidSpec b = test::block_spec(at.name, {at.cx - side / 2, at.cy - side / 2, at.bottom},
                                 {3, 3, layers(k)}, kCell, {2e5, 0.3, 500}, fem);
  // The layer of vertices on the face that gets hit (0.03 m holds one layer of 0.05).
  const double top = at.bottom + height(k);
  const auto [lo, hi] = at.hit_on_top ? std::pair<Vec3, Vec3>{{-1, -1, top - 0.03}, {1, 1, 1}}
                                      : std::pair<Vec3, Vec3>{{-1, -1, -1}, {1, 1, at.bottom + 0.03}};
  switch (k) {
    case Kind::BackwardEuler:
      b.integrator = BackwardEulerSpec{.h = kStep};
      break;
    case Kind::Zhao1:
    case Kind::Zhao4:
      b.integrator = test::zhao_spec(kStep, k == Kind::Zhao4 ? 4 : 1, test::vertices_in_box(b.mesh.vertices, lo, hi));
      break;
    case Kind::Schroeder: {
      SchroederSpec schroeder;
      schroeder.settings.frame_dt = kStep;
      b.integrator = std::move(schroeder);
      break;
    }
    default:
      break;
  }
  b.velocity = test::velocity(at.linear, at.angular, at.random);
  return b;
}

/// Adds the body of kind `k` placed and moving as `at` says; `fem`: a solid's material
/// model.
void add_body(World& w, Kind k, const Placement& at, FemKind fem) {
  if (is_cloth(k)) w.add_shell(cloth(k, at));
  else w.add_solid(block(k, at, fem));
}

/// The upper body: kGap above a `lower` body at rest with its base at z = 0, 3 cm and
/// 2 cm off its centre, falling at 1 m/s, sliding at 0.1 m/s and spinning about a
/// tilted axis.
Placement upper_placement(Kind lower) {
  return {.name = "upper",
          .cx = 0.03,
          .cy = 0.02,
          .bottom = height(lower) + kGap,
          .linear = {0.1, 0, -1},
          .angular = {0.5, 0, 2},
          .hit_on_top = false};
}

/// The world of the pair: penalty layers 2 mm thick, a reading frame every kStep.
World pair_world() {
  World w({.name = "pair", .end_time = kEndTime, .frame_rate = 1 / kStep});
  ContactSpec contact;
  contact.settings.thickness = 0.002;
  w.enable_contact(contact);
  return w;
}

/// `lower` at rest with its base at z = 0; `upper` above it (upper_placement).
World pair_scene(Kind lower, Kind upper, FemKind fem = FemKind::Linear) {
  World w = pair_world();
  add_body(w, lower, {.name = "lower"}, fem);
  add_body(w, upper, upper_placement(lower), fem);
  return w;
}

/// The upper body of pair_scene(k, k) alone, its velocities given noise `random`.
World upper_alone(Kind k, FemKind fem, double random) {
  World w = pair_world();
  Placement at = upper_placement(k);
  at.random = random;
  add_body(w, k, at, fem);
  return w;
}

struct Drift {
  double p = 0.0, L = 0.0;  ///< worst |ΔP| / Σ m|v| and |ΔL| / Σ |x × m v|
  double first_contact = -1, last_contact = -1;  ///< reading times in contact, s
  std::uint64_t activations = 0;                 ///< penalty layers activated over the run
  /// Readings in contact ("during"): with active layers, or after a step whose pair
  /// planes pushed. A backward-Euler body's planes against another solid keep 2 η(1), out
  /// of the layers (SolveContact::add_planes): its pairs touch through the planes alone.
  int contact_readings = 0;
  std::uint64_t pushing_planes = 0;  ///< pair planes that pushed, every solid's, over the run
  std::uint64_t resolved = 0;  ///< Zhao substeps solved off the plan (contact inside S)
  /// Pair planes that pushed in the solves of Zhao bodies with a region at m > 1 (its S
  /// is at the face that gets hit: the contact inside S, solved in the step's plan).
  std::uint64_t region_planes = 0;
};

Drift measure_world(World world, const std::string& label) {
  Scene s = test::build(std::move(world));
  Kernel& k = *s.kernel;
  const VertexState& st = k.state();
  const test::MomentumScale scale = test::momentum_scale(st);
  const double p_scale = scale.linear, L_scale = scale.angular;
  REQUIRE(p_scale > 0.0);
  REQUIRE(L_scale > 0.0);
  REQUIRE(s.contact);
  const Diagnostics d0 = measure(k, 0.0);
  Drift worst;
  const int readings = static_cast<int>(kEndTime / kStep + 0.5);
  const auto pushing = [&] {
    std::uint64_t n = 0;
    for (const SolidSource* solid : s.bodies_of<SolidSource>()) n += solid->counters().pushing_pairs;
    return n;
  };
  for (int i = 1; i <= readings; ++i) {
    const double t = kStep * i - kBefore;
    k.run_until(t);
    const Diagnostics d = measure(k, t);
    const double p = (d.linear_momentum - d0.linear_momentum).norm() / p_scale;
    const double L = (d.angular_momentum - d0.angular_momentum).norm() / L_scale;
    worst.p = std::max(worst.p, p);
    worst.L = std::max(worst.L, L);
    const std::uint64_t pushed = pushing();
    const bool planes_pushed = pushed > worst.pushing_planes;
    worst.pushing_planes = pushed;
    if (s.contact->counters().active_layers > 0 || planes_pushed) {
      ++worst.contact_readings;
      if (worst.first_contact < 0) worst.first_contact = t;
      worst.last_contact = t;
    }
  }
  worst.activations = s.contact->counters().layer_activations;
  // No rotation that keeps L was cut for the energy (docs/solids.md "Angular momentum
  // and energy", "Schroeder" decision 14): a cut event would not keep L exactly.
  for (const SolidSource* solid : s.bodies_of<SolidSource>()) {
    worst.resolved += solid->counters().resolved_substeps;
    if (const MultirateSolver* z = solid->multirate())
      for (const MultirateRegion& r : z->regions())
        if (r.m > 1) {
          worst.region_planes += solid->counters().pushing_pairs;
          break;
        }
    CHECK(solid->counters().rotation_limited == 0);
  }
  for (const SchroederSource* body : s.bodies_of<SchroederSource>()) {
    // The asynchronous scheme proper: substeps inside the frame, and an I set.
    CHECK(body->stepper().substeps_per_frame() > 1);
    CHECK(body->stepper().semi_implicit_tets() < body->model().tet_count());
    CHECK(body->stepper().counters().rotation_limited == 0);
  }
  MESSAGE(label << ": |dP|/sum m|v| " << worst.p << ", |dL|/sum |x x mv| " << worst.L
                << "; in contact at readings " << worst.first_contact << " .. "
                << worst.last_contact << " s (" << worst.contact_readings << " readings), "
                << worst.activations << " layer activations, " << worst.pushing_planes
                << " pushing pair planes, " << worst.resolved
                << " Zhao substeps off the plan, " << worst.region_planes
                << " pushing planes of a Zhao m > 1 body");
  return worst;
}

Drift measure_pair(Kind lower, Kind upper) {
  return measure_world(pair_scene(lower, upper), kind_name(lower) + " | " + kind_name(upper));
}

/// The pair touched: layers fired, or pair planes pushed (backward Euler against another
/// solid touches through its planes alone); and a Zhao m = 4 body took the contact inside
/// its S region: off its plan, after an outside impulse landed on S, or in its plan, by
/// planes that pushed. Since a Zhao step drops the planes that pull and solves again
/// (docs/zhao.md "Contact inside the large step"), a Zhao m = 4 body that plans the
/// pair with a solid now takes the contact in its plan: 0 substeps off the plan against
/// backward Euler, Zhao m = 1 and m = 4, where before an outside impulse landed on S
/// during the substeps.
void check_contact(Kind lower, Kind upper, const Drift& d) {
  CHECK(d.activations + d.pushing_planes > 0);
  CHECK(d.contact_readings > 0);  // a reading during the contact
  if (lower == Kind::Zhao4 || upper == Kind::Zhao4) CHECK(d.resolved + d.region_planes > 0);
}

void check_linear(Kind lower, Kind upper) {
  const Drift d = measure_pair(lower, upper);
  check_contact(lower, upper, d);
  CHECK(d.p <= 1e-10);
}

void check_angular(Kind lower, Kind upper) {
  const Drift d = measure_pair(lower, upper);
  check_contact(lower, upper, d);
  CHECK(d.L <= 1e-10);
}

/// Control: the solid of kind `k` alone, no contact partner, started with the upper
/// body's motion plus random velocities of 0.1 m/s (so that it deforms).
void check_alone(Kind k) {
  const Drift d = measure_world(upper_alone(k, FemKind::Linear, 0.1), kind_name(k) + " alone");
  CHECK(d.activations == 0);
  CHECK(d.L <= 1e-10);
}

/// Σ x × f of a block's elastic forces at its rest positions displaced by a fixed
/// pattern of ~1 cm, relative to Σ |x × f|.
double elastic_torque(FemKind fem) {
  const Scene s = test::build(upper_alone(Kind::BackwardEuler, fem, 0.0));
  REQUIRE(s.bodies_of<SolidSource>().size() == 1);
  const TetFemModel& model = s.bodies_of<SolidSource>()[0]->model();
  Eigen::VectorXd x = model.rest_positions();
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] += 0.01 * std::sin(1.7 * i + 0.3);
  Eigen::VectorXd grad;
  model.gradient(x, grad);
  Vec3 torque = Vec3::Zero();
  double scale = 0.0;
  for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
    const Vec3 arm = x.segment<3>(3 * a).cross(Vec3(-grad.segment<3>(3 * a)));
    torque += arm;
    scale += arm.norm();
  }
  REQUIRE(scale > 0.0);
  return torque.norm() / scale;
}

}  // namespace

TEST_CASE("contact matrix control: linear FEM forces carry a torque once deformed") {
  // Why no integrator can keep L for a deformed linear-FEM solid: its exact flow
  // changes it (measured 1.4e-2 here); the corotational forces carry none (3e-17).
  CHECK(elastic_torque(FemKind::Linear) > 1e-4);
  CHECK(elastic_torque(FemKind::Corotational) < 1e-12);
}

TEST_CASE("contact matrix: explicit cloth and explicit cloth: linear momentum") {
  check_linear(Kind::Explicit, Kind::Explicit);
}
TEST_CASE("contact matrix: explicit cloth and explicit cloth: angular momentum") {
  check_angular(Kind::Explicit, Kind::Explicit);
}
TEST_CASE("contact matrix: phantom cloth and explicit cloth: linear momentum") {
  check_linear(Kind::Phantom, Kind::Explicit);
}
TEST_CASE("contact matrix: phantom cloth and explicit cloth: angular momentum") {
  check_angular(Kind::Phantom, Kind::Explicit);
}
TEST_CASE("contact matrix: phantom cloth and phantom cloth: linear momentum") {
  check_linear(Kind::Phantom, Kind::Phantom);
}
TEST_CASE("contact matrix: phantom cloth and phantom cloth: angular momentum") {
  check_angular(Kind::Phantom, Kind::Phantom);
}
TEST_CASE("contact matrix: backward_euler and explicit cloth: linear momentum") {
  check_linear(Kind::BackwardEuler, Kind::Explicit);
}
TEST_CASE("contact matrix: backward_euler and explicit cloth: angular momentum") {
  check_angular(Kind::BackwardEuler, Kind::Explicit);
}
TEST_CASE("contact matrix: backward_euler and phantom cloth: linear momentum") {
  check_linear(Kind::BackwardEuler, Kind::Phantom);
}
TEST_CASE("contact matrix: backward_euler and phantom cloth: angular momentum") {
  check_angular(Kind::BackwardEuler, Kind::Phantom);
}
TEST_CASE("contact matrix: backward_euler and backward_euler: linear momentum") {
  check_linear(Kind::BackwardEuler, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: backward_euler and backward_euler: angular momentum") {
  check_angular(Kind::BackwardEuler, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: zhao m = 1 and explicit cloth: linear momentum") {
  check_linear(Kind::Zhao1, Kind::Explicit);
}
TEST_CASE("contact matrix: zhao m = 1 and explicit cloth: angular momentum") {
  check_angular(Kind::Zhao1, Kind::Explicit);
}
TEST_CASE("contact matrix: zhao m = 1 and phantom cloth: linear momentum") {
  check_linear(Kind::Zhao1, Kind::Phantom);
}
TEST_CASE("contact matrix: zhao m = 1 and phantom cloth: angular momentum") {
  check_angular(Kind::Zhao1, Kind::Phantom);
}
TEST_CASE("contact matrix: zhao m = 1 and backward_euler: linear momentum") {
  check_linear(Kind::Zhao1, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: zhao m = 1 and backward_euler: angular momentum") {
  check_angular(Kind::Zhao1, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: zhao m = 1 and zhao m = 1: linear momentum") {
  check_linear(Kind::Zhao1, Kind::Zhao1);
}
TEST_CASE("contact matrix: zhao m = 1 and zhao m = 1: angular momentum") {
  check_angular(Kind::Zhao1, Kind::Zhao1);
}
TEST_CASE("contact matrix: zhao m = 4 and explicit cloth: linear momentum") {
  check_linear(Kind::Zhao4, Kind::Explicit);
}
TEST_CASE("contact matrix: zhao m = 4 and explicit cloth: angular momentum") {
  check_angular(Kind::Zhao4, Kind::Explicit);
}
TEST_CASE("contact matrix: zhao m = 4 and phantom cloth: linear momentum") {
  check_linear(Kind::Zhao4, Kind::Phantom);
}
TEST_CASE("contact matrix: zhao m = 4 and phantom cloth: angular momentum") {
  check_angular(Kind::Zhao4, Kind::Phantom);
}
TEST_CASE("contact matrix: zhao m = 4 and backward_euler: linear momentum") {
  check_linear(Kind::Zhao4, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: zhao m = 4 and backward_euler: angular momentum") {
  check_angular(Kind::Zhao4, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: zhao m = 4 and zhao m = 1: linear momentum") {
  check_linear(Kind::Zhao4, Kind::Zhao1);
}
TEST_CASE("contact matrix: zhao m = 4 and zhao m = 1: angular momentum") {
  check_angular(Kind::Zhao4, Kind::Zhao1);
}
TEST_CASE("contact matrix: zhao m = 4 and zhao m = 4: linear momentum") {
  check_linear(Kind::Zhao4, Kind::Zhao4);
}
TEST_CASE("contact matrix: zhao m = 4 and zhao m = 4: angular momentum") {
  check_angular(Kind::Zhao4, Kind::Zhao4);
}
TEST_CASE("contact matrix: schroeder and explicit cloth: linear momentum") {
  check_linear(Kind::Schroeder, Kind::Explicit);
}
TEST_CASE("contact matrix: schroeder and explicit cloth: angular momentum") {
  check_angular(Kind::Schroeder, Kind::Explicit);
}
TEST_CASE("contact matrix: schroeder and phantom cloth: linear momentum") {
  check_linear(Kind::Schroeder, Kind::Phantom);
}
TEST_CASE("contact matrix: schroeder and phantom cloth: angular momentum") {
  check_angular(Kind::Schroeder, Kind::Phantom);
}
TEST_CASE("contact matrix: schroeder and backward_euler: linear momentum") {
  check_linear(Kind::Schroeder, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: schroeder and backward_euler: angular momentum") {
  check_angular(Kind::Schroeder, Kind::BackwardEuler);
}
TEST_CASE("contact matrix: schroeder and zhao m = 1: linear momentum") {
  check_linear(Kind::Schroeder, Kind::Zhao1);
}
TEST_CASE("contact matrix: schroeder and zhao m = 1: angular momentum") {
  check_angular(Kind::Schroeder, Kind::Zhao1);
}
TEST_CASE("contact matrix: schroeder and zhao m = 4: linear momentum") {
  check_linear(Kind::Schroeder, Kind::Zhao4);
}
TEST_CASE("contact matrix: schroeder and zhao m = 4: angular momentum") {
  check_angular(Kind::Schroeder, Kind::Zhao4);
}
TEST_CASE("contact matrix: schroeder and schroeder: linear momentum") {
  check_linear(Kind::Schroeder, Kind::Schroeder);
}
TEST_CASE("contact matrix: schroeder and schroeder: angular momentum") {
  check_angular(Kind::Schroeder, Kind::Schroeder);
}

// Controls: without contact the solids change angular momentum too (see the top).
TEST_CASE("contact matrix control: backward_euler alone") {
  check_alone(Kind::BackwardEuler);
}
TEST_CASE("contact matrix control: zhao m = 1 alone") {
  check_alone(Kind::Zhao1);
}
TEST_CASE("contact matrix control: zhao m = 4 alone") {
  check_alone(Kind::Zhao4);
}
TEST_CASE("contact matrix control: schroeder alone") {
  check_alone(Kind::Schroeder);
}

}  // namespace clockwork
