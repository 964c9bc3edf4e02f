#pragma once
/// Synchronous implicit (backward) Euler for a TetFemModel — the baseline of Zhao et
/// al. and Schroeder et al. — as a minimisation (lecture-implicit-euler-methods.md,
/// "Reformulating the Implicit Euler Problem"), with Rayleigh damping D = α M + β K₀
/// (K₀ the stiffness at the step's start, constant over the step):
///
///   x* = argmin_x  ½ ||x − x_n − h v_n||²_M + h² (E(x) − f_extᵀ x) + (h/2) ||x − x_n||²_D,
///   v_{n+1} = (x* − x_n) / h,
///
/// whose optimality condition is Zhao eq. (1)–(3). Newton's method with backtracking
/// (Armijo) line search and a definiteness fix — global regularisation (add μI, μ ×10
/// until the Cholesky factorisation succeeds) or local eigenvalue clamping of the
/// element Hessians — and a choice of linear solver: sparse Cholesky, CG, or PCG with
/// a Jacobi or incomplete-Cholesky preconditioner. `max_newton = 1` gives the
/// linearised step of Zhao eq. (5) (one solve per step, K at x_n), which for linear
/// FEM is the exact minimiser.
#include <Eigen/Sparse>
#include <vector>

#include "integrators/tet_fem.hpp"

namespace clockwork {

enum class LinearSolverKind { Cholesky, CG, PcgJacobi, PcgIncompleteCholesky };
enum class DefinitenessFix { None, GlobalRegularization, LocalClamp };

struct BackwardEulerSettings {
  LinearSolverKind linear = LinearSolverKind::Cholesky;
  DefinitenessFix fix = DefinitenessFix::LocalClamp;
  int max_newton = 50;             ///< 1: the linearised step (Zhao eq. 5)
  double tolerance = 1e-9;         ///< on ||∇g|| relative to ||M (x_n + h v_n) − ...|| (see .cpp)
  double cg_tolerance = 1e-12;     ///< relative residual of the iterative solvers
  int cg_max_iterations = 10000;
  double rayleigh_alpha = 0.0;     ///< 1/s
  double rayleigh_beta = 0.0;      ///< s
};

struct BackwardEulerReport {
  int newton_iterations = 0;
  int linear_iterations = 0;  ///< CG iterations summed (0 for Cholesky)
  bool converged = false;
  double gradient_norm = 0.0;
};

class BackwardEuler {
 public:
  using Vector = Eigen::VectorXd;
  BackwardEuler(const TetFemModel& model, BackwardEulerSettings settings);

  /// One step of size h: x, v (3n) in and out; f_ext (3n) held over the step (gravity,
  /// loads); `fixed` (n; may be empty) marks prescribed vertices, which are removed
  /// from the unknowns and keep their velocity.
  BackwardEulerReport step(double h, Vector& x, Vector& v, const Vector& f_ext,
                           const std::vector<bool>& fixed);

  const BackwardEulerSettings& settings() const { return settings_; }

 private:
  const TetFemModel& model_;
  BackwardEulerSettings settings_;
};

}  // namespace clockwork
