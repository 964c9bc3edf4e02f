#pragma once
/// Synchronous implicit (backward) Euler for a TetFemModel — the baseline of Zhao et
/// al. and Schroeder et al. — as a minimisation (lecture-implicit-euler-methods.md,
/// "Reformulating the Implicit Euler Problem"), with Rayleigh damping D = α M + β K₀
/// (K₀ the stiffness at the step's start with its element blocks projected to PSD, so
/// that damping never adds energy — for linear FEM K₀ = K; constant over the step).
/// In the step's displacement u = x − x_n (unknowns: the free vertices; prescribed
/// vertices have u = h v_n):
///
///   u* = argmin_u  ½ ||u − h v_n||²_M + h² (E(x_n + u) − f_extᵀ u) + (h/2) ||u||²_D,
///   v_{n+1} = u* / h,  x_{n+1} = x_n + u*,
///
/// whose optimality condition M (v_{n+1} − v_n) = h (f_ext − f_int(x_{n+1}) − D v_{n+1})
/// is Zhao eq. (1)–(3). Newton's method from u = 0 with backtracking (Armijo) line
/// search and a definiteness fix — global regularisation (add μI, μ from 1e-6 × the
/// largest diagonal entry, ×10 until the sparse Cholesky factorisation succeeds) or
/// local eigenvalue clamping of the element Hessians — and a choice of linear solver:
/// sparse Cholesky, CG, or PCG with a Jacobi or incomplete-Cholesky preconditioner.
/// (Global regularisation tests definiteness with the sparse Cholesky whatever the
/// linear solver; the iterative solvers then solve the regularised system.)
/// `max_newton = 1` takes the full first Newton step without line search: the
/// linearised step of Zhao eq. (5), (M + hD + h²K) Δv = h (f_ext − f_int − D v_n − h K v_n),
/// with K and f_int at x_n (at x_n with the prescribed vertices already moved, if they
/// move); for linear FEM it is the exact minimiser.
///
/// Convergence: ||∇g||₂ over the free unknowns ≤ tolerance × the sum of the norms of
/// the gradient's four parts at the start u₀, ||M (u₀ − h v_n)|| + h² ||∇E(x_n + u₀)|| +
/// h² ||f_ext|| + h ||D u₀|| (free rows) — the scale of the forces in the step.
#include <Eigen/Sparse>
#include <memory>
#include <vector>

#include "integrators/linear_solvers.hpp"
#include "integrators/tet_fem.hpp"

namespace clockwork {

enum class DefinitenessFix { None, GlobalRegularization, LocalClamp };

struct BackwardEulerSettings {
  LinearSolverKind linear = LinearSolverKind::Cholesky;
  DefinitenessFix fix = DefinitenessFix::LocalClamp;
  int max_newton = 50;          ///< 1: the linearised step (Zhao eq. 5)
  double tolerance = 1e-9;      ///< on ||∇g|| relative to the scale above
  double cg_tolerance = 1e-12;  ///< relative residual of the iterative solvers
  int cg_max_iterations = 10000;
  double rayleigh_alpha = 0.0;  ///< 1/s
  double rayleigh_beta = 0.0;   ///< s
};

struct BackwardEulerReport {
  int newton_iterations = 0;  ///< linear solves (Newton steps) taken
  int linear_iterations = 0;  ///< CG iterations summed (0 for Cholesky)
  bool converged = false;
  /// A factorisation failed (fix None with an indefinite Hessian, or μ grew past 1e30
  /// times the diagonal): the step was abandoned and x, v are unchanged.
  bool factorization_failed = false;
  int regularizations = 0;     ///< GlobalRegularization: failed factorisations (μ raised)
  double regularization = 0;   ///< the largest μ added to the Hessian's diagonal (0: none)
  double gradient_norm = 0.0;  ///< ||∇g|| over the free unknowns at the returned state
  double threshold = 0.0;      ///< the convergence bound it was measured against
};

class BackwardEuler {
 public:
  using Vector = Eigen::VectorXd;
  BackwardEuler(const TetFemModel& model, BackwardEulerSettings settings);
  ~BackwardEuler();
  BackwardEuler(BackwardEuler&&) noexcept;

  /// One step of size h: x, v (3n) in and out; f_ext (3n) held over the step (gravity,
  /// loads); `fixed` (n; may be empty) marks prescribed vertices, which are removed
  /// from the unknowns and keep their velocity. The model's vertices not in any tet
  /// have no mass and must be fixed. Sizes and h > 0 are checked (std::invalid_argument).
  /// If the step does not converge within max_newton, x and v hold the last iterate.
  BackwardEulerReport step(double h, Vector& x, Vector& v, const Vector& f_ext,
                           const std::vector<bool>& fixed);

  const BackwardEulerSettings& settings() const { return settings_; }

 private:
  struct Workspace;  // buffers, patterns and factorisations reused across steps

  const TetFemModel& model_;
  BackwardEulerSettings settings_;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace clockwork
