// Finite-difference checks of the penalty layer potential in every closest-feature
// region, and the momentum-conservation structure of its gradient.
#include <doctest/doctest.h>

#include "contact/penalty_potential.hpp"
#include "tests/support/finite_difference.hpp"

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

TEST_CASE("vertex-triangle layer: FD checks in face, edge and vertex regions") {
  const PenaltyLayer p = layer(PairType::VertexTriangle);
  StencilPositions<4> base;
  base.col(1) = Vec3(0, 0, 0);
  base.col(2) = Vec3(0.4, 0.05, 0.02);
  base.col(3) = Vec3(0.1, 0.45, -0.03);
  const Vec3 vertices[] = {Vec3(0.15, 0.1, 0.2), Vec3(0.35, 0.3, 0.1), Vec3(-0.1, -0.12, 0.05)};
  const char* regions[] = {"face", "edge", "vertex"};
  for (int r = 0; r < 3; ++r) {
    CAPTURE(regions[r]);
    StencilPositions<4> x = base;
    x.col(0) = vertices[r];
    REQUIRE(pair_closest(p.type, x).distance < p.thickness);
    test::check_derivatives(p, x, 1e-5);
    check_momentum_structure(p, x);
  }
}

TEST_CASE("edge-edge layer: FD checks with interior and clamped parameters") {
  const PenaltyLayer p = layer(PairType::EdgeEdge);
  StencilPositions<4> x;
  SUBCASE("interior") {
    x << 0, 0.5, 0.25, 0.3,  //
        0, 0.05, -0.3, 0.3,  //
        0, 0.02, 0.15, 0.1;
  }
  SUBCASE("one parameter clamped") {
    x << 0, 0.5, 0.7, 0.75,  //
        0, 0.05, -0.3, 0.3,  //
        0, 0.02, 0.15, 0.1;
  }
  SUBCASE("both clamped") {
    x << 0, 0.5, 0.7, 1.0,  //
        0, 0.05, 0.15, 0.3,  //
        0, 0.02, 0.15, 0.1;
  }
  REQUIRE(pair_closest(p.type, x).distance < p.thickness);
  test::check_derivatives(p, x, 1e-5);
  check_momentum_structure(p, x);
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

}  // namespace
}  // namespace clockwork
