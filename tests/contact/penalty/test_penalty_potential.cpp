// The penalty layer potential in every closest-feature region: the momentum-
// conservation structure of its gradient, and the layer events' impulse and energy
// being the term's. (Its derivatives by central differences: test_energy_derivatives.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "contact/penalty/penalty_potential.hpp"
#include "tests/support/stencils.hpp"

namespace clockwork {
namespace {

PenaltyLayer layer(PairType type) {
  PenaltyLayer p;
  p.type = type;
  p.stiffness = layer_stiffness(1e3, 2);
  p.thickness = layer_thickness(0.5, 2);
  return p;
}

void check_momentum_structure(const PenaltyLayer& p, const StencilPositions<4>& x) {
  // Σ_i ∇_i V = 0 and Σ_i x_i × ∇_i V = 0: penalty forces conserve momenta.
  const StencilVector<4> g = p.gradient(x);
  Vec3 f = Vec3::Zero(), torque = Vec3::Zero();
  for (int i = 0; i < 4; ++i) {
    f += g.segment<3>(3 * i);
    torque += Vec3(x.col(i)).cross(Vec3(g.segment<3>(3 * i)));
  }
  CHECK(f.norm() <= 1e-12 * g.norm());
  CHECK(torque.norm() <= 1e-12 * g.norm() * x.norm());
}

TEST_CASE("layer thickness and stiffness follow eta1 l^-1/4 and r1 l^3") {
  CHECK(layer_thickness(0.01, 16) == doctest::Approx(0.005));
  CHECK(layer_stiffness(2.0, 3) == doctest::Approx(54.0));
}

void check_momenta(PairType type) {
  for (const test::PairState& state : test::pair_states()) {
    if (state.type != type) continue;
    const PenaltyLayer p = layer(type);
    CAPTURE(state.region);
    REQUIRE(pair_closest(p.type, state.x).distance < p.thickness);
    check_momentum_structure(p, state.x);
  }
}

TEST_CASE("vertex-triangle layer: momenta conserved in face, edge and vertex regions") {
  check_momenta(PairType::VertexTriangle);
}

TEST_CASE("edge-edge layer: momenta conserved with interior and clamped parameters") {
  check_momenta(PairType::EdgeEdge);
}

TEST_CASE("layer is zero beyond its thickness") {
  PenaltyLayer p = layer(PairType::EdgeEdge);
  StencilPositions<4> x;
  x << 0, 1, 0.5, 0.5,  //
      0, 0, -1, 1,      //
      0, 0, 1, 1;
  CHECK(p.value(x) == 0.0);
  CHECK(p.gradient(x).norm() == 0.0);
  CHECK(p.hessian(x).norm() == 0.0);
}

TEST_CASE("layer events' impulse and energy are the term's gradient and value") {
  // ContactSystem kicks with J w_i n, J = h r (η − d) (contact_layers.cpp): −h ∇_i V.
  const PenaltyLayer p = PenaltyLayer::of(PairType::VertexTriangle, 0.5, 1e3, 2);
  CHECK(p.stiffness == layer_stiffness(1e3, 2));
  CHECK(p.thickness == layer_thickness(0.5, 2));
  StencilPositions<4> x;
  x.col(0) = Vec3(0.15, 0.1, 0.2);
  x.col(1) = Vec3(0, 0, 0);
  x.col(2) = Vec3(0.4, 0.05, 0.02);
  x.col(3) = Vec3(0.1, 0.45, -0.03);
  const PairClosest c = pair_closest(p.type, x);
  REQUIRE(p.pushes(c.distance));
  const double h = 1e-3;
  const Vec3 n = c.y / c.distance;
  const StencilVector<4> g = p.gradient(x);
  for (int i = 0; i < 4; ++i) {
    const Vec3 kick = (p.impulse(c.distance, h) * c.w[i]) * n;
    CHECK((kick + h * g.segment<3>(3 * i)).norm() <= 1e-15 * g.norm());
  }
  CHECK(p.energy(c.distance) == p.value(x));
  CHECK(p.energy(p.thickness) == 0.0);
  CHECK(!p.pushes(p.thickness));
}

TEST_CASE("window impulse: the tick's kick inside the layer, the force's integral where the edge cuts the window") {
  const PenaltyLayer p = PenaltyLayer::of(PairType::VertexTriangle, 0.002, 40.0, 1);
  const double h = 6e-5, eta = p.thickness;
  // Wholly inside or outside: h r (η − d) or 0, whatever the speed.
  CHECK(p.window_impulse(0.5 * eta, -1.0, h) == p.impulse(0.5 * eta, h));
  CHECK(p.window_impulse(0.5 * eta, 0.0, h) == p.impulse(0.5 * eta, h));
  CHECK(p.window_impulse(2.0 * eta, -1.0, h) == 0.0);
  CHECK(p.window_impulse(eta, 0.0, h) == 0.0);
  // Cut by the edge (approaching and leaving, the tick inside and outside): against
  // the integral of r (η − d − ḋ s)₊ over s ∈ [−h/2, h/2] by a fine midpoint rule.
  for (const double ddot : {-1.0, -0.3, 0.4}) {
    for (const double off : {-0.45, -0.2, 0.0, 0.1, 0.3, 0.49}) {
      const double d = eta + off * std::abs(ddot) * h;
      double sum = 0.0;
      const int n = 200000;
      for (int i = 0; i < n; ++i) {
        const double s = -0.5 * h + (i + 0.5) * h / n;
        sum += p.stiffness * std::max(0.0, eta - d - ddot * s) * h / n;
      }
      CAPTURE(ddot);
      CAPTURE(off);
      CHECK(p.window_impulse(d, ddot, h) == doctest::Approx(sum).epsilon(1e-8));
    }
  }
}

// A point mass bouncing off a layer (1D, as an AVI: drift at constant velocity, a kick
// at each tick), h ω = 0.42 as a face-on cloth pair's stacked layers (sweep
// pair_explicit_explicit), over 200 phases of the ticks against the crossing: the
// kinetic energy after the bounce against before. Sampled at the tick the error is
// ±4.5 % (its sign is the phase); integrated over the window ±0.17 %.
TEST_CASE("window impulse: a bounce off a layer keeps its energy whatever the ticks' phase") {
  const PenaltyLayer p = PenaltyLayer::of(PairType::VertexTriangle, 0.002, 1.0, 1);
  const double m = 1e-4, h = 0.42 / std::sqrt(p.stiffness / m), eta = p.thickness;
  const auto bounce = [&](double phase, bool window) {
    double d = 2.0 * eta, v = -0.1, t = 0.0;  // d: distance, v = ḋ
    for (double tick = phase * h;; tick += h) {
      d += v * (tick - t);
      t = tick;
      const double J = window ? p.window_impulse(d, v, h) : (p.pushes(d) ? p.impulse(d, h) : 0.0);
      v += J / m;
      if (d > 2.0 * eta && v > 0.0) return v * v / (0.1 * 0.1) - 1.0;
    }
  };
  double sampled = 0.0, windowed = 0.0;
  for (int i = 0; i < 200; ++i) {
    sampled = std::max(sampled, std::abs(bounce(i / 200.0, false)));
    windowed = std::max(windowed, std::abs(bounce(i / 200.0, true)));
  }
  MESSAGE("largest energy error of a bounce: sampled " << sampled << ", windowed " << windowed);
  CHECK(sampled > 0.03);  // the error the window removes is there
  CHECK(windowed < 3e-3);
}

}  // namespace
}  // namespace clockwork
