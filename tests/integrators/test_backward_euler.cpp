// Synchronous implicit Euler on a TetFemModel (issue 6): the step against a direct
// solve of Zhao eq. (5), the optimality condition Zhao eq. (1)–(3) after full Newton,
// dissipation and momentum over many steps, free fall, prescribed vertices, and the
// global-regularisation definiteness fix on an indefinite Hessian.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <Eigen/SparseLU>
#include <random>

#include "integrators/backward_euler.hpp"
#include "tests/support/tet_blocks.hpp"

using namespace clockwork;
using Vector = Eigen::VectorXd;
using Sparse = TetFemModel::Sparse;

namespace {

TetFemModel block_model(FemKind kind, double young, int cells = 2) {
  const test::TetBlock b = test::tet_block(cells, cells, cells, 1.0 / cells);
  std::vector<TetMaterial> materials;
  for (std::size_t e = 0; e < b.tets.size(); ++e)  // per-tet materials
    materials.push_back({young * (1.0 + 0.5 * (e % 3)), 0.3, 1000.0 + 200.0 * (e % 2)});
  return TetFemModel(b.vertices, b.tets, materials, kind);
}

Vector mass_vector(const TetFemModel& model) {
  Vector m(3 * static_cast<Eigen::Index>(model.vertex_count()));
  for (std::size_t a = 0; a < model.vertex_count(); ++a)
    m.segment<3>(3 * a).setConstant(model.lumped_mass()[a]);
  return m;
}

Vector random_vector(Eigen::Index size, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Vector r(size);
  for (Eigen::Index i = 0; i < size; ++i) r[i] = u(rng);
  return r;
}

/// Positions rigidly rotated by R about the centre, then perturbed.
Vector rotated(const TetFemModel& model, const Mat3& R, double noise, std::uint64_t seed) {
  Vector x = model.rest_positions();
  const Vec3 c(0.5, 0.5, 0.5);
  for (Eigen::Index a = 0; a < x.size() / 3; ++a)
    x.segment<3>(3 * a) = c + R * (Vec3(x.segment<3>(3 * a)) - c);
  return x + random_vector(x.size(), noise, seed);
}

/// Velocities of a spin ω about the centre plus a drift and noise.
Vector spinning(const Vector& x, const Vec3& omega, const Vec3& drift, double noise,
                std::uint64_t seed) {
  Vector v = random_vector(x.size(), noise, seed);
  for (Eigen::Index a = 0; a < x.size() / 3; ++a)
    v.segment<3>(3 * a) += drift + omega.cross(Vec3(x.segment<3>(3 * a)) - Vec3(0.5, 0.5, 0.5));
  return v;
}

Sparse diagonal(const Vector& d) {
  Sparse D(d.size(), d.size());
  D.setIdentity();
  D.diagonal() = d;
  return D;
}

}  // namespace

TEST_CASE("linear FEM: one step equals the direct solve of Zhao eq. (5), every linear solver") {
  const TetFemModel model = block_model(FemKind::Linear, 2e5);
  const auto n = static_cast<Eigen::Index>(model.vertex_count());
  const double h = 0.01, alpha = 0.3, beta = 0.002;
  const Vector x0 = rotated(model, Mat3::Identity(), 0.03, 1);
  const Vector v0 = random_vector(3 * n, 0.5, 2);
  const Vector f_ext = random_vector(3 * n, 50.0, 3);
  std::vector<bool> fixed(static_cast<std::size_t>(n), false);
  fixed[0] = fixed[4] = true;  // prescribed, moving with their velocity

  // Reference: (M + hD + h²K) Δv = h (f_ext − f_int(x_n) − D v_n − h K v_n), Δv = 0 on
  // the prescribed vertices, free rows solved with SparseLU.
  const Vector m = mass_vector(model);
  Sparse K;
  model.stiffness(x0, K);
  Vector f_int;
  model.internal_force(x0, f_int);
  const Sparse M = diagonal(m);
  const Sparse D = alpha * M + beta * K;
  const Sparse A = M + h * D + h * h * K;
  const Vector rhs = h * (f_ext - f_int - D * v0 - h * (K * v0));
  std::vector<Eigen::Triplet<double>> select;
  for (Eigen::Index i = 0; i < 3 * n; ++i)
    if (!fixed[static_cast<std::size_t>(i / 3)]) select.emplace_back(static_cast<int>(select.size()), i, 1.0);
  Sparse P(static_cast<Eigen::Index>(select.size()), 3 * n);
  P.setFromTriplets(select.begin(), select.end());
  const Sparse A_free = P * A * Sparse(P.transpose());
  Eigen::SparseLU<Sparse> lu(A_free);
  REQUIRE(lu.info() == Eigen::Success);
  const Vector v_ref = v0 + Sparse(P.transpose()) * lu.solve(Vector(P * rhs));

  for (LinearSolverKind kind : {LinearSolverKind::Cholesky, LinearSolverKind::CG,
                                LinearSolverKind::PcgJacobi, LinearSolverKind::PcgIncompleteCholesky})
    for (int max_newton : {1, 50}) {
      BackwardEulerSettings s;
      s.linear = kind;
      s.fix = DefinitenessFix::None;
      s.max_newton = max_newton;
      s.rayleigh_alpha = alpha;
      s.rayleigh_beta = beta;
      BackwardEuler be(model, s);
      Vector x = x0, v = v0;
      const BackwardEulerReport r = be.step(h, x, v, f_ext, fixed);
      const double err = (v - v_ref).norm() / v_ref.norm();
      const double err_x = (x - (x0 + h * v_ref)).norm() / (h * v_ref.norm());
      CAPTURE(static_cast<int>(kind));
      CAPTURE(max_newton);
      CAPTURE(err);
      CAPTURE(r.linear_iterations);
      CHECK(r.newton_iterations == 1);
      CHECK(r.converged);
      CHECK(err_x < 1e-10);
      if (kind == LinearSolverKind::Cholesky) {
        CHECK(err < 1e-12);
        CHECK(r.linear_iterations == 0);
      } else {
        CHECK(err < 1e-10);  // CG to a relative residual of 1e-12
        CHECK(r.linear_iterations > 0);
      }
    }
}
