#pragma once
/// Synchronous implicit (backward) Euler for a TetFemModel — the baseline of Zhao et
/// al. and Schroeder et al. In the step's displacement u = x − x_n (unknowns: the free
/// vertices; prescribed vertices have u = h v_n), v_{n+1} = u / h, x_{n+1} = x_n + u,
/// it solves
///
///   M (v_{n+1} − v_n) = h (f_ext − f_int(x_{n+1}) − D v_{n+1})      (Zhao eq. 1–3)
///
/// with Rayleigh damping in one of two forms (`damping`):
/// - ProjectedAtStart (default): D = α M + β K̂(x_n), K̂ the stiffness at the step's
///   start with each element block projected to PSD, held over the step. D is PSD, so
///   the damping force never does positive work (h v_{n+1}ᵀ D v_{n+1} ≥ 0), and the step
///   is the minimisation (lecture-implicit-euler-methods.md, "Reformulating the
///   Implicit Euler Problem")
///     u* = argmin_u ½ ||u − h v_n||²_M + h² (E(x_n + u) − f_extᵀ u) + (h/2) ||u||²_D,
///   whose descent guarantees make the converged step never gain energy (convex E).
/// - TangentAtEnd: D(x_{n+1}) = α M + β K(x_{n+1}), the unprojected tangent at the
///   step's end — the textbook form, and VegaFEM's ImplicitBackwardEulerSparse. Not a
///   gradient, so no objective: Newton on the residual with the Jacobian (1 + hα) M +
///   (hβ + h²) K(x) (without the third-derivative term β (∂K/∂x · du) v, as Vega), and
///   backtracking on the residual's norm. Where K(x_{n+1}) is indefinite (corotational
///   elements under compression) β vᵀ K v can be negative: damping can add energy.
/// For linear FEM both are α M + β K (K constant and PSD).
///
/// Newton's method from u = u₀ (the prescribed vertices moved) with, for the default
/// damping, backtracking (Armijo) line search, a definiteness fix of the Hessian's K —
/// local eigenvalue clamping of the element Hessians (`LocalClamp`, default), global
/// regularisation (add μI, μ from 1e-6 × the largest diagonal entry, ×10 until the
/// sparse Cholesky factorisation succeeds), or none: the exact tangent — and a choice
/// of linear solver: sparse Cholesky, CG, or PCG with a Jacobi or incomplete-Cholesky
/// preconditioner. (Global regularisation tests definiteness with the sparse Cholesky
/// whatever the linear solver; the iterative solvers then solve the regularised
/// system; the iterative ones run as inexact Newton, see cg_tolerance, and the
/// incomplete-Cholesky preconditioner is refreshed at each step's first iteration.)
/// Linear FEM's Hessian is constant: assembled and factorised once per h (and set of
/// prescribed vertices), reused by every later step.
///
/// `max_newton = 1` takes the full first Newton step without line search, the
/// linearised step (M + hD + h²K) Δv = h (f_ext − f_int − D v_n − h K v_n) with K,
/// f_int and D at x_n (with the prescribed vertices already moved, if they move), where
///   K = K̂(x_n) (element-projected) with `LocalClamp`, K(x_n) + μI with
///       `GlobalRegularization`, the exact K(x_n) with `None`;
///   D = α M + β K̂(x_n) with ProjectedAtStart, α M + β K with TangentAtEnd (the same K
///       as the stiffness term).
/// The energy safeguard (docs/backward-euler.md "Linearised steps and the energy safeguard"):
/// one linear solve cannot follow a stiff body turning a large angle in one step, and
/// its landing state can hold more energy than its start. After the linearised step
/// (nothing prescribed moving) the step's energy balance is taken from state
/// (energy_safeguard.hpp); if it gained more than 1e-6 of its scale, or landed behind
/// planes it did not hold whose springs would store more than that
/// (unheld_plane_energy), the step is solved again as a Newton step would be — planes one-sided, line search, up to 50 more
/// iterations — from the better of the linearised iterate and u₀ (report.safeguarded).
/// Steps that pass the check are unchanged, bit for bit.
///
/// Zhao eq. (5) as printed (exact tangent, D = α M + β K(x_n)) is `max_newton = 1`,
/// `fix = None`, `damping = TangentAtEnd`; the default (LocalClamp, ProjectedAtStart)
/// solves it with the projected tangent, which differs from eq. 5 wherever an
/// element's tangent is indefinite (corotational FEM; the same step as Zhao's
/// multi-rate solver, multirate_solver.hpp). For linear FEM every variant is eq. 5,
/// and its exact minimiser.
///
/// Contact (DESIGN §7, docs/backward-euler.md "Contact inside the step"): one-sided planes on
/// the step's landing positions (tick_plane.hpp) add their penalties to the energy,
/// h² Σ P(x_n + u) in g, so the step stops an approach at its own rate instead of
/// receiving the contact as explicit impulses between steps. The linearised step
/// (max_newton = 1) cannot switch a plane on mid-solve: the planes behind which its
/// prediction x_n + h v_n, or x_n, lands are held as two-sided springs for the step.
/// A body with no prescribed vertex then has its displacement shifted rigidly so that
/// linear momentum is exact whatever the solver's tolerance:
///   Σ_a m_a ((1 + hα) u_a − h v_a) = h² Σ_a (f_ext + f_planes(x_n + u))_a
/// (the elastic forces and β K u sum to zero; a 3 × 3 solve, the planes being linear
/// in u where they push).
///
/// Convergence: ||∇g||₂ (the residual) over the free unknowns ≤ tolerance × the sum of
/// the norms of its four parts at the start u₀, ||M (u₀ − h v_n)|| + h² ||∇E(x_n + u₀)||
/// + h² ||f_ext|| + h ||D u₀|| (free rows) — the scale of the forces in the step.
#include <Eigen/Sparse>
#include <memory>
#include <span>
#include <vector>

#include "integrators/solvers/linear_solvers.hpp"
#include "integrators/fem/tet_fem.hpp"
#include "integrators/energy/tick_plane.hpp"

namespace clockwork {

enum class DefinitenessFix { None, GlobalRegularization, LocalClamp };

/// Rayleigh damping's stiffness (above): K̂(x_n) projected and held, or K(x_{n+1}).
enum class RayleighDamping { ProjectedAtStart, TangentAtEnd };

struct BackwardEulerSettings {
  LinearSolverKind linear = LinearSolverKind::Cholesky;
  DefinitenessFix fix = DefinitenessFix::LocalClamp;
  int max_newton = 50;          ///< 1: the linearised step (Zhao eq. 5)
  double tolerance = 1e-9;      ///< on ||∇g|| relative to the scale above
  /// Relative residual of the iterative solvers: the linearised step's (max_newton = 1);
  /// Newton's iterations ask for less where their convergence test needs less
  /// (inexact Newton, backward_euler.cpp), never for less than this.
  double cg_tolerance = 1e-12;
  int cg_max_iterations = 10000;
  double rayleigh_alpha = 0.0;  ///< 1/s
  double rayleigh_beta = 0.0;   ///< s
  RayleighDamping damping = RayleighDamping::ProjectedAtStart;
  /// The linearised step's energy safeguard (above; energy_safeguard.hpp). Not a scene
  /// field: off only in tests that show what it prevents.
  bool energy_safeguard = true;
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
  /// The linearised step gained energy and was re-solved by Newton (energy safeguard).
  bool safeguarded = false;
  double gradient_norm = 0.0;  ///< ||∇g|| over the free unknowns at the returned state
  double threshold = 0.0;      ///< the convergence bound it was measured against
  /// Newton stopped short of the bound because no step along its direction lowered the
  /// objective any more, or the step fell below the rounding of the displacement: the
  /// gradient is at the floating-point floor of this step's objective.
  bool at_rounding_floor = false;
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
  /// `planes` (local vertices) enter the step's energy (above); the linearised step
  /// may set their `two_sided` flag, hence the mutable span.
  BackwardEulerReport step(double h, Vector& x, Vector& v, const Vector& f_ext,
                           const std::vector<bool>& fixed, std::span<TickPlane> planes = {});

  const BackwardEulerSettings& settings() const { return settings_; }

 private:
  struct Workspace;  // buffers, patterns and factorisations reused across steps
  /// Assembles the Hessian at the iterate x_n + u and factorises it (with the
  /// definiteness fix); false if the factorisation fails.
  bool factor_hessian(double h, const Vector& x_n, bool moved, BackwardEulerReport& report);
  /// Adds h² k w_i w_j n nᵀ of the planes pushing at x_n + u to the reduced Hessian
  /// (blocks outside its pattern are left out); true if any plane pushes.
  bool add_plane_hessian(double h, const Vector& x_n);
  /// The rigid shift of u that makes the step's linear momentum exact (above).
  void shift_to_exact_momentum(double h, const Vector& x_n, const Vector& v_n, const Vector& f_ext);
  /// d_free = H⁻¹ g_free (g_free holds −∇g); returns the CG iterations taken.
  int solve_newton_system(double h, double g_norm, double scale, const BackwardEulerReport& report);

  const TetFemModel& model_;
  BackwardEulerSettings settings_;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace clockwork
