// The energy safeguard of the fully-implicit updates (docs/schroeder.md, decision 15;
// issue 41), the Schroeder counterpart of the solids' (energy_safeguard.hpp,
// integrators/implicit/solid_safeguard.cpp).
//
// Each update of §3.2 is an implicit step of τ (τ = Δt/2 for the position update from
// (xⁿ, vⁿ), τ = Δt for the velocity update from (xⁿ⁺¹, vⁿ)):
//   M (v' − v) = τ (f(x + τ v') − D v' + f_g),
// solved in the paper, and by SchroederStepper::solve, as one linear system with
// f(x + τ v') ≈ f(x) − τ K(x) v' ([BW98]). That is exactly backward Euler's step of τ
// from (x, v) — its landing state (x + τ v', v') — with D = α_R M + β_R K̂(x), the
// damping backward Euler holds over its step (RayleighDamping::ProjectedAtStart), and
// the linear solve is that step's first Newton iteration. A fast-spinning body leaves
// the linearisation behind: the landing positions x + τ v' are stretched along the
// rotation's tangents, and the update creates elastic energy (a free bar at 20 rad/s,
// 10 ms frames: 0.9 J → 1.7e4 J). The converged step minimises an objective
// (backward_euler.hpp) and so never gains energy for convex elements.
//
// So the check is that step's balance (step_energy_balance: kinetic + elastic at the
// landing state against the start, less gravity's work), and an update that gained
// is re-solved by Newton with line search on the same equations (BackwardEuler), not
// halved into substeps: halving would change the scheme (two updates of τ/2 are not
// §3.2's update of τ), while Newton only removes the linearisation's error. Updates
// that pass are unchanged bit for bit.
//
// Not checked: updates with §6 contacts as constraints (their collider's work is not
// in the balance, and backward Euler has no such constraints), and bodies whose
// prescribed vertices move (their work is not in it either). The semi-implicit and
// asynchronous schemes are not checked: their E forces are explicit (nothing to
// converge), and the coupled step's α scaling has no objective.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "integrators/implicit/energy_safeguard.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

void SchroederStepper::safeguard_update(const Vector& x, const Vector& v, const Coefficients& c,
                                        double tau) {
  if (!settings_.energy_safeguard || settings_.scheme != SchroederScheme::FullyImplicit ||
      !contacts_.empty())
    return;
  for (std::size_t a = 0; a < fixed_.size(); ++a)
    if (fixed_[a] && !v.segment<3>(3 * static_cast<Eigen::Index>(a)).isZero(0.0)) return;
  ++counters_.safeguard_checks;
  const std::vector<double>& mass = model_.lumped_mass();
  v_end_ = v + dv_;
  x_end_ = x + tau * v_end_;
  if (!step_energy_balance(model_, mass, x, v, x_end_, v_end_, f_ext_, tau, {}).gained()) return;

  if (!newton_) {
    BackwardEulerSettings s;  // Newton with line search, Cholesky, converged to 1e-9
    s.rayleigh_alpha = settings_.rayleigh_alpha;
    s.rayleigh_beta = settings_.rayleigh_beta;
    s.fix = DefinitenessFix::LocalClamp;  // K̂: the linear solve's projected stiffness
    s.damping = RayleighDamping::ProjectedAtStart;
    s.energy_safeguard = false;
    newton_ = std::make_unique<BackwardEuler>(model_, s);
  }
  x_end_ = x;
  v_end_ = v;
  const BackwardEulerReport r = newton_->step(tau, x_end_, v_end_, f_ext_, fixed_);
  counters_.safeguard_newton_iterations += static_cast<std::uint64_t>(r.newton_iterations);
  if (r.factorization_failed) return;  // (LocalClamp factorises M + PSD terms: not expected)
  ++counters_.safeguarded;
  if (!r.converged && counters_.safeguard_unconverged++ == 0)
    spdlog::warn("fully-implicit energy safeguard: Newton not converged after {} iterations (|grad| "
                 "{:.3g} against {:.3g}); the last iterate is used",
                 r.newton_iterations, r.gradient_norm, r.threshold);
  dv_ = v_end_ - v;
  record_external(v, c, dv_);
}

}  // namespace clockwork
