/// Static friction inside the solids' steps (SolveContact::add_friction, docs/backward-euler.md
/// "Friction"; issue 41): a block resting on a ground tilted 14° (gravity tilted, so the
/// ground stays the `ground` obstacle), μ = 0.5 > tan 14° = 0.25, must stay where it
/// settled. Re-anchored at every step, the lagged anchors let a point under a tangential
/// load T < μ F give ε h T / (μ F) a step: the block crept down the slope at up to
/// ε T / (μ F) = 5e-5 m/s (1e-4 m in the two seconds measured). Every quantity is
/// recomputed from the kernel's state.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "contact/contact_system.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

using namespace clockwork;

namespace {

constexpr double kTan = 0.25;

/// Backward Euler at h (m = 0) or Zhao with h_L = h and the bottom face at m.
World slope_scene(double h, int m, double friction) {
  const double g = 9.81, c = 1.0 / std::sqrt(1.0 + kTan * kTan);
  World w({.name = "slope", .end_time = 3.0, .frame_rate = 10, .gravity = {g * kTan * c, 0.0, -g * c}});
  SolidSpec b = test::block_spec("block", {-0.07, -0.06, 0.0025}, {3, 3, 2}, 0.05, {1e5, 0.3, 500},
                                 FemKind::Corotational);
  b.material.rayleigh_beta = 0.01;
  if (m == 0)
    b.integrator = BackwardEulerSpec{.h = h};
  else
    b.integrator = test::zhao_spec(h, m, test::vertices_in_box(b.mesh.vertices, {-1, -1, -1}, {1, 1, 0.03}));
  w.add_solid(std::move(b));
  w.add_obstacle(test::ground_spec({0, 0, 0}, 1.0));
  ContactSpec contact;
  contact.settings.thickness = 0.001;
  contact.settings.friction = friction;
  w.enable_contact(contact);
  return w;
}

struct Reading {
  double centre_x = 0.0, energy = 0.0;
};

Reading read(const Scene& s, double t, const Vec3& g) {
  const VertexState& st = s.kernel->state();
  const SolidSource& src = *s.bodies_of<SolidSource>()[0];
  Eigen::VectorXd x(3 * static_cast<Eigen::Index>(src.vertices().size()));
  Reading r;
  double mass = 0.0;
  for (std::size_t i = 0; i < src.vertices().size(); ++i) {
    const Index a = src.vertices()[i];
    const Vec3 xa = st.position_at(a, t);
    x.segment<3>(3 * static_cast<Eigen::Index>(i)) = xa;
    r.energy += 0.5 * st.mass(a) * st.velocity(a).squaredNorm() - st.mass(a) * g.dot(xa);
    r.centre_x += st.mass(a) * xa.x();
    mass += st.mass(a);
  }
  r.centre_x /= mass;
  r.energy += src.model().value(x);
  if (s.contact) r.energy += s.contact->potential_energy(st, t);
  return r;
}

struct Slope {
  double initial = 0.0, highest = 0.0;
  std::vector<double> centre_x;  ///< the mass centre's x every 10 ms from 0
};

Slope run_slope(double h, int m, double friction, double until) {
  Scene s = test::build(slope_scene(h, m, friction));
  const double g = 9.81, c = 1.0 / std::sqrt(1.0 + kTan * kTan);
  const Vec3 gravity(g * kTan * c, 0.0, -g * c);
  Slope out;
  const Reading first = read(s, 0.0, gravity);
  out.initial = out.highest = first.energy;
  out.centre_x.push_back(first.centre_x);
  for (int k = 1; k <= std::lround(100 * until); ++k) {
    const double t = k / 100.0;  // the steps' clock (engine/step_clock.hpp)
    s.kernel->run_until(std::nextafter(t, 0.0));
    const Reading r = read(s, t, gravity);
    out.highest = std::max(out.highest, r.energy);
    out.centre_x.push_back(r.centre_x);
  }
  return out;
}

}  // namespace

TEST_CASE("static friction: a block resting on a slope below its friction angle stays where it settled") {
  for (const int m : {0, 4}) {
    CAPTURE(m);
    const Slope held = run_slope(0.01, m, 0.5, 3.0);
    const double moved = held.centre_x[300] - held.centre_x[100];
    MESSAGE(fmt::format("{}: moved {:.3g} m between 1 s and 3 s; highest − initial energy {:.3g} J of {:.4g} J",
                        m == 0 ? "backward Euler 10 ms" : "Zhao h_L 10 ms, m = 4", moved,
                        held.highest - held.initial, held.initial));
    // Creeping at ε T / (μ F) it moved 1e-4 m; held, what is left is the anchors'
    // give, ε h per step at most once.
    CHECK(std::abs(moved) < 2e-6);
    CHECK(held.highest <= held.initial + 1e-3 * std::abs(held.initial));
  }
}

TEST_CASE("static friction: the same block on a frictionless slope slides down it") {
  const Slope slid = run_slope(0.01, 0, 0.0, 0.6);
  // Frictionless it accelerates at g sin θ: over 0.2 → 0.6 s at least half of
  // ½ a (0.6² − 0.2²) once it has landed (a few ms).
  const double a = 9.81 * kTan / std::sqrt(1.0 + kTan * kTan);
  CHECK(slid.centre_x[60] - slid.centre_x[20] > 0.5 * 0.5 * a * (0.36 - 0.04));
}
