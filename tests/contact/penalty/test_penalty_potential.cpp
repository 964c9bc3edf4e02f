// The penalty layer potential in every closest-feature region: the momentum-
// conservation structure of its gradient, and the layer events' impulse and energy
// being the term's. (Its derivatives by central differences: test_energy_derivatives.)
#include <doctest/doctest.h>

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

}  // namespace
}  // namespace clockwork
