// Synchronous implicit Euler on a TetFemModel (issue 6): one step against a direct
// solve of Zhao eq. (5), the optimality condition Zhao eq. (1)–(3) after full Newton,
// eq. (5) as printed, the factor kept for linear FEM, the global-regularisation
// definiteness fix on an indefinite Hessian, and bad arguments. Over many steps:
// test_backward_euler_motion.cpp; damping: test_backward_euler_damping.cpp; contact
// planes: test_backward_euler_contact.cpp.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <Eigen/SparseLU>
#include <stdexcept>

#include "integrators/implicit/backward_euler.hpp"
#include "tests/support/backward_euler_blocks.hpp"

using namespace clockwork;
using namespace clockwork::test;

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
  model.hessian(x0, K);
  Vector f_int;
  model.gradient(x0, f_int);
  const Sparse M = diagonal(m);
  const Sparse D = alpha * M + beta * K;
  const Sparse A = M + h * D + h * h * K;
  const Vector rhs = h * (f_ext - f_int - D * v0 - h * (K * v0));
  std::vector<Eigen::Triplet<double>> select;
  for (Eigen::Index i = 0; i < 3 * n; ++i)
    if (!fixed[static_cast<std::size_t>(i / 3)])
      select.emplace_back(static_cast<int>(select.size()), i, 1.0);
  Sparse P(static_cast<Eigen::Index>(select.size()), 3 * n);
  P.setFromTriplets(select.begin(), select.end());
  const Sparse A_free = P * A * Sparse(P.transpose());
  Eigen::SparseLU<Sparse> lu(A_free);
  REQUIRE(lu.info() == Eigen::Success);
  const Vector v_ref = v0 + Sparse(P.transpose()) * lu.solve(Vector(P * rhs));

  for (LinearSolverKind kind :
       {LinearSolverKind::Cholesky, LinearSolverKind::CG, LinearSolverKind::PcgJacobi,
        LinearSolverKind::PcgIncompleteCholesky})
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
      if (kind == LinearSolverKind::Cholesky) {
        CHECK(err_x < 1e-10);
        CHECK(err < 1e-12);
        CHECK(r.linear_iterations == 0);
      } else if (max_newton == 1) {
        CHECK(err_x < 1e-10);
        CHECK(err < 1e-10);  // the linearised step: CG to cg_tolerance (1e-12)
        CHECK(r.linear_iterations > 0);
      } else {
        // Newton asks CG only for what its convergence test (tolerance 1e-9) needs.
        CHECK(err_x < 1e-9);
        CHECK(err < 1e-9);
        CHECK(r.linear_iterations > 0);
      }
    }
}

TEST_CASE("corotational, full Newton, large rotation: the optimality condition Zhao eq. (1)-(3)") {
  const TetFemModel model = block_model(FemKind::Corotational, 2e5);
  const auto n = static_cast<Eigen::Index>(model.vertex_count());
  const double h = 0.02, alpha = 0.2, beta = 0.003;
  const Mat3 R = Eigen::AngleAxisd(1.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const Vector x0 = rotated(model, R, 0.05, 4);
  const Vector v0 = spinning(x0, Vec3(0.0, 3.0, 5.0), Vec3(1.0, 0.0, 0.0), 0.5, 5);
  const Vector m = mass_vector(model);
  Vector f_ext = Vector::Zero(3 * n);
  for (Eigen::Index a = 0; a < n; ++a) f_ext[3 * a + 2] = -9.81 * m[3 * a];
  BackwardEulerSettings s;
  s.tolerance = 1e-10;
  s.rayleigh_alpha = alpha;
  s.rayleigh_beta = beta;
  BackwardEuler be(model, s);
  Vector x = x0, v = v0;
  const BackwardEulerReport r = be.step(h, x, v, f_ext, {});
  CAPTURE(r.newton_iterations);
  CAPTURE(r.gradient_norm);
  CAPTURE(r.threshold);
  REQUIRE(r.converged);
  CHECK(r.newton_iterations > 1);  // nonlinear: more than the linearised step
  // M (v_{n+1} − v_n) = h (f_ext − f_int(x_{n+1}) − D v_{n+1}), D = α M + β K⁺(x_n).
  Sparse K0;
  model.hessian(x0, K0, true);
  Vector f_int;
  model.gradient(x, f_int);
  const Vector residual =
      m.cwiseProduct(v - v0) - h * (f_ext - f_int - alpha * m.cwiseProduct(v) - beta * (K0 * v));
  const double inertia = m.cwiseProduct(v - v0).norm();
  CAPTURE(residual.norm());
  CAPTURE(inertia);
  CHECK((x - (x0 + h * v)).norm() <= 1e-14 * x.norm());
  // ∇g = h × residual: the residual is within the solver's tolerance...
  CHECK(residual.norm() <= r.threshold / h);
  // ... which is a tiny fraction of the step's momentum change.
  CHECK(residual.norm() <= 1e-9 * inertia);
}

TEST_CASE("max_newton = 1 with the exact tangent is Zhao eq. (5) as printed") {
  // (M + hD + h²K) Δv = h (f_ext − f_int − D v_n − h K v_n), K = K(x_n) unprojected and
  // D = αM + βK(x_n): fix None with the damping at the step's end. The default (clamped
  // K, projected damping) solves another system here, as documented.
  Squeezed b;
  const auto n = static_cast<Eigen::Index>(b.model.vertex_count());
  const double h = 0.01, alpha = 0.3, beta = 0.004;
  Sparse K;
  b.model.hessian(b.x0, K);
  Vector f_int;
  b.model.gradient(b.x0, f_int);
  const Sparse M = diagonal(b.m);
  const Sparse D = alpha * M + beta * K;
  const Sparse A = M + h * D + h * h * K;
  const Vector rhs = h * (b.f_ext - f_int - D * b.v0 - h * (K * b.v0));
  std::vector<Eigen::Triplet<double>> select;
  for (Eigen::Index i = 0; i < 3 * n; ++i)
    if (!b.fixed[static_cast<std::size_t>(i / 3)])
      select.emplace_back(static_cast<int>(select.size()), i, 1.0);
  Sparse P(static_cast<Eigen::Index>(select.size()), 3 * n);
  P.setFromTriplets(select.begin(), select.end());
  Eigen::SparseLU<Sparse> lu(Sparse(P * A * Sparse(P.transpose())));
  REQUIRE(lu.info() == Eigen::Success);
  const Vector v_ref = b.v0 + Sparse(P.transpose()) * lu.solve(Vector(P * rhs));
  // The state's tangent is indefinite: the exact and the projected steps differ.
  Sparse Kp;
  b.model.hessian(b.x0, Kp, true);
  REQUIRE((Kp - K).norm() > 1e-3 * K.norm());

  for (LinearSolverKind kind : {LinearSolverKind::Cholesky, LinearSolverKind::PcgJacobi}) {
    BackwardEulerSettings s;
    s.max_newton = 1;
    s.linear = kind;
    s.rayleigh_alpha = alpha;
    s.rayleigh_beta = beta;
    s.fix = DefinitenessFix::None;
    s.damping = RayleighDamping::TangentAtEnd;
    BackwardEuler be(b.model, s);
    Vector x = b.x0, v = b.v0;
    const BackwardEulerReport r = be.step(h, x, v, b.f_ext, b.fixed);
    CAPTURE(int(kind));
    CHECK(r.newton_iterations == 1);
    CHECK((v - v_ref).norm() <= 1e-10 * v_ref.norm());
    CHECK((x - (b.x0 + h * v)).norm() <= 1e-14 * x.norm());

    s.fix = DefinitenessFix::LocalClamp;
    s.damping = RayleighDamping::ProjectedAtStart;
    BackwardEuler projected(b.model, s);
    Vector xp = b.x0, vp = b.v0;
    projected.step(h, xp, vp, b.f_ext, b.fixed);
    CHECK((vp - v_ref).norm() >= 1e-6 * v_ref.norm());
  }
}

TEST_CASE("linear FEM: the Hessian factorised once gives the steps of refactorising it") {
  const TetFemModel model = block_model(FemKind::Linear, 2e5);
  const auto n = static_cast<Eigen::Index>(model.vertex_count());
  std::vector<bool> fixed(static_cast<std::size_t>(n), false);
  fixed[0] = fixed[3] = true;
  const Vector f_ext = random_vector(3 * n, 20.0, 12);
  for (LinearSolverKind kind : {LinearSolverKind::Cholesky, LinearSolverKind::PcgIncompleteCholesky})
    for (DefinitenessFix fix : {DefinitenessFix::LocalClamp, DefinitenessFix::GlobalRegularization}) {
      BackwardEulerSettings s;
      s.linear = kind;
      s.fix = fix;
      s.rayleigh_alpha = 0.2;
      s.rayleigh_beta = 0.003;
      BackwardEuler reused(model, s);
      Vector x = rotated(model, Mat3::Identity(), 0.03, 13), v = random_vector(3 * n, 0.4, 14);
      Vector xr = x, vr = v;
      double worst = 0.0;
      for (int step = 0; step < 12; ++step) {
        const double h = step < 8 ? 0.01 : 0.004;  // a new h refactorises
        reused.step(h, x, v, f_ext, fixed);
        BackwardEuler fresh(model, s);  // factorises its Hessian anew
        fresh.step(h, xr, vr, f_ext, fixed);
        worst = std::max(worst, (x - xr).norm() / (xr - model.rest_positions()).norm());
        if (kind == LinearSolverKind::Cholesky) CHECK(x == xr);  // bit for bit
      }
      CAPTURE(int(kind));
      CAPTURE(int(fix));
      // PCG: the same factor as preconditioner, but the first CG solve of a step starts
      // from the velocity extrapolated from the last step, which a fresh solver lacks:
      // the two agree to the Newton tolerance (1e-9 of the forces), not to the bit.
      CHECK(worst <= (kind == LinearSolverKind::Cholesky ? 1e-12 : 1e-9));
    }
}

TEST_CASE(
    "GlobalRegularization takes a descent step where an inverted state's Hessian is indefinite") {
  // A stiff, light cube compressed to 30 % with one corner pushed through: h²K dominates M
  // and K has negative eigenvalues.
  const TetFemModel model = block_model(FemKind::Corotational, 1e6, 1);
  const auto n = static_cast<Eigen::Index>(model.vertex_count());
  const double h = 0.05;
  const Vector m = mass_vector(model);
  Vector x0 = 0.3 * model.rest_positions();
  x0.segment<3>(3 * (n - 1)) = Vec3(0.05, 0.08, -0.1);
  const Vector v0 = random_vector(3 * n, 0.1, 8), zero = Vector::Zero(3 * n);
  Sparse K;
  model.hessian(x0, K);
  const Eigen::MatrixXd H = Eigen::MatrixXd(m.asDiagonal()) + h * h * Eigen::MatrixXd(K);
  const double lowest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(H).eigenvalues()[0];
  CAPTURE(lowest);
  REQUIRE(lowest < 0.0);
  const auto objective = [&](const Vector& x) {  // g(x) = ½||x − x_n − h v_n||²_M + h² E(x)
    return 0.5 * (x - x0 - h * v0).cwiseAbs2().dot(m) + h * h * model.value(x);
  };

  BackwardEulerSettings s;
  s.fix = DefinitenessFix::None;
  {
    BackwardEuler be(model, s);
    Vector x = x0, v = v0;
    const BackwardEulerReport r = be.step(h, x, v, zero, {});
    CHECK(r.factorization_failed);
    CHECK(r.regularizations == 0);
    CHECK(x == x0);  // abandoned: state untouched
    CHECK(v == v0);
  }
  s.fix = DefinitenessFix::GlobalRegularization;
  for (int max_newton : {2, 200}) {
    s.max_newton = max_newton;
    BackwardEuler be(model, s);
    Vector x = x0, v = v0;
    const BackwardEulerReport r = be.step(h, x, v, zero, {});
    CAPTURE(max_newton);
    CAPTURE(r.regularizations);
    CAPTURE(r.regularization);
    CAPTURE(r.newton_iterations);
    CHECK_FALSE(r.factorization_failed);
    CHECK(r.regularizations > 0);  // μ was needed
    CHECK(r.regularization > 0.0);
    CHECK(objective(x) < objective(x0));
    if (max_newton == 200) CHECK(r.converged);
  }
  // Local eigenvalue clamping needs no μ: M + h²K⁺ factors at once.
  s.fix = DefinitenessFix::LocalClamp;
  BackwardEuler be(model, s);
  Vector x = x0, v = v0;
  const BackwardEulerReport r = be.step(h, x, v, zero, {});
  CHECK(r.converged);
  CHECK(r.regularizations == 0);
  CHECK(objective(x) < objective(x0));
}

TEST_CASE("BackwardEuler::step rejects a non-positive timestep and mismatched sizes") {
  const TetFemModel model = block_model(FemKind::Linear, 1e5, 1);
  BackwardEuler be(model, BackwardEulerSettings{});
  Vector x = model.rest_positions(), v = Vector::Zero(x.size()), f = Vector::Zero(x.size());
  CHECK_THROWS_WITH_AS(be.step(0.0, x, v, f, {}), doctest::Contains("h = 0"),
                       std::invalid_argument);
  Vector short_f = Vector::Zero(3);
  CHECK_THROWS_WITH_AS(be.step(0.01, x, v, short_f, {}), doctest::Contains("3n = 24"),
                       std::invalid_argument);
}
