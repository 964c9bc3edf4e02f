#pragma once
/// The nonlinear-solver pieces the implicit schemes share (issue 43; docs/solvers.md):
/// the backtracking (Armijo) line search, the convergence test, the global
/// definiteness fix, the Polak–Ribière+ direction of preconditioned nonlinear CG and
/// preconditioned CG with an optional filter. The direct solves of the Newton systems
/// are linear_solvers.hpp's (and block_cholesky.hpp's); its iterative ones run pcg().
///
/// Who takes what, and what stays the scheme's own (docs/solvers.md has the table):
/// - Phantom ticks (integrators/phantom/implicit_tick.cpp): the Armijo line search,
///   the convergence test (relative gradient norm, negligible step), the NCG direction.
///   Their own: the tick energy and its caches, the factorisation schedule (Newton
///   every iteration; NCG's preconditioner refreshed every `refresh` ticks and on a
///   stall) and the Hessian with its plane blocks; the definiteness fix is the
///   energy's per-element PSD projection (BodyPotential::hessian(…, project_psd)).
/// - Backward Euler (integrators/implicit/backward_euler.cpp), which Zhao's coarse
///   step and Schroeder's fully-implicit update call as their energy safeguard: the
///   Armijo line search, the residual-norm backtracking of damping at the step's end,
///   the convergence test, the global regularisation and, through SparseSpdSolver,
///   pcg() under Eigen's rule. Its own: the objective, the reduced (free-unknown)
///   system, inexact Newton's CG tolerance and warm start, the constant-K reuse of
///   linear FEM, the linearised single step.
/// - Schroeder et al.'s updates (integrators/schroeder/schroeder_scheme.cpp): pcg()
///   with a filter, under its rule. Their own: the operator (Π_ε + Π_ε B̃ Π_ε in
///   mass-scaled unknowns), the Jacobi diagonal and the filter, which is the §6 contact
///   constraint ([BW98] §5.3: a contact's normal component, or a sticking particle's
///   whole Δv, prescribed).
/// - Zhao's multi-rate step (integrators/zhao/): no iteration of its own — eq. 23 is one
///   linear system solved by Schur complement and vertex-block Cholesky; its energy
///   safeguard re-solves by backward Euler (solid_safeguard.cpp), hence this module.
///
/// Every function here keeps the arithmetic of the code it replaced term for term
/// (demos byte-identical, docs/solvers.md), which is why, e.g., the convergence scale is
/// a sum of part norms given in the caller's order, and why PCG has two stopping rules.
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

namespace clockwork {

// ---------------------------------------------------------------- line search

/// The smallest step a backtracking line search tries: t = 1, ½, ¼, … while t > this.
inline constexpr double kMinLineSearchStep = 1e-10;
/// Armijo's sufficient-decrease constant c: E(x + t d) ≤ E(x) + c t ∇Eᵀd.
inline constexpr double kArmijoConstant = 1e-4;

/// Backtracking: the first t of 1, ½, ¼, … (t > kMinLineSearchStep) for which
/// accept(t) holds, 0 if none does. accept(t) evaluates the trial x + t d itself and
/// keeps it where the caller takes it from when it returns true.
template <class Accept>
double backtrack(Accept&& accept) {
  for (double t = 1.0; t > kMinLineSearchStep; t *= 0.5)
    if (accept(t)) return t;
  return 0.0;
}

struct LineSearchResult {
  bool descent = false;  ///< the slope ∇Eᵀd was negative (else nothing was tried)
  double step = 0.0;     ///< the accepted t, 0: none
  double energy = 0.0;   ///< E at the accepted trial
  bool accepted() const { return step > 0.0; }
};

/// Backtracking Armijo line search (lecture-implicit-euler-methods.md): from energy e0
/// along a direction of slope ∇Eᵀd, accepts the first t with
///   E(x + t d) ≤ e0 + c t slope + noise,
/// `noise` the rounding of the energy's terms (energies are sums of large terms; a
/// difference below it is not a change): the line search never accepts an energy
/// above e0 + noise. `energy_at(t)` returns E at the trial x + t d and keeps the trial
/// (the caller swaps it in when accepted). A direction that does not descend is not
/// searched.
template <class EnergyAt>
LineSearchResult armijo_line_search(double e0, double slope, double noise, EnergyAt&& energy_at) {
  LineSearchResult r;
  r.descent = slope < 0.0;
  if (!r.descent) return r;
  r.step = backtrack([&](double t) {
    const double e = energy_at(t);
    if (!(e <= e0 + kArmijoConstant * t * slope + noise)) return false;
    r.energy = e;
    return true;
  });
  return r;
}

// ---------------------------------------------------------------- convergence test

/// The convergence test of the Newton-type solvers. The gradient of an implicit step's
/// objective is a sum of parts (inertia, elastic force, external force, damping,
/// contact) that are large and cancel at the solution; its size is measured against
/// their sum of norms at the start,
///   ||∇E|| ≤ tolerance · Σ_k ||part_k||,
/// a relative gradient norm that does not depend on units or on how far the step is.
/// The other stop is a step below the rounding of the iterate (step_negligible): on
/// stiff bodies the gradient's floating-point floor can lie above the relative bound.
struct ConvergenceTest {
  double threshold = 0.0;  ///< tolerance · scale

  ConvergenceTest() = default;
  ConvergenceTest(double tolerance, double scale) : threshold(tolerance * scale) {}
  bool met(double gradient_norm) const { return gradient_norm <= threshold; }
};

/// Σ_k part_norms[k], summed in the order given (the scale of ConvergenceTest).
inline double gradient_scale(std::initializer_list<double> part_norms) {
  double sum = 0.0;
  for (const double p : part_norms) sum += p;
  return sum;
}

/// Whether a step of largest entry `step_inf` is below the rounding of an iterate of
/// largest entry `x_inf`: step_inf ≤ relative · (offset + x_inf). Such a step cannot
/// change the iterate; the gradient is at its floating-point floor. `offset` sets an
/// absolute floor where the iterate can be near 0 (positions in metres: 1).
inline bool step_negligible(double step_inf, double x_inf, double relative, double offset = 0.0) {
  return step_inf <= relative * (offset + x_inf);
}

// ---------------------------------------------------------------- definiteness fix

/// The value index of each diagonal entry of the compressed square matrix H (−1 where
/// the pattern has none): where regularize_until_factored adds μ.
std::vector<int> diagonal_positions(const Eigen::SparseMatrix<double>& H);

struct Regularization {
  bool factored = false;
  double mu = 0.0;     ///< the μ added to the diagonal (0: H itself factored)
  int increases = 0;   ///< how many times μ was raised
};

/// Global regularisation, the definiteness fix of lecture-implicit-euler-methods.md
/// ("Definiteness-fix, Opt 1"): factor H; while try_factor(H) fails, H + μ I with
/// μ = 10⁻⁶ max_i |H_ii|, then ten times more, until it succeeds or μ would exceed
/// 10³⁰ max_i |H_ii| (also a zero or NaN diagonal: no μ helps). H is left with μ on its
/// diagonal (`diagonal` from diagonal_positions, every entry present). A successful
/// factor makes the Newton direction −(H + μI)⁻¹ g a descent direction. The local fix,
/// each element's Hessian projected to PSD, belongs to the energies
/// (BodyPotential::hessian, TetFemModel::hessian with project_psd).
template <class TryFactor>
Regularization regularize_until_factored(Eigen::SparseMatrix<double>& H, std::span<const int> diagonal,
                                         TryFactor&& try_factor) {
  double* values = H.valuePtr();
  double largest = 0.0;
  for (const int k : diagonal) largest = std::max(largest, std::abs(values[k]));
  Regularization r;
  while (!(r.factored = try_factor(static_cast<const Eigen::SparseMatrix<double>&>(H)))) {
    const double next = r.mu == 0.0 ? 1e-6 * largest : 10.0 * r.mu;
    if (!(next > 0.0 && next <= 1e30 * largest)) break;
    for (const int k : diagonal) values[k] += next - r.mu;
    r.mu = next;
    ++r.increases;
  }
  return r;
}

// ---------------------------------------------------------------- nonlinear CG

/// The previous iteration's preconditioned gradient and gradient, for NCG's β.
struct NcgHistory {
  Eigen::VectorXd z_old, g_old;
};

/// Preconditioned nonlinear CG's direction, Polak–Ribière+ (lecture-implicit-euler-
/// methods.md; phantom-mesh paper §4): z = P⁻¹ g the preconditioned gradient;
///   β = max(0, gᵀ(z − z_old) / g_oldᵀ z_old),  d ← −z + β d,
/// restarted (d = −z) when `restart` (the first iteration, a new preconditioner) or
/// when that d does not descend (gᵀd ≥ 0). Records z, g as the next call's history.
inline void ncg_direction(const Eigen::VectorXd& g, const Eigen::VectorXd& z, bool restart,
                          NcgHistory& history, Eigen::VectorXd& d) {
  if (restart) {
    d = -z;
  } else {
    const double beta = std::max(0.0, g.dot(z - history.z_old) / history.g_old.dot(history.z_old));
    d = -z + beta * d;
    if (g.dot(d) >= 0.0) d = -z;  // not a descent direction: restart
  }
  history.z_old = z;
  history.g_old = g;
}

// ---------------------------------------------------------------- PCG

/// The vectors of pcg() (kept by the caller: its hot loop allocates nothing once they
/// have their size).
struct PcgWorkspace {
  Eigen::VectorXd r, z, p, q;
};

/// How pcg() decides it is done and what it does at a breakdown. The two rules round
/// differently at the last bit; each is the arithmetic of the solver it replaced, so
/// that the trajectories of the scheme that uses it are unchanged (docs/solvers.md).
enum class PcgRule {
  /// Baraff & Witkin's modified PCG as Schroeder et al.'s updates run it: done when
  /// ||S r|| ≤ tolerance · ||b||; stops at a direction of non-positive curvature
  /// pᵀ S A p ≤ 0 (A not SPD on S's range), before moving x along it.
  Filtered,
  /// Eigen's ConjugateGradient (Eigen/src/IterativeLinearSolvers/ConjugateGradient.h),
  /// as backward Euler's iterative solves ran it: b = 0 gives x = 0; done when
  /// ||r||² < max(tolerance² ||b||², DBL_MIN); no curvature test (with
  /// `definiteness: "none"` an indefinite A runs on, as it did).
  Eigen,
};

struct PcgSettings {
  double tolerance = 1e-8;    ///< on the relative residual ||S r|| / ||b||
  int max_iterations = 1000;  ///< products A p at most
  PcgRule rule = PcgRule::Filtered;
};

struct PcgReport {
  /// Products A p taken. (Eigen's ConjugateGradient::iterations() does not count the
  /// product of the iteration that converged: one less when `converged` and > 0.)
  int iterations = 0;
  double residual_norm = 0.0;  ///< ||S (b − A x)|| at the end, by the recurrence
  bool converged = false;      ///< the rule's test met
};

/// Preconditioned conjugate gradients on A x = b from x's value (the warm start; set
/// x = 0 for none), with a filter S (Baraff & Witkin 1998 §5.3, "modified PCG"): the
/// residual, the preconditioned residual and each product A p are filtered, so x
/// changes only in S's range and the components S removes keep their starting values
/// (constraints the caller prescribes there); S = identity (a filter that does
/// nothing) is plain PCG. With r₀ = S(b − A x₀), z = S P⁻¹ r, p₀ = z₀:
///   α = rᵀz / pᵀ S A p,  x += α p,  r −= α S A p,  β = r_newᵀz_new / rᵀz,  p = z + β p,
/// until the rule's test (PcgRule) holds or after `max_iterations` products.
/// apply_a(in, out): out = A in; precondition(r, z): z = P⁻¹ r (P SPD); filter(y):
/// y ← S y in place. The residual is the recurrence's, not recomputed (as Eigen's).
/// Both rules' arithmetic is Eigen's term for term: the same expressions in the same
/// order (r.squaredNorm(), r.dot(z), p.dot(q), x += α p, r −= α q, p = z + β p), so a
/// caller whose apply_a is Eigen's product (for ConjugateGradient<…, Lower|Upper> on
/// column-major storage, Aᵀ p) gets ConjugateGradient's x to the last bit.
template <class ApplyA, class Precondition, class Filter>
PcgReport pcg(ApplyA&& apply_a, Precondition&& precondition, Filter&& filter,
              const Eigen::VectorXd& b, Eigen::VectorXd& x, const PcgSettings& settings,
              PcgWorkspace& w) {
  PcgReport report;
  const bool eigen = settings.rule == PcgRule::Eigen;
  apply_a(x, w.q);
  w.r = b - w.q;
  filter(w.r);
  const double b2 = b.squaredNorm();
  if (eigen && b2 == 0.0) {
    x.setZero();
    report.converged = true;
    return report;
  }
  // The rule's test on ||S r||²: Eigen's compares squares (the floor keeps a tiny ||b||
  // from asking for a residual below the smallest normal number); Filtered compares
  // norms, ||v|| = √(||v||²) as Eigen's norm() takes it.
  const double tol = settings.tolerance;
  const double threshold =
      eigen ? std::max(tol * tol * b2, std::numeric_limits<double>::min()) : tol * std::sqrt(b2);
  const auto done = [&](double r2) { return eigen ? r2 < threshold : std::sqrt(r2) <= threshold; };
  double r2 = w.r.squaredNorm();
  if (!done(r2)) {
    precondition(w.r, w.z);
    filter(w.z);
    w.p = w.z;
    double rz = w.r.dot(w.z);
    while (report.iterations < settings.max_iterations) {
      ++report.iterations;
      apply_a(w.p, w.q);
      filter(w.q);
      const double pq = w.p.dot(w.q);
      if (!eigen && !(pq > 0.0)) break;
      const double alpha = rz / pq;
      x += alpha * w.p;
      w.r -= alpha * w.q;
      r2 = w.r.squaredNorm();
      if (done(r2)) break;
      precondition(w.r, w.z);
      filter(w.z);
      const double rz_new = w.r.dot(w.z);
      const double beta = rz_new / rz;
      w.p = w.z + beta * w.p;
      rz = rz_new;
    }
  }
  report.residual_norm = std::sqrt(r2);
  report.converged = done(r2);
  return report;
}

}  // namespace clockwork
