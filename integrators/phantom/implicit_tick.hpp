#pragma once
/// One implicit phantom tick as a minimisation (DESIGN §3, derived from the
/// phantom-mesh paper's eq. 4, 6–8 with α = ½; test_phantom checks the optimality
/// condition against the update equations):
///
///   x* = argmin_x E(x),  E(x) = (1/(2h²)) ||x − y||²_M + V(q̃ + θ (x − q̃))
///                                + (1/(2h)) (x − q̃)ᵀ D (x − q̃),
///
/// θ = ½ (the paper's midpoint rule; θ = 1 is backward Euler, an option beyond it),
///
/// M the full lumped mass, V the body's implicit potential, D = β K_mat(q̃) optional
/// stiffness-proportional Rayleigh damping: K_mat the elements' material (Gauss–Newton)
/// stiffness at the tick's start (for NCG: at its last preconditioner refresh), fixed
/// through the solve; the damping impulse is −h D ṽ⁺ with ṽ⁺ = (x − q̃)/h. K_mat is
/// PSD and annihilates rigid motions of q̃, so D exerts no net force and does not brake
/// a swinging or spinning body (the full K would: its stress term damped a hanging
/// foil's swing to rest in 0.2 s). The
/// undamped midpoint rule (β = 0) is the paper's; it has no numerical dissipation and
/// can pump energy into the mesh-scale modes of stiff, strongly curved shells
/// (docs/phantom.md). Prescribed (pinned)
/// vertices are removed from the unknowns: their x is given (Baraff–Witkin's filter).
/// P_c: optional one-sided obstacle planes on the landing point (tick_plane.hpp).
///
/// Solvers (lecture-implicit-euler-methods.md): projected Newton (element Hessians
/// projected to PSD, sparse Cholesky, backtracking Armijo line search) and nonlinear
/// CG (Polak–Ribière+) preconditioned by a sparse Cholesky factor of the Hessian
/// refreshed every `refresh` ticks (phantom-mesh paper §4: 50). Convergence:
/// ||∇E|| ≤ tolerance · (||M (q̃ − y)|| / h² + θ ||∇V(q̃)||), the gradient's two parts
/// at the phantom's current position — a relative gradient norm — or a step below
/// the rounding of the positions (the gradient's floating-point floor on stiff
/// cloth, where it can exceed the relative bound).
/// The line search, the convergence test and NCG's direction are the shared
/// integrators/solvers/nonlinear.hpp's, the sparse Cholesky linear_solvers.hpp's; the
/// energy, its caches and the factorisation schedule are the tick's own.
#include <string>
#include <vector>

#include "integrators/solvers/linear_solvers.hpp"
#include "integrators/energy/body_potential.hpp"
#include "integrators/energy/tick_plane.hpp"

namespace clockwork {

enum class ImplicitSolverKind { ProjectedNewton, PreconditionedNcg };
/// The sparse Cholesky of the Newton systems and of NCG's preconditioner: Eigen's scalar
/// SimplicialLLT in a scalar AMD order (the default), or the vertex-block factorisation
/// (block_cholesky.hpp), ~1.7× faster on the cape. The two agree to round-off, but the
/// phantom contact demos are sensitive to round-off (docs/performance.md, "Block
/// factorisation"), so the faster one is opt-in.
enum class TickFactorization { Simplicial, VertexBlock };

struct ImplicitSolverSettings {
  ImplicitSolverKind kind = ImplicitSolverKind::ProjectedNewton;
  double tolerance = 1e-6;
  int max_iterations = 200;
  int refresh = 50;  ///< NCG: ticks between preconditioner refactorisations
  /// NCG: iterations without convergence after which a tick refactors its
  /// preconditioner at the current iterate, and again after as many more.
  int stall_iterations = 20;
  double rayleigh_beta = 0.0;  ///< s: D = β K_mat (0: undamped, the paper's integrator)
  /// Where V is evaluated in the interval, z = q̃ + θ (x − q̃), and the share θ of the
  /// interval's impulse taken at its start: ½ the paper's midpoint rule (variational,
  /// no numerical dissipation), 1 backward Euler (the whole impulse −h ∇V(x) at the
  /// tick; L-stable: it damps the mesh-scale modes the midpoint rule keeps, loses
  /// energy, and conserves linear momentum but not angular; beyond the paper,
  /// docs/phantom.md "Backward Euler ticks").
  double theta = 0.5;
  TickFactorization factorization = TickFactorization::Simplicial;
};

struct TickProblem {
  double h = 0.0;
  const std::vector<double>* mass = nullptr;  ///< full lumped masses
  const std::vector<bool>* free = nullptr;    ///< per vertex: an unknown
  Eigen::VectorXd y, q_tilde;                 ///< 3n
  /// Obstacle planes the landing point must respect (tick_plane.hpp); their
  /// penalties are added to E. Empty unless the body sees obstacles in its ticks.
  std::vector<TickPlane> planes;
};

struct TickReport {
  int iterations = 0;
  bool converged = false;
  double gradient_norm = 0.0;
  double threshold = 0.0;  ///< the convergence bound it was measured against
};

class ImplicitTickSolver {
 public:
  ImplicitTickSolver(const BodyPotential& potential, ImplicitSolverSettings settings)
      : potential_(potential),
        settings_(settings),
        cholesky_(LinearSolverKind::Cholesky, 0.0, 1,
                  settings.factorization == TickFactorization::VertexBlock) {}

  /// Minimises E from the initial guess in `x` (prescribed entries already set);
  /// returns the iterate with the least energy found.
  TickReport solve(const TickProblem& problem, Eigen::VectorXd& x);
  const ImplicitSolverSettings& settings() const { return settings_; }
  /// Changes β for the solves that follow (PhantomSource's energy guard damps one tick):
  /// D is assembled anew at the next solve's q̃ and the factor, which holds D/h, made again.
  void set_rayleigh_beta(double beta) {
    if (beta == settings_.rayleigh_beta) return;
    settings_.rayleigh_beta = beta;
    damping_.resize(0, 0);
    have_factor_ = false;
  }
  /// out = q̃ + θ (x − q̃): where a tick evaluates V (θ is ½ or 1). The midpoint is
  /// formed as (q̃ + x)/2 so that θ = ½ is bit for bit the paper's rule as it was before
  /// θ existed (the contact demos are sensitive to round-off).
  static void tick_point(const Eigen::VectorXd& q_tilde, const Eigen::VectorXd& x, double theta,
                         Eigen::VectorXd& out) {
    if (theta == 1.0)
      out = x;
    else
      out = 0.5 * (q_tilde + x);
  }
  /// The set of unknowns changed (a pinned vertex was released): the next solve
  /// refactors its preconditioner (the sparsity pattern is unchanged: prescribed rows
  /// are zeroed in place, not removed).
  void invalidate_factor() { have_factor_ = false; }
  /// Sparse Cholesky factorisations so far (Newton: one per iteration; NCG: refreshes).
  std::uint64_t factorizations() const { return factorizations_; }
  /// ∇V at tick_point(q̃, x) if the last solve took it there (it does at the iterate
  /// it accepts last), else null: the tick's closing ∇V need not be evaluated again.
  const Eigen::VectorXd* potential_gradient_at(const Eigen::VectorXd& x) const {
    const bool here = gradient_cached_ && gradient_point_.size() == x.size() &&
                      (gradient_point_.array() == x.array()).all();
    return here ? &grad_at_point_ : nullptr;
  }

 private:
  double energy(const TickProblem& p, const Eigen::VectorXd& x);
  /// ∇E with prescribed entries zeroed.
  void gradient(const TickProblem& p, const Eigen::VectorXd& x, Eigen::VectorXd& g);
  /// Factors M/h² + θ² H_V(q̃ + θ (x − q̃)) (+ D/h, + the planes pushing at x), prescribed
  /// rows and columns replaced by the identity (scaled by m/h²).
  bool factor(const TickProblem& p, const Eigen::VectorXd& x);
  /// out = (the factored matrix)⁻¹ b, by whichever factorisation the settings chose.
  void apply_inverse(const Eigen::VectorXd& b, Eigen::VectorXd& out);
  /// Backtracking Armijo along d from x with energy e; returns the step taken (0:
  /// none) and leaves x and e at the accepted point.
  double line_search(const TickProblem& p, Eigen::VectorXd& x, const Eigen::VectorXd& g,
                     const Eigen::VectorXd& d, double& e);

  /// δᵀ D δ / (2h) with δ = x − q̃ (0 without damping); D δ / h into `g` if given.
  double damping_term(const TickProblem& p, const Eigen::VectorXd& x, Eigen::VectorXd* g);
  void evaluation_point(const TickProblem& p, const Eigen::VectorXd& x) {
    tick_point(p.q_tilde, x, settings_.theta, mid_);
  }

  const BodyPotential& potential_;
  ImplicitSolverSettings settings_;
  BodyPotential::Sparse hessian_, damping_;
  SparseSpdSolver cholesky_;  ///< sparse Cholesky, by vertex blocks or scalar (settings)
  Eigen::Index analyzed_nonzeros_ = -1;  ///< hessian_'s when the factor was analysed
  bool analyzed_extended_ = false;       ///< that pattern held plane entries (Newton)
  bool have_factor_ = false;
  int ticks_since_refresh_ = 0;
  std::uint64_t factorizations_ = 0;
  Eigen::VectorXd mid_, grad_v_, trial_, delta_, damping_force_;
  Eigen::VectorXd gradient_point_, grad_at_point_;  ///< ∇V at tick_point(gradient_point_)
  bool gradient_cached_ = false;                   ///< for this solve's q̃ and V
  Eigen::VectorXd damping_at_;   ///< the x that delta_, damping_force_ and damping_value_ are for
  double damping_value_ = 0.0;
  bool damping_cached_ = false;  ///< they are for damping_at_ with this solve's q̃, h and D
};

}  // namespace clockwork
