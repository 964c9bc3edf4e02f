// Tet FEM elements and the assembled model (issue 6): the warped
// force of [MG04], rest and rigid-motion invariance, the small-strain limit, PSD
// projection, lumped mass, and thread-count independence. (The derivatives by central
// differences: test_energy_derivatives.cpp.)
#include <doctest/doctest.h>

#include <tbb/global_control.h>
#include <Eigen/Geometry>

#include "engine/psd.hpp"
#include "integrators/fem/tet_fem.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/stencils.hpp"
#include "tests/support/tet_blocks.hpp"

using namespace clockwork;
using test::perturbed;
using test::random_rotation;
using test::rest_tet;

namespace {

constexpr double kYoung = 1e5, kPoisson = 0.3;

StencilPositions<4> transformed(const StencilPositions<4>& x, const Mat3& A, const Vec3& t) {
  return (A * x).colwise() + t;
}

Mat3 deformation_gradient(const CorotationalTet& c, const StencilPositions<4>& x) {
  Mat3 Ds;
  Ds << x.col(1) - x.col(0), x.col(2) - x.col(0), x.col(3) - x.col(0);
  return Ds * c.Dm_inv;
}

}  // namespace

TEST_CASE("lame_3d: mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu))") {
  const auto [mu, lambda] = lame_3d(1.0, 0.25);
  CHECK(mu == doctest::Approx(0.4).epsilon(1e-15));
  CHECK(lambda == doctest::Approx(0.4).epsilon(1e-15));
  CHECK(signed_volume(rest_tet(1.0)) > 0.0);
}

TEST_CASE("corotational: an inverted element has a rotation and a finite energy (signed SVD)") {
  const StencilPositions<4> X = rest_tet(1.0);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  StencilPositions<4> x = X;
  // Push vertex 3 through the opposite face: det F < 0.
  x.col(3) =
      X.col(0) + 0.1 * (X.col(1) - X.col(0)) + 0.2 * (X.col(2) - X.col(0)) + Vec3(0.05, 0.1, -0.4);
  const Mat3 F = deformation_gradient(co, x);
  REQUIRE(F.determinant() < 0.0);
  const Mat3 R = polar_rotation(F);
  CHECK(R.determinant() == doctest::Approx(1.0).epsilon(1e-14));
  CHECK((R.transpose() * R - Mat3::Identity()).norm() < 1e-14);
  const Mat3 S = R.transpose() * F;
  CHECK((S - S.transpose()).norm() < 1e-13 * S.norm());
  CHECK(std::isfinite(co.value(x)));
}

TEST_CASE("corotational gradient equals the warped force R K (R^T x - X) of [MG04]") {
  const StencilPositions<4> X = rest_tet(1.3);
  const LinearTet lin = LinearTet::from_rest(X, kYoung, kPoisson);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const StencilPositions<4> x =
        transformed(perturbed(X, 0.2, seed), random_rotation(seed), Vec3(0.5, 2.0, -1.0));
    const Mat3 R = polar_rotation(deformation_gradient(co, x));
    const StencilVector<4> local = lin.gradient(R.transpose() * x);
    StencilVector<4> warped;
    for (int a = 0; a < 4; ++a) warped.segment<3>(3 * a) = R * local.segment<3>(3 * a);
    const double err = test::relative_error(co.gradient(x), warped, 1e-300);
    CAPTURE(seed);
    CAPTURE(err);
    CHECK(err < 1e-12);
  }
}

TEST_CASE("corotational: energy and force vanish at rest and under any rigid motion") {
  const StencilPositions<4> X = rest_tet(0.9);
  const LinearTet lin = LinearTet::from_rest(X, kYoung, kPoisson);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  // Scales: the force of a 1 % strain, and its energy.
  const double force_scale = lin.K.norm() * 0.01 * 0.9, energy_scale = force_scale * 0.01 * 0.9;
  CHECK(std::abs(co.value(X)) <= 1e-20 * energy_scale);
  CHECK(co.gradient(X).norm() <= 1e-13 * force_scale);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const StencilPositions<4> x = transformed(X, random_rotation(seed), Vec3(10.0, -4.0, 7.0));
    CAPTURE(seed);
    CHECK(std::abs(co.value(x)) <= 1e-20 * energy_scale);
    CHECK(co.gradient(x).norm() <= 1e-12 * force_scale);
    // Sanity: linear FEM is not rotation invariant (the reason for corotation).
    CHECK(lin.value(x) > 100.0 * energy_scale);
  }
}

TEST_CASE(
    "corotational Hessian tends to the linear K at rest, to first order in the displacement") {
  const StencilPositions<4> X = rest_tet(1.0);
  const LinearTet lin = LinearTet::from_rest(X, kYoung, kPoisson);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  const auto error = [&](double d) {
    return (co.hessian(perturbed(X, d, 7)) - lin.K).norm() / lin.K.norm();
  };
  const double e0 = (co.hessian(X) - lin.K).norm() / lin.K.norm();
  const double e3 = error(1e-3), e4 = error(1e-4), e5 = error(1e-5);
  CAPTURE(e0);
  CAPTURE(e3);
  CAPTURE(e4);
  CAPTURE(e5);
  CHECK(e0 < 1e-13);
  CHECK(e3 < 10.0 * 1e-3);
  // O(d): a tenfold smaller displacement gives a tenfold smaller difference.
  CHECK(e4 / e3 == doctest::Approx(0.1).epsilon(0.05));
  CHECK(e5 / e4 == doctest::Approx(0.1).epsilon(0.05));
}

TEST_CASE("PSD projection clamps the negative eigenvalues of a compressed element") {
  const StencilPositions<4> X = rest_tet(1.0);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  const StencilPositions<4> x = transformed(X, 0.3 * Mat3::Identity(), Vec3::Zero());
  const StencilMatrix<4> H = co.hessian(x), P = co.hessian(x, true);
  const Eigen::SelfAdjointEigenSolver<StencilMatrix<4>> eH(H), eP(P);
  CAPTURE(eH.eigenvalues().transpose());
  CHECK(eH.eigenvalues()[0] < -1e-3 * H.norm());  // indefinite: the projection matters
  CHECK(eP.eigenvalues()[0] >= -1e-12 * H.norm());
  // Non-negative eigenvalues and eigenvectors are kept: P − H has the negative part only.
  const Eigen::VectorXd neg = eH.eigenvalues().cwiseMin(0.0);
  const StencilMatrix<4> expected =
      H - eH.eigenvectors() * neg.asDiagonal() * eH.eigenvectors().transpose();
  CHECK((P - expected).norm() <= 1e-12 * H.norm());
  // At rest the Hessian is PSD already: unchanged.
  CHECK((co.hessian(X, true) - co.hessian(X)).norm() <= 1e-12 * H.norm());
}

TEST_CASE("corotational projection on 9 coordinates equals the 12 x 12 eigenvalue clamp") {
  // Stretched, compressed, sheared, rotated and inverted elements: the projected Hessian
  // (PSD tangents skipped, the rest clamped on the 9 coordinates that carry dF) is the
  // 12 × 12 eigenvalue clamp project_to_psd of the exact Hessian, to rounding.
  const StencilPositions<4> X = rest_tet(1.0);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  int indefinite = 0;
  for (int k = 0; k < 60; ++k) {
    std::mt19937_64 rng(100 + k);
    std::uniform_real_distribution<double> u(-0.6, 0.6);
    Mat3 A = Mat3::Identity();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) A(i, j) += u(rng);
    if (k % 5 == 0) A.col(0) *= -1.0;  // inverted
    const StencilPositions<4> x = transformed(X, random_rotation(k) * A, Vec3(0.1, 0.2, -0.3));
    const StencilMatrix<4> H = co.hessian(x);
    StencilMatrix<4> expected = H;
    project_to_psd(expected);
    const StencilMatrix<4> P = co.hessian(x, true);
    const double lowest = Eigen::SelfAdjointEigenSolver<StencilMatrix<4>>(H).eigenvalues()[0];
    if (lowest < -1e-8 * H.norm()) ++indefinite;
    CAPTURE(k);
    CAPTURE(lowest);
    CHECK((P - expected).norm() <= 1e-12 * H.norm());
    CHECK((P - P.transpose()).norm() <= 1e-14 * H.norm());
    // hessian_product is H u without forming H.
    const StencilVector<4> v = perturbed(X, 1.0, 200 + k).reshaped();
    CHECK((co.hessian_product(x, v) - H * v).norm() <= 1e-12 * H.norm() * v.norm());
  }
  CHECK(indefinite >= 20);  // both branches were exercised
  CHECK(indefinite <= 55);
}

TEST_CASE("TetFemModel::stiffness_product is K(x) u with the unprojected K") {
  const test::TetBlock b = test::tet_block(2, 2, 2, 0.5);
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    const TetFemModel model(b.vertices, b.tets,
                            std::vector<TetMaterial>(b.tets.size(), {kYoung, kPoisson, 1000.0}), kind);
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> r(-0.15, 0.15);
    Eigen::VectorXd x = model.rest_positions(), u(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      x[i] = 0.7 * x[i] + r(rng);  // compressed: indefinite corotational blocks
      u[i] = r(rng);
    }
    TetFemModel::Sparse K;
    model.hessian(x, K);
    Eigen::VectorXd Ku;
    model.stiffness_product(x, u, Ku);
    CAPTURE(int(kind));
    CHECK((Ku - K * u).norm() <= 1e-12 * (K * u).norm());
  }
}

TEST_CASE("TetFemModel: lumped mass and per-tet materials") {
  const test::TetBlock block = test::tet_block(1, 1, 1, 0.5);  // 8 vertices, 6 tets
  REQUIRE(block.tets.size() == 6);
  std::vector<TetMaterial> materials;
  for (std::size_t e = 0; e < block.tets.size(); ++e)
    materials.push_back({kYoung * (1.0 + e), 0.2 + 0.03 * e, 1000.0 + 100.0 * e});
  double expected_mass = 0.0, volume = 0.0;
  for (std::size_t e = 0; e < block.tets.size(); ++e) {
    StencilPositions<4> x;
    for (int a = 0; a < 4; ++a) x.col(a) = block.vertices[block.tets[e][a]];
    expected_mass += materials[e].density * signed_volume(x);
    volume += signed_volume(x);
  }
  CHECK(volume == doctest::Approx(0.125).epsilon(1e-14));
  const Eigen::VectorXd X = test::stacked(block.vertices);
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    const TetFemModel model(block.vertices, block.tets, materials, kind);
    double mass = 0.0;
    for (double m : model.lumped_mass()) mass += m;
    CHECK(mass == doctest::Approx(expected_mass).epsilon(1e-14));
    // Energy is the sum of the element energies with their own materials.
    const StencilPositions<8> x = perturbed(StencilPositions<8>(X.reshaped(3, 8)), 0.06, 3);
    const Eigen::VectorXd xf = x.reshaped();
    double sum = 0.0;
    for (std::size_t e = 0; e < block.tets.size(); ++e) {
      StencilPositions<4> xe, Xe;
      for (int a = 0; a < 4; ++a) {
        xe.col(a) = xf.segment<3>(3 * block.tets[e][a]);
        Xe.col(a) = X.segment<3>(3 * block.tets[e][a]);
      }
      const auto& m = materials[e];
      sum += kind == FemKind::Linear ? LinearTet::from_rest(Xe, m.young, m.poisson).value(xe)
                                     : CorotationalTet::from_rest(Xe, m.young, m.poisson).value(xe);
    }
    CHECK(model.value(xf) == doctest::Approx(sum).epsilon(1e-14));
  }
}

TEST_CASE("TetFemModel: fixed stiffness pattern, invariances, same result on 1 or 2 threads") {
  const test::TetBlock block = test::tet_block(4, 4, 4, 0.25);  // 384 tets: several chunks
  const std::vector<TetMaterial> materials(block.tets.size(), {kYoung, kPoisson, 1000.0});
  const TetFemModel model(block.vertices, block.tets, materials, FemKind::Corotational);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-0.03, 0.03);
  Eigen::VectorXd x = model.rest_positions();
  const Mat3 R = random_rotation(2);
  for (Eigen::Index a = 0; a < x.size() / 3; ++a)
    x.segment<3>(3 * a) = R * x.segment<3>(3 * a) + Vec3(u(rng), u(rng), u(rng));
  Eigen::VectorXd f1, f2;
  TetFemModel::Sparse K1, K2;
  double e1 = 0.0, e2 = 0.0;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    e1 = model.value(x);
    model.gradient(x, f1);
    model.hessian(x, K1, true);
  }
  {
    tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
    e2 = model.value(x);
    model.gradient(x, f2);
    model.hessian(x, K2, true);
  }
  CHECK(e1 == e2);
  CHECK(f1 == f2);
  CHECK(K1.nonZeros() == K2.nonZeros());
  CHECK(Eigen::VectorXd(K1.coeffs()) == Eigen::VectorXd(K2.coeffs()));
  // Pattern is fixed: a call at another state reuses `out` (same arrays, same count).
  const double* values = K1.valuePtr();
  model.hessian(model.rest_positions(), K1, false);
  CHECK(K1.valuePtr() == values);
  CHECK(K1.nonZeros() == K2.nonZeros());
  // Translation and rotation invariance: Σ f = 0 and Σ x × f = 0.
  Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
  for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
    force += f1.segment<3>(3 * a);
    torque += Vec3(x.segment<3>(3 * a)).cross(Vec3(f1.segment<3>(3 * a)));
  }
  CHECK(force.norm() <= 1e-12 * f1.norm());
  CHECK(torque.norm() <= 1e-12 * f1.norm());
}
