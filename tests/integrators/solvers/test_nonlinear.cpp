// The shared nonlinear-solver pieces (integrators/solvers/nonlinear.hpp): Newton with
// the Armijo line search and the global definiteness fix on a non-convex function, the
// line search's acceptance rule, the convergence test, nonlinear CG's direction, PCG
// (filtered, against Eigen's ConjugateGradient, preconditioned, warm-started) and
// SparseSpdSolver's iterative kinds on it. Every expected value is computed from the
// problem, not pasted.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "integrators/solvers/linear_solvers.hpp"
#include "integrators/solvers/nonlinear.hpp"

namespace clockwork {
namespace {

using Vector = Eigen::VectorXd;
using Sparse = Eigen::SparseMatrix<double>;

/// Rosenbrock's function (1 − x)² + 100 (y − x²)²: non-convex, minimiser (1, 1), its
/// Hessian indefinite where y > x² + 1/200 (at (−1, 2): an off-diagonal coupling makes it
/// so, the diagonal being positive).
double rosenbrock(const Vector& p) {
  const double a = 1.0 - p[0], b = p[1] - p[0] * p[0];
  return a * a + 100.0 * b * b;
}
/// Its gradient's two parts, of (1 − x)² and of 100 (y − x²)².
Vector rosenbrock_part1(const Vector& p) { return Vector{{-2.0 * (1.0 - p[0]), 0.0}}; }
Vector rosenbrock_part2(const Vector& p) {
  const double b = p[1] - p[0] * p[0];
  return Vector{{-400.0 * p[0] * b, 200.0 * b}};
}
Vector rosenbrock_gradient(const Vector& p) { return rosenbrock_part1(p) + rosenbrock_part2(p); }
Sparse rosenbrock_hessian(const Vector& p) {
  const double off = -400.0 * p[0];
  const std::vector<Eigen::Triplet<double>> t = {
      {0, 0, 2.0 - 400.0 * (p[1] - p[0] * p[0]) + 800.0 * p[0] * p[0]}, {0, 1, off}, {1, 0, off}, {1, 1, 200.0}};
  Sparse S(2, 2);
  S.setFromTriplets(t.begin(), t.end());  // every entry stored, zero or not
  S.makeCompressed();
  return S;
}

bool positive_definite(const Eigen::MatrixXd& A) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A).eigenvalues().minCoeff() > 0.0;
}

/// A Cholesky attempt for regularize_until_factored, keeping the factor for solves.
struct Llt {
  Eigen::SimplicialLLT<Sparse> llt;
  bool operator()(const Sparse& A) {
    llt.compute(A);
    return llt.info() == Eigen::Success;
  }
};

TEST_CASE("nonlinear: Newton with line search and definiteness fix reaches Rosenbrock's minimiser") {
  Vector x{{-1.0, 2.0}};  // the Hessian is indefinite here
  REQUIRE_FALSE(positive_definite(Eigen::MatrixXd(rosenbrock_hessian(x))));
  const ConvergenceTest test(
      1e-10, gradient_scale({rosenbrock_part1(x).norm(), rosenbrock_part2(x).norm()}));
  int regularized = 0, iterations = 0;
  bool converged = false;
  Vector trial;
  for (; iterations < 200; ++iterations) {
    const Vector g = rosenbrock_gradient(x);
    if (test.met(g.norm())) {
      converged = true;
      break;
    }
    Sparse H = rosenbrock_hessian(x);
    Llt factor;
    const Regularization fix = regularize_until_factored(H, diagonal_positions(H), factor);
    REQUIRE(fix.factored);
    if (fix.increases > 0) ++regularized;
    const Vector d = -factor.llt.solve(g);
    const double e0 = rosenbrock(x);
    const LineSearchResult ls = armijo_line_search(e0, g.dot(d), 0.0, [&](double t) {
      trial = x + t * d;
      return rosenbrock(trial);
    });
    REQUIRE(ls.descent);
    REQUIRE(ls.accepted());
    CHECK(ls.energy == rosenbrock(trial));
    CHECK(ls.energy < e0);
    x = trial;
  }
  CAPTURE(x.transpose());
  CHECK(converged);
  CHECK(regularized > 0);  // the fix was needed on the way
  CHECK(std::abs(x[0] - 1.0) < 1e-6);
  CHECK(std::abs(x[1] - 1.0) < 1e-6);
}

TEST_CASE("nonlinear: the definiteness fix makes the Newton step a descent direction") {
  SUBCASE("Rosenbrock's indefinite Hessian") {
    const Vector p{{-1.0, 2.0}};
    Sparse H = rosenbrock_hessian(p);
    const Eigen::MatrixXd before(H);
    Llt factor;
    REQUIRE_FALSE(factor(H));
    const Vector g = rosenbrock_gradient(p);
    // Along the eigenvector of negative curvature the plain Newton step −H⁻¹ g' climbs;
    // the fixed step descends for it and for the true gradient.
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(before);
    REQUIRE(eig.eigenvalues()[0] < 0.0);
    const Vector g2 = eig.eigenvectors().col(0);
    CHECK(g2.dot(-before.ldlt().solve(g2)) > 0.0);
    const Regularization fix = regularize_until_factored(H, diagonal_positions(H), factor);
    REQUIRE(fix.factored);
    CHECK(fix.increases > 0);
    CHECK(fix.mu > -eig.eigenvalues()[0]);  // it factors only once H + μI is SPD
    const Eigen::MatrixXd after(H);
    CHECK(after(0, 1) == before(0, 1));
    CHECK(after(1, 0) == before(1, 0));
    for (int i = 0; i < 2; ++i) CHECK(after(i, i) - before(i, i) == doctest::Approx(fix.mu).epsilon(1e-12));
    CHECK(positive_definite(after));
    for (const Vector& gk : {g, g2}) CHECK(gk.dot(-factor.llt.solve(gk)) < 0.0);
  }
  SUBCASE("a random indefinite sparse matrix") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int n = 12;
    std::vector<Eigen::Triplet<double>> t;
    for (int i = 0; i < n; ++i) {
      t.emplace_back(i, i, i % 3 == 0 ? -2.0 + u(rng) : 3.0 + u(rng));
      if (i + 1 < n) {
        const double c = u(rng);
        t.emplace_back(i, i + 1, c);
        t.emplace_back(i + 1, i, c);
      }
    }
    Sparse H(n, n);
    H.setFromTriplets(t.begin(), t.end());
    H.makeCompressed();
    REQUIRE_FALSE(positive_definite(Eigen::MatrixXd(H)));
    Llt factor;
    const Regularization fix = regularize_until_factored(H, diagonal_positions(H), factor);
    REQUIRE(fix.factored);
    CHECK(positive_definite(Eigen::MatrixXd(H)));
    for (int k = 0; k < 20; ++k) {
      Vector g(n);
      for (int i = 0; i < n; ++i) g[i] = u(rng);
      CHECK(g.dot(-factor.llt.solve(g)) < 0.0);
    }
  }
  SUBCASE("an SPD matrix is factored as it is") {
    Sparse H = rosenbrock_hessian(Vector{{1.0, 1.0}});
    const Eigen::MatrixXd before(H);
    Llt factor;
    const Regularization fix = regularize_until_factored(H, diagonal_positions(H), factor);
    CHECK(fix.factored);
    CHECK(fix.mu == 0.0);
    CHECK(fix.increases == 0);
    CHECK((Eigen::MatrixXd(H) - before).norm() == 0.0);
  }
  SUBCASE("a zero matrix cannot be fixed (no diagonal to scale μ by): reported, not looped on") {
    Sparse H = rosenbrock_hessian(Vector{{-1.0, 2.0}});
    for (int k = 0; k < H.nonZeros(); ++k) H.valuePtr()[k] = 0.0;
    Llt factor;
    const Regularization fix = regularize_until_factored(H, diagonal_positions(H), factor);
    CHECK_FALSE(fix.factored);
    CHECK(fix.increases == 0);
  }
}

TEST_CASE("nonlinear: the Armijo line search never accepts an energy increase") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  Vector trial;
  int accepted = 0, refused = 0;
  for (int k = 0; k < 200; ++k) {
    const Vector x{{u(rng), u(rng)}};
    const Vector d{{u(rng), u(rng)}};
    const double e0 = rosenbrock(x);
    // The slope is claimed negative whatever d does: the energies decide.
    const LineSearchResult ls = armijo_line_search(e0, -1.0, 0.0, [&](double t) {
      trial = x + t * d;
      return rosenbrock(trial);
    });
    REQUIRE(ls.descent);
    if (!ls.accepted()) {
      ++refused;
      continue;
    }
    ++accepted;
    CAPTURE(x.transpose());
    CAPTURE(d.transpose());
    CHECK(ls.energy == rosenbrock(x + ls.step * d));
    CHECK(ls.energy <= e0 - kArmijoConstant * ls.step);
    CHECK(ls.step <= 1.0);
  }
  CHECK(accepted > 0);
  CHECK(refused > 0);  // some directions only climb: nothing accepted

  SUBCASE("a direction that does not descend is not searched") {
    const Vector x{{0.5, 0.5}};
    int evaluations = 0;
    const Vector g = rosenbrock_gradient(x);
    const LineSearchResult ls = armijo_line_search(rosenbrock(x), g.dot(g), 0.0, [&](double) {
      ++evaluations;
      return 0.0;
    });
    CHECK_FALSE(ls.descent);
    CHECK_FALSE(ls.accepted());
    CHECK(evaluations == 0);
  }
  SUBCASE("noise: a rise within the energy's rounding is accepted, one above it is not") {
    const double e0 = 1.0, noise = 1e-13;
    CHECK(armijo_line_search(e0, -1e-30, noise, [&](double) { return e0 + 0.5 * noise; }).step == 1.0);
    CHECK(armijo_line_search(e0, -1e-30, noise, [&](double) { return e0 + 2.0 * noise; }).step == 0.0);
  }
  SUBCASE("backtracking halves from 1 and stops above kMinLineSearchStep") {
    std::vector<double> tried;
    CHECK(backtrack([&](double t) {
            tried.push_back(t);
            return false;
          }) == 0.0);
    REQUIRE(!tried.empty());
    CHECK(tried.front() == 1.0);
    for (std::size_t i = 1; i < tried.size(); ++i) CHECK(tried[i] == 0.5 * tried[i - 1]);
    CHECK(tried.back() > kMinLineSearchStep);
    CHECK(0.5 * tried.back() <= kMinLineSearchStep);
  }
}

TEST_CASE("nonlinear: the convergence test stops on the relative gradient norm or a negligible step") {
  const Vector x{{0.3, 2.0}};
  const double scale = gradient_scale({rosenbrock_part1(x).norm(), rosenbrock_part2(x).norm()});
  CHECK(scale == rosenbrock_part1(x).norm() + rosenbrock_part2(x).norm());
  const ConvergenceTest test(1e-6, scale);
  CHECK(test.threshold == 1e-6 * scale);
  CHECK(test.met(test.threshold));
  CHECK_FALSE(test.met(std::nextafter(test.threshold, 1.0)));
  CHECK_FALSE(test.met(std::numeric_limits<double>::quiet_NaN()));  // never "converged" on NaN
  // The relative bound is scale-free: the same function in other units stops alike.
  const ConvergenceTest scaled(1e-6, gradient_scale({1e6 * rosenbrock_part1(x).norm(),
                                                      1e6 * rosenbrock_part2(x).norm()}));
  const double g = rosenbrock_gradient(x).norm();
  CHECK(test.met(1e-7 * g) == scaled.met(1e6 * 1e-7 * g));

  // A step below half an ulp of the iterate cannot change it.
  const double half_ulp = std::numeric_limits<double>::epsilon() / 4.0;
  for (const double xi : {1.0, 3.7, 1e3, 1e-4}) {
    const double step = half_ulp * xi;
    CHECK(step_negligible(step, xi, half_ulp));
    CHECK(xi + step == xi);
    CHECK_FALSE(step_negligible(4.0 * step, xi, half_ulp));
  }
  // The offset is an absolute floor where the iterate is near 0.
  CHECK(step_negligible(1e-14, 0.0, 1e-13, 1.0));
  CHECK_FALSE(step_negligible(1e-14, 0.0, 1e-13, 0.0));
}

/// 1D Laplacian-like SPD matrix tridiag(−1, 2.5, −1), n × n.
Sparse spd_matrix(int n) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 2.5 + 0.1 * i);
    if (i + 1 < n) {
      t.emplace_back(i, i + 1, -1.0);
      t.emplace_back(i + 1, i, -1.0);
    }
  }
  Sparse A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  return A;
}

/// n entries uniform in [−1, 1], from `seed`.
Vector random_vector(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Vector v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

TEST_CASE("nonlinear: nonlinear CG's direction (Polak–Ribière+) descends and minimises a quadratic") {
  const int n = 30;
  const Sparse A = spd_matrix(n);
  const Vector b = random_vector(n, 9);
  const Vector diag = A.diagonal();
  const auto energy = [&](const Vector& x) { return 0.5 * x.dot(A * x) - b.dot(x); };
  Vector x = Vector::Zero(n), d, z, trial;
  NcgHistory history;
  // ∇E at 0 is −b. Far below 1e-8 the energy's changes are below its rounding and
  // the line search cannot tell them (the schemes stop there on a negligible step).
  const ConvergenceTest test(1e-8, b.norm());
  bool converged = false;
  double g_norm = 0.0;
  for (int k = 0; k < 500 && !converged; ++k) {
    const Vector g = A * x - b;
    g_norm = g.norm();
    if (test.met(g_norm)) {
      converged = true;
      break;
    }
    z = g.cwiseQuotient(diag);
    ncg_direction(g, z, k == 0, history, d);
    if (k == 0) CHECK(d == -z);
    CHECK(g.dot(d) < 0.0);
    CHECK(history.z_old == z);
    CHECK(history.g_old == g);
    const LineSearchResult ls = armijo_line_search(energy(x), g.dot(d), 0.0, [&](double t) {
      trial = x + t * d;
      return energy(trial);
    });
    REQUIRE(ls.accepted());
    x = trial;
  }
  CHECK(converged);
  const Vector exact = Eigen::MatrixXd(A).ldlt().solve(b);
  // ||x − x*|| ≤ ||A⁻¹|| ||∇E(x)||.
  const double lambda_min = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(Eigen::MatrixXd(A)).eigenvalues()[0];
  CHECK((x - exact).norm() <= g_norm / lambda_min * (1.0 + 1e-6));

  SUBCASE("a β that would climb restarts along −z") {
    NcgHistory h;
    h.z_old = Vector{{1.0, 0.0}};
    h.g_old = Vector{{1.0, 0.0}};
    const Vector g{{1.0, 0.0}}, zz{{2.0, 0.0}};
    Vector dd{{10.0, 0.0}};  // β = 1: −z + d points uphill
    ncg_direction(g, zz, false, h, dd);
    CHECK(dd == -zz);
  }
}

TEST_CASE("nonlinear: filtered PCG solves an SPD system to tolerance and keeps the filtered components") {
  const int n = 40;
  const Sparse A = spd_matrix(n);
  const Vector b = random_vector(n, 13);
  const Vector diag = A.diagonal();
  const auto apply_a = [&](const Vector& in, Vector& out) { out = A * in; };
  const auto jacobi = [&](const Vector& r, Vector& z) { z = r.cwiseQuotient(diag); };
  PcgWorkspace w;
  const double tolerance = 1e-10;
  const PcgSettings filtered{tolerance, 1000, PcgRule::Filtered};

  SUBCASE("no filter: plain PCG") {
    Vector x = Vector::Zero(n);
    const PcgReport r = pcg(
        apply_a, jacobi, [](Vector&) {}, b, x, filtered, w);
    CHECK(r.converged);
    CHECK(r.iterations <= n);
    CHECK((b - A * x).norm() <= tolerance * b.norm() * (1.0 + 1e-6));
    CHECK(r.residual_norm <= tolerance * b.norm());
  }
  SUBCASE("a filter prescribes components: they keep their start, the rest solves its rows") {
    const std::vector<int> held = {0, 7, 13, 39};
    const auto filter = [&](Vector& y) {
      for (const int i : held) y[i] = 0.0;
    };
    Vector x = Vector::Zero(n);
    for (const int i : held) x[i] = 0.25 * (i + 1);
    const Vector start = x;
    const PcgReport r = pcg(apply_a, jacobi, filter, b, x, filtered, w);
    CHECK(r.converged);
    for (const int i : held) CHECK(x[i] == start[i]);
    Vector residual = b - A * x;
    filter(residual);
    CHECK(residual.norm() <= tolerance * b.norm() * (1.0 + 1e-6));
    // Against the reduced system A_ff x_f = b_f − A_fc x_c solved directly.
    std::vector<int> free;
    for (int i = 0; i < n; ++i)
      if (std::find(held.begin(), held.end(), i) == held.end()) free.push_back(i);
    const Eigen::MatrixXd dense(A);
    const Vector rhs = b - dense * start;
    Eigen::MatrixXd Aff(free.size(), free.size());
    Vector bf(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) {
      bf[i] = rhs[free[i]];
      for (std::size_t j = 0; j < free.size(); ++j) Aff(i, j) = dense(free[i], free[j]);
    }
    const Vector xf = Aff.ldlt().solve(bf);
    for (std::size_t i = 0; i < free.size(); ++i) CHECK(x[free[i]] == doctest::Approx(xf[i]).epsilon(1e-8));
  }
  SUBCASE("a start that already solves the system takes no iteration") {
    Vector x = Eigen::MatrixXd(A).ldlt().solve(b);
    const PcgReport r = pcg(
        apply_a, jacobi, [](Vector&) {}, b, x, PcgSettings{1e-8, 1000, PcgRule::Filtered}, w);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
  }
  SUBCASE("a matrix that is not SPD stops at its non-positive curvature") {
    Vector x = Vector::Zero(n);
    const auto negative = [&](const Vector& in, Vector& out) { out = -(A * in); };
    const auto identity = [](const Vector& r, Vector& z) { z = r; };
    const PcgReport r = pcg(
        negative, identity, [](Vector&) {}, b, x, filtered, w);
    CHECK_FALSE(r.converged);
    CHECK(r.iterations == 1);
    CHECK(x.isZero(0.0));
  }
}

/// S B S: B an SPD band matrix (couplings at distances 1 and 5, diagonally dominant),
/// S = diag(10^{2u}), u uniform in [−1, 1] — an SPD matrix whose diagonal spans eight
/// orders of magnitude, like a step matrix of heavy and light vertices: where the
/// preconditioners matter.
Sparse badly_scaled_spd(int n, unsigned seed) {
  std::vector<Eigen::Triplet<double>> t;
  const Vector u = random_vector(n, seed);
  const auto s = [&](int i) { return std::pow(10.0, 2.0 * u[i]); };
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, (3.5 + 0.1 * i) * s(i) * s(i));
    for (const int k : {1, 5})
      if (i + k < n) {
        const double c = -(k == 1 ? 1.0 : 0.5) * s(i) * s(i + k);
        t.emplace_back(i, i + k, c);
        t.emplace_back(i + k, i, c);
      }
  }
  Sparse A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  return A;
}

TEST_CASE("nonlinear: PCG under Eigen's rule is Eigen's ConjugateGradient to the last bit") {
  // Backward Euler's iterative solves moved from Eigen's ConjugateGradient to pcg()
  // with their trajectories unchanged: every iterate, the count and the stop agree.
  const int n = 60;
  const Sparse A = badly_scaled_spd(n, 21);
  const Vector b = random_vector(n, 22), start = random_vector(n, 23);
  const auto product = [&](const Vector& in, Vector& out) { out.noalias() = A.transpose() * in; };
  Eigen::DiagonalPreconditioner<double> diagonal;
  diagonal.compute(A);
  Eigen::IncompleteCholesky<double> ic;
  ic.compute(A);
  REQUIRE(ic.info() == Eigen::Success);
  PcgWorkspace w;
  const auto compare = [&](auto& cg, const auto& precondition, double tolerance, int cap) {
    cg.setTolerance(tolerance);
    cg.setMaxIterations(cap);
    cg.compute(A);
    for (const bool warm : {false, true}) {
      CAPTURE(warm);
      const Vector eigen_x = warm ? Vector(cg.solveWithGuess(b, start)) : Vector(cg.solve(b));
      Vector x = warm ? start : Vector::Zero(n);
      const PcgReport r = pcg(
          product, precondition, [](Vector&) {}, b, x, PcgSettings{tolerance, cap, PcgRule::Eigen},
          w);
      CHECK((x.array() == eigen_x.array()).all());
      CHECK(r.converged == (cg.info() == Eigen::Success));
      CHECK(r.iterations - (r.converged ? 1 : 0) == cg.iterations());
      CHECK(r.residual_norm == doctest::Approx(cg.error() * b.norm()).epsilon(1e-12));
    }
  };
  for (const auto& [tolerance, cap] :
       {std::pair{1e-10, 1000}, std::pair{1e-3, 1000}, std::pair{1e-10, 7}}) {
    CAPTURE(tolerance);
    CAPTURE(cap);
    SUBCASE("no preconditioner") {
      Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>
          cg;
      compare(
          cg, [](const Vector& r, Vector& z) { z = r; }, tolerance, cap);
    }
    SUBCASE("Jacobi") {
      Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper> cg;
      compare(
          cg, [&](const Vector& r, Vector& z) { z = diagonal.solve(r); }, tolerance, cap);
    }
    SUBCASE("incomplete Cholesky") {
      Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper,
                               Eigen::IncompleteCholesky<double>>
          cg;
      compare(
          cg, [&](const Vector& r, Vector& z) { z = ic.solve(r); }, tolerance, cap);
    }
  }
}

TEST_CASE("nonlinear: PCG reaches the direct solution, stops at its tolerance, starts warm") {
  const int n = 60;
  const Sparse A = badly_scaled_spd(n, 31);
  const Vector b = random_vector(n, 32);
  const Vector direct = Eigen::SimplicialLLT<Sparse>(A).solve(b);
  const auto product = [&](const Vector& in, Vector& out) { out = A * in; };
  const auto none = [](const Vector& r, Vector& z) { z = r; };
  const Vector diag = A.diagonal();
  const auto jacobi = [&](const Vector& r, Vector& z) { z = r.cwiseQuotient(diag); };
  Eigen::IncompleteCholesky<double> ic(A);
  const auto ichol = [&](const Vector& r, Vector& z) { z = ic.solve(r); };
  const auto no_filter = [](Vector&) {};
  PcgWorkspace w;

  SUBCASE("each preconditioner reaches the direct solve; the better one in fewer products") {
    int iterations[3];
    for (const PcgRule rule : {PcgRule::Filtered, PcgRule::Eigen}) {
      const PcgSettings s{1e-12, 10 * n, rule};
      Vector x0 = Vector::Zero(n), x1 = x0, x2 = x0;
      iterations[0] = pcg(product, none, no_filter, b, x0, s, w).iterations;
      iterations[1] = pcg(product, jacobi, no_filter, b, x1, s, w).iterations;
      iterations[2] = pcg(product, ichol, no_filter, b, x2, s, w).iterations;
      for (const Vector* x : {&x0, &x1, &x2}) CHECK((*x - direct).norm() <= 1e-8 * direct.norm());
      // Eight orders of magnitude on the diagonal: plain CG needs far more than n
      // products, the diagonal removes the scaling, incomplete Cholesky most of the rest.
      CHECK(iterations[0] > n);
      CHECK(iterations[1] < iterations[0] / 2);
      CHECK(iterations[2] < iterations[1]);
    }
  }
  SUBCASE("the tolerance: the first iterate whose residual meets it, under either rule") {
    for (const PcgRule rule : {PcgRule::Filtered, PcgRule::Eigen}) {
      for (const double tolerance : {1e-3, 1e-6, 1e-9}) {
        CAPTURE(tolerance);
        Vector x = Vector::Zero(n);
        const PcgReport r =
            pcg(product, jacobi, no_filter, b, x, PcgSettings{tolerance, 1000, rule}, w);
        REQUIRE(r.converged);
        CHECK(r.residual_norm <= tolerance * b.norm());
        // The recurrence's residual is the true one up to rounding.
        CHECK((b - A * x).norm() <= tolerance * b.norm() * (1.0 + 1e-3));
        // One product fewer does not meet it.
        Vector y = Vector::Zero(n);
        const PcgReport short_of = pcg(product, jacobi, no_filter, b, y,
                                       PcgSettings{tolerance, r.iterations - 1, rule}, w);
        CHECK_FALSE(short_of.converged);
        CHECK(short_of.residual_norm > tolerance * b.norm());
      }
    }
  }
  SUBCASE("a warm start near the solution takes fewer products; at it, none") {
    const PcgSettings s{1e-10, 1000, PcgRule::Eigen};
    Vector cold = Vector::Zero(n);
    const int from_zero = pcg(product, jacobi, no_filter, b, cold, s, w).iterations;
    Vector warm = direct + 1e-6 * direct.norm() / std::sqrt(n) * random_vector(n, 33);
    const PcgReport r = pcg(product, jacobi, no_filter, b, warm, s, w);
    CHECK(r.converged);
    CHECK(r.iterations < from_zero);
    CHECK((b - A * warm).norm() <= 1e-10 * b.norm() * (1.0 + 1e-3));
    Vector at = direct;
    CHECK(pcg(product, jacobi, no_filter, b, at, s, w).iterations == 0);
    CHECK((at.array() == direct.array()).all());
  }
  SUBCASE("Eigen's rule: b = 0 gives x = 0 from any start; no curvature test") {
    Vector x = random_vector(n, 34);
    const PcgReport zero = pcg(product, jacobi, no_filter, Vector::Zero(n), x,
                               PcgSettings{1e-10, 1000, PcgRule::Eigen}, w);
    CHECK(zero.converged);
    CHECK(zero.iterations == 0);
    CHECK(x.isZero(0.0));
    // −A: every pᵀ(−A)p < 0. Filtered stops there (the test above); Eigen's CG runs on
    // and, the matrix being definite of one sign, still solves it.
    const auto negative = [&](const Vector& in, Vector& out) { out = -(A * in); };
    const PcgReport r =
        pcg(negative, jacobi, no_filter, b, x, PcgSettings{1e-12, 10 * n, PcgRule::Eigen}, w);
    CHECK(r.converged);
    CHECK((x + direct).norm() <= 1e-8 * direct.norm());
    Vector y = Vector::Zero(n);
    CHECK_FALSE(pcg(negative, jacobi, no_filter, b, y, PcgSettings{1e-12, 10 * n, PcgRule::Filtered}, w)
                    .converged);
    CHECK(y.isZero(0.0));
  }
}

TEST_CASE("nonlinear: SparseSpdSolver's iterative kinds solve through PCG, cold or warm") {
  const int n = 60;
  const Sparse A = badly_scaled_spd(n, 41);
  const Vector b = random_vector(n, 42);
  const Vector direct = Eigen::SimplicialLLT<Sparse>(A).solve(b);
  for (const LinearSolverKind kind : {LinearSolverKind::CG, LinearSolverKind::PcgJacobi,
                                      LinearSolverKind::PcgIncompleteCholesky}) {
    CAPTURE(static_cast<int>(kind));
    SparseSpdSolver solver(kind, 1e-12, 10 * n);
    REQUIRE(solver.factorize(A));
    Vector x;
    CHECK(solver.solve(b, x) > 0);
    CHECK((x - direct).norm() <= 1e-8 * direct.norm());
    // A guess at the solution: no product needed (Eigen's count, 0), x kept.
    Vector guess = direct;
    CHECK(solver.solve(b, guess, 1e-10, true) == 0);
    CHECK((guess.array() == direct.array()).all());
    // The same x without the guess: from 0 again.
    Vector again = direct;
    solver.solve(b, again, 1e-12, false);
    CHECK((again.array() == x.array()).all());
  }
}
}  // namespace
}  // namespace clockwork
