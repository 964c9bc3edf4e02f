// The whole-step check of the fully-implicit scheme (docs/schroeder.md, decision 16;
// issue 41).
//
// §3.2's step drifts every particle along a straight line, xⁿ⁺¹ = xⁿ + Δt v^{n+½}. A body
// turning θ = ω Δt in a step is stretched by that drift: with no centripetal pull in
// v^{n+½} (the linearised position update about a body at rest has none: K annihilates
// infinitesimal rotations) every radius grows by √(1 + θ²), with the converged update's
// pull by √(1 + θ²/2 + θ⁴/16). That stretch is elastic energy the velocity update
// cannot take back (xⁿ⁺¹ is set before it): a soft bar (E = 0.2 MPa) spinning at
// 3.9 rad/s, dropped at 1/24 s, held 0.10 J of it after its first step, +3.65 % of its
// initial energy, in free flight. Decision 15's checks of the two updates did not see
// it: each update, read as a backward-Euler step of τ, lands at x + τ v', stretched by
// (θ/2)² only, and backward Euler's dissipation of gravity over τ (½ τ² |g|²_M) hides
// that (the whole §3.2 step is exact in free fall: no such dissipation).
//
// So the check is the whole step's balance (xⁿ, vⁿ) → (xⁿ⁺¹, vⁿ⁺¹) (step_energy_balance:
// kinetic + elastic against the start, less gravity's work along the drift), which
// needs vⁿ⁺¹: the velocity update the next event would take is solved here, at the end
// of the position update, and kept for that event (take_prepared_velocity_update: used
// when the kernel's xⁿ⁺¹ and vⁿ are bit for bit those it was solved from, i.e. nothing
// else acted in between; otherwise the event solves as before). So a step that passes
// costs nothing more and is unchanged bit for bit. A step that gained is taken as k
// §3.2 steps of Δt/k from (xⁿ, vⁿ), k = 2, 4, … 16, the first whose balance holds (or
// the last): each turns θ/k, stretching k² less. The position update's w is set to
// land where they end, w = (x_k − xⁿ)/Δt, and their end velocity is handed to the
// velocity update (with the kicks other bodies gave in between). Not checked: steps
// with §6 contacts or particles that collided (the collider's work is not in the
// balance), bodies with moving prescribed vertices, split steps that would end a
// particle on or in a collider (the printed step is kept), the semi-implicit and
// asynchronous schemes (their substep is set by stability: θ is small).
#include <algorithm>

#include "integrators/implicit/energy_safeguard.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

namespace {
constexpr int kMaxSplit = 16;  // steps of Δt/16 turn θ/16: the stretch 256× smaller
}  // namespace

void SchroederStepper::plain_step(Vector& x, Vector& v, double tau) {
  const Coefficients cp = update_coefficients(true, true, tau);
  solve(x, v, cp, dv_);
  safeguard_update(x, v, cp, 0.5 * tau);
  x += tau * (v + dv_);
  const Coefficients cv = update_coefficients(false, true, tau);
  solve(x, v, cv, dv_);
  safeguard_update(x, v, cv, tau);
  v += dv_;
}

void SchroederStepper::check_whole_step(const Vector& x, const Vector& v, Vector& w) {
  prepared_ = Prepared::None;
  if (!settings_.split_gaining_steps || settings_.scheme != SchroederScheme::FullyImplicit ||
      !contacts_.empty() ||
      any_colliding())
    return;
  for (std::size_t a = 0; a < fixed_.size(); ++a)
    if (fixed_[a] && !v.segment<3>(3 * static_cast<Eigen::Index>(a)).isZero(0.0)) return;
  ++counters_.whole_step_checks;
  const std::vector<double>& mass = model_.lumped_mass();
  // The velocity update the next event takes (velocity_update without contacts).
  const Coefficients cv = update_coefficients(false, true, dt_);
  trial_x1_ = x + dt_ * w;
  trial_v_ = v;
  solve(trial_x1_, v, cv, dv_);
  safeguard_update(trial_x1_, v, cv, dt_);
  trial_dv_ = dv_;
  trial_ext_ = solve_ext_;
  prepared_ = Prepared::Trial;
  v_end_ = v + trial_dv_;
  if (!step_energy_balance(model_, mass, x, v, trial_x1_, v_end_, f_ext_, dt_, {}).gained()) return;

  int used = 1;
  for (int k = 2; k <= kMaxSplit; k *= 2) {
    used = k;
    split_x_ = x;
    split_v_ = v;
    const double tau = dt_ / k;
    for (int i = 0; i < k; ++i) plain_step(split_x_, split_v_, tau);
    if (!step_energy_balance(model_, mass, x, v, split_x_, split_v_, f_ext_, dt_, {}).gained()) break;
  }
  for (std::size_t a = 0; a < fixed_.size(); ++a)
    for (const StaticCollider& body : settings_.colliders)
      if (body.closest(split_x_.segment<3>(3 * static_cast<Eigen::Index>(a))).distance < kOnSurface)
        return;  // the printed step, its velocity update solved ahead
  ++counters_.split_steps;
  counters_.max_split = std::max(counters_.max_split, used);
  w = (split_x_ - x) / dt_;
  half_dv_ = w - v;  // the next event's account (keep_angular_momentum)
  prepared_ = Prepared::Split;
}

bool SchroederStepper::take_prepared_velocity_update(const Vector& x1, const Vector& v,
                                                     const Coefficients& c) {
  const Prepared p = prepared_;
  prepared_ = Prepared::None;
  if (p == Prepared::None ||
      any_colliding())
    return false;
  if (p == Prepared::Trial) {
    if (x1 != trial_x1_ || v != trial_v_) return false;
    dv_ = trial_dv_;
    solve_ext_ = trial_ext_;
    return true;
  }
  // The split steps' end velocity, with the kicks other bodies gave since (v − vⁿ).
  dv_ = split_v_ - trial_v_;
  record_external(v, c, dv_);
  return true;
}

}  // namespace clockwork
