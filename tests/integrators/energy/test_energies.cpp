/// Every energy term: rest states, invariances, fused evaluations and the material
/// stiffness. (Their derivatives: test_energy_derivatives.cpp.)
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <numbers>

#include "integrators/energy/gravity_energy.hpp"
#include "integrators/energy/hinge_energy.hpp"
#include "integrators/energy/membrane_energy.hpp"
#include "integrators/energy/spring_energy.hpp"
#include "integrators/energy/wind_force.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/stencils.hpp"

using namespace clockwork;
using test::perturbed;
using test::rest_hinge;
using test::rest_triangle;

namespace {

/// The fused evaluation the implicit tick uses gives value() and gradient() exactly.
template <typename Term, int N>
void check_fused(const Term& term, const StencilPositions<N>& x) {
  StencilVector<N> g;
  const double v = term.value_and_gradient(x, g);
  CHECK(v == term.value(x));
  CHECK(g == term.gradient(x));
}

/// Σ_a g_a = 0 and Σ_a x_a × g_a = 0: the term conserves linear and angular momentum.
template <int N>
void check_invariances(const StencilPositions<N>& x, const StencilVector<N>& g) {
  Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
  double scale = 0;
  for (int a = 0; a < N; ++a) {
    force += g.template segment<3>(3 * a);
    torque += x.col(a).cross(g.template segment<3>(3 * a));
    scale += g.template segment<3>(3 * a).norm() * std::max(1.0, x.col(a).norm());
  }
  CHECK(force.norm() <= 1e-12 * scale + 1e-300);
  CHECK(torque.norm() <= 1e-12 * scale + 1e-300);
}

template <int N>
StencilPositions<N> rigidly_moved(const StencilPositions<N>& x, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n;
  const Eigen::Quaterniond q = Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized();
  const Vec3 t(n(rng), n(rng), n(rng));
  StencilPositions<N> y;
  for (int a = 0; a < N; ++a) y.col(a) = q * x.col(a) + t;
  return y;
}

/// The material stiffness K_mat of damping: PSD, zero on rigid velocities ω × x + t
/// at x, and equal to the full Hessian where the stress vanishes (at rest).
template <typename Term, int N>
void check_material_stiffness(const Term& term, const StencilPositions<N>& x,
                              const StencilPositions<N>& rest, std::uint64_t seed) {
  const StencilMatrix<N> K = term.material_stiffness(x);
  const double scale = std::max(K.norm(), 1e-300);
  CHECK((K - K.transpose()).norm() <= 1e-12 * scale);
  Eigen::SelfAdjointEigenSolver<StencilMatrix<N>> eig(K);
  CHECK(eig.eigenvalues().minCoeff() >= -1e-10 * scale);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n;
  const Vec3 omega(n(rng), n(rng), n(rng)), t(n(rng), n(rng), n(rng));
  StencilVector<N> rigid;
  double size = 0;
  for (int a = 0; a < N; ++a) {
    rigid.template segment<3>(3 * a) = omega.cross(x.col(a)) + t;
    size = std::max(size, x.col(a).norm());
  }
  CHECK((K * rigid).norm() <= 1e-10 * scale * (omega.norm() * size + t.norm()));
  const StencilMatrix<N> at_rest = term.material_stiffness(rest) - term.hessian(rest);
  CHECK(at_rest.norm() <= 1e-9 * std::max(term.hessian(rest).norm(), 1e-300));
}

}  // namespace

TEST_CASE("spring: rest, invariances") {
  for (double beta : {0.0, 50.0}) {
    SpringEnergy s{3.0, beta, 1.2};
    StencilPositions<2> rest;
    rest << 0, 1.2, 0, 0, 0, 0;
    CHECK(s.value(rest) == doctest::Approx(0.0));
    CHECK(s.gradient(rest).norm() < 1e-14);
    for (double scale : {1e-3, 0.3, 1.0}) {
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        const auto x = perturbed(rest, scale, seed);
        CAPTURE(beta);
        CAPTURE(scale);
        check_invariances(x, s.gradient(x));
        CHECK(s.value(rigidly_moved(x, seed)) == doctest::Approx(s.value(x)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("membrane: rest, fused evaluation, invariances when stretched, compressed and sheared") {
  // (check_fused: value_and_gradient, which the implicit tick uses, is value and gradient.)
  const auto [mu, lambda] = MembraneStVK::lame_plane_stress(1000.0, 0.3);
  for (double size : {1e-3, 1.0, 1e3}) {
    const auto rest = rest_triangle(size);
    const MembraneStVK m = MembraneStVK::from_rest(rest, mu, lambda);
    CHECK(m.area > 0);
    CHECK(m.value(rest) <= 1e-20 * mu * size * size);
    CHECK(m.gradient(rest).norm() <= 1e-10 * mu * size);
    Eigen::SelfAdjointEigenSolver<StencilMatrix<3>> rest_eig(m.hessian(rest));
    CHECK(rest_eig.eigenvalues().minCoeff() >= -1e-9 * rest_eig.eigenvalues().maxCoeff());
    for (double strain : {0.01, 0.3}) {
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const auto x = perturbed(rest, strain * size, seed);
        CAPTURE(size);
        CAPTURE(strain);
        check_fused(m, x);
        check_invariances(x, m.gradient(x));
        CHECK(m.value(rigidly_moved(x, seed)) == doctest::Approx(m.value(x)).epsilon(1e-9));
        check_material_stiffness(m, x, rest, seed);
      }
    }
  }
  CHECK(MembraneStVK::is_degenerate(
      (StencilPositions<3>() << 0, 1, 2, 0, 0, 0, 0, 0, 0).finished()));
  CHECK(!MembraneStVK::is_degenerate(rest_triangle(1.0)));
}

TEST_CASE("membrane: uniaxial stretch gives the analytic St. Venant–Kirchhoff energy") {
  const double mu = 10.0, lambda = 5.0;
  StencilPositions<3> rest;
  rest << 0, 1, 0, 0, 0, 1, 0, 0, 0;
  const MembraneStVK m = MembraneStVK::from_rest(rest, mu, lambda);
  StencilPositions<3> x = rest;
  x(0, 1) = 1.1;  // stretch along x by 10%
  const double E11 = 0.5 * (1.1 * 1.1 - 1.0);
  CHECK(m.value(x) == doctest::Approx(0.5 * (mu * E11 * E11 + 0.5 * lambda * E11 * E11)));
}

TEST_CASE("hinge: angle sign convention, rest states, invariances") {
  // Lifting an opposite vertex along the common normal makes θ negative.
  auto flat = rest_hinge(1.0, 0.0);
  CHECK(HingeBending::angle(flat) == doctest::Approx(0.0));
  auto lifted = flat;
  lifted(2, 2) = 0.1;
  CHECK(HingeBending::angle(lifted) < 0);
  CHECK(HingeBending::angle(rest_hinge(1.0, 0.5)) == doctest::Approx(-0.5));
  for (double size : {1e-3, 1.0, 1e3}) {
    for (double fold : {0.0, 0.7, -1.2, 2.9, -3.0}) {
      const auto rest = rest_hinge(size, fold);
      const HingeBending h = HingeBending::from_rest(rest, 0.01);
      CHECK(h.value(rest) < 1e-24);
      Eigen::SelfAdjointEigenSolver<StencilMatrix<4>> rest_eig(h.hessian(rest));
      CHECK(rest_eig.eigenvalues().minCoeff() >= -1e-9 * rest_eig.eigenvalues().maxCoeff());
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        const auto x = perturbed(rest, 0.1 * size, seed);
        CAPTURE(size);
        CAPTURE(fold);
        check_fused(h, x);
        // The one-pass angle and gradient that gradient() and the ticks use are the
        // separate ones, bit for bit.
        StencilVector<4> angle_grad;
        CHECK(HingeBending::angle_and_gradient(x, angle_grad) == HingeBending::angle(x));
        CHECK(angle_grad == HingeBending::angle_gradient(x));
        check_invariances(x, h.gradient(x));
        CHECK(h.value(rigidly_moved(x, seed)) == doctest::Approx(h.value(x)).epsilon(1e-8));
        check_material_stiffness(h, x, rest, seed);
      }
    }
  }
  // A hinge at rest near flat bent to near ±π: energy continuous through ±π.
  const HingeBending h = HingeBending::from_rest(rest_hinge(1.0, 3.1), 1.0);
  CHECK(h.value(rest_hinge(1.0, -3.1)) == doctest::Approx(h.weight * std::pow(2 * std::numbers::pi - 6.2, 2)));
}

TEST_CASE("gravity: value, gradient, zero Hessian") {
  const GravityEnergy g{2.0, Vec3(0, 0, -9.81)};
  StencilPositions<1> x;
  x << 1, 2, 3;
  CHECK(g.value(x) == doctest::Approx(2.0 * 9.81 * 3));
  CHECK(g.gradient(x) == Vec3(0, 0, 2.0 * 9.81));
  CHECK(g.hessian(x).isZero());
}

TEST_CASE("wind: force, Jacobians, and no force along the surface") {
  WindForce w;
  w.wind_velocity = Vec3(1, -2, 3);
  w.drag = 0.7;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto x = perturbed(rest_triangle(1.0), 0.2, seed);
    const auto v = perturbed(StencilPositions<3>(StencilPositions<3>::Zero()), 1.0, seed + 100);
    test::check_force_jacobians(w, x, v);
  }
  StencilPositions<3> x = rest_triangle(1.0);
  x.row(2).setZero();  // in the xy plane
  const StencilPositions<3> v = StencilPositions<3>::Zero();
  const auto f = w.force(x, v);
  const double area = 0.5 * (x.col(1) - x.col(0)).cross(x.col(2) - x.col(0)).norm();
  CHECK(f.segment<3>(0).isApprox(Vec3(0, 0, 0.7 * 3 * area / 3)));
  w.wind_velocity = Vec3(1, -2, 0);
  CHECK(w.force(x, v).norm() == 0.0);
}
