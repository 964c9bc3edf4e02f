/// SolidSource's energy safeguard (docs/backward-euler.md "Linearised steps and the energy
/// safeguard", "Angular momentum and energy"; energy_safeguard.hpp): Zhao's coarse step
/// checked and re-solved, and the share of the angular-momentum rotation
/// (keep_angular_momentum) the body's energy allows. Kept apart from solid_source.cpp:
/// both read the step as the kernel will get it and replace parts of it; they do not
/// change how it is made or applied. Backward Euler's linearised step (max_newton 1)
/// has its own check inside BackwardEuler::step, which re-solves from the linearised
/// iterate; the rotation after either is cut where it would create energy, so no
/// check is needed after it.
///
/// Why the re-solve is a backward-Euler step of h_L and not Newton on the multi-rate
/// system: Zhao's coarse system (eq. 23) is the linearisation at x_n of m substeps
/// whose stiffness terms are all multiples of the one K(x_n) (multirate_solver.hpp);
/// iterating it would mean a nonlinear residual over every substep of every region,
/// re-linearised, which the Schur path cannot express. The converged backward-Euler
/// step is the same implicit step at h_L that the multi-rate step approximates where
/// every region has m = 1; it minimises an objective, so it never gains energy (convex
/// elements), and shift_to_exact_momentum plus keep_angular_momentum(_multirate) keep
/// both momenta exact. The regions then ride that step at one velocity — their
/// stiff tets are integrated at h_L for this large step, stably — and the fine events
/// still run: their planned increments are zero, and an outside impulse on a region is
/// answered by substep_change as for any plan, so the S–L exchange stays the solver's.
#include "integrators/implicit/energy_safeguard.hpp"
#include "integrators/implicit/solid_source.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace clockwork {

void SolidSource::set_energy_safeguard(bool on) {
  energy_safeguard_ = on;
  if (euler_ && euler_->settings().energy_safeguard != on) {
    BackwardEulerSettings s = euler_->settings();
    s.energy_safeguard = on;
    euler_ = std::make_unique<BackwardEuler>(*model_, s);
  }
}

namespace {
/// Whether every prescribed vertex is at rest: their work is not in the balance.
bool prescribed_at_rest(const std::vector<bool>& fixed, const Eigen::VectorXd& v) {
  for (std::size_t a = 0; a < fixed.size(); ++a)
    if (fixed[a] && !v.segment<3>(3 * static_cast<Eigen::Index>(a)).isZero(0.0)) return false;
  return true;
}
}  // namespace

bool SolidSource::kick_gained_energy(const Eigen::VectorXd& x_n) {
  if (!prescribed_at_rest(fixed_, v_)) return false;
  v_end_ = v_ + v_new_;
  x_end_ = x_n + h_ * v_end_;
  const EnergyBalance b = step_energy_balance(*model_, model_->lumped_mass(), x_n, v_, x_end_, v_end_, f_ext_,
                                              h_, contact_.planes(), impulses_);
  return b.gained() || unheld_plane_energy(unheld_, x_end_) > b.tolerance;
}

bool SolidSource::multirate_step_gained_energy() {
  if (!prescribed_at_rest(fixed_, v_)) return false;
  plan_end_state();
  const EnergyBalance b = step_energy_balance(*model_, model_->lumped_mass(), x_, v_, x_end_, v_end_, f_ext_, h_,
                                              contact_.planes(), impulses_);
  return b.gained() || unheld_plane_energy(unheld_, x_end_) > b.tolerance;
}

bool SolidSource::region_meets_solid() const {
  const std::vector<TickPlane>& planes = contact_.planes();
  const auto& regions = multirate_->regions();
  for (std::size_t k = 0; k < planes.size(); ++k) {
    const TickPlane& p = planes[k];
    if (p.friction || !contact_.solid_pair(k)) continue;
    const int g = plane_group(p);
    if (g >= 0 && regions[static_cast<std::size_t>(g)].m > 1) return true;
  }
  return false;
}

void SolidSource::plan_end_state() {
  // The plan's state at t_n + h_L (eq. 21–22): L drifts h_L with v^L_m, a region h_S
  // with each of its v^S_r; prescribed vertices stay.
  x_end_ = x_;
  v_end_ = v_;
  for (Index a : multirate_->large_vertices()) {
    const auto o = 3 * static_cast<Eigen::Index>(a);
    v_end_.segment<3>(o) += step_.dv_L.segment<3>(o);
    x_end_.segment<3>(o) += h_ * v_end_.segment<3>(o);
  }
  const auto& regions = multirate_->regions();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const double hS = h_ / regions[i].m;
    const auto& dv = step_.dv_S[i];
    for (Index a : regions[i].vertices) {
      const auto o = 3 * static_cast<Eigen::Index>(a);
      for (const Eigen::VectorXd& d : dv) x_end_.segment<3>(o) += hS * (v_.segment<3>(o) + d.segment<3>(o));
      v_end_.segment<3>(o) += dv.back().segment<3>(o);
    }
  }
}

double SolidSource::rotation_share(const Eigen::VectorXd& x_n, double h) {
  // The budget (solid_source.hpp, kRotationBudget): a share of the largest kinetic
  // energy the body has carried at a step's start, this one's included.
  const std::vector<double>& mass = model_->lumped_mass();
  double kinetic = 0.0;
  for (std::size_t a = 0; a < mass.size(); ++a)
    kinetic += 0.5 * mass[a] * v_.segment<3>(3 * static_cast<Eigen::Index>(a)).squaredNorm();
  peak_kinetic_ = std::max(peak_kinetic_, kinetic);
  const RotationShare r = energy_limited_share(*model_, mass, x_n, v_, x_end_, v_end_, rotation_, f_ext_, h,
                                               contact_.planes(), impulses_,
                                               energy_credit_ + kRotationBudget * peak_kinetic_, x_share_,
                                               v_share_);
  energy_credit_ -= r.gain;
  if (r.share < 1.0 && counters_.rotation_limited++ == 0)
    spdlog::info("{}: the rotation that keeps angular momentum was cut to {:.3g} of itself at step {} "
                 "(t = {} s): all of it would have created energy (docs/solids.md \"Angular momentum "
                 "and energy\"); such steps do not keep L exactly",
                 body_, r.share, current_, clock_.time(current_));
  return r.share;
}

BackwardEulerSettings SolidSource::newton_settings() const {
  // Newton's step in the dissipative form whatever the linearised step's: projected
  // element Hessians and β K̂(x_n) held over the step (backward_euler.hpp).
  BackwardEulerSettings s;
  s.rayleigh_alpha = euler_ ? euler_->settings().rayleigh_alpha : multirate_->settings().rayleigh_alpha;
  s.rayleigh_beta = euler_ ? euler_->settings().rayleigh_beta : multirate_->settings().rayleigh_beta;
  s.fix = DefinitenessFix::LocalClamp;
  s.damping = RayleighDamping::ProjectedAtStart;
  s.energy_safeguard = false;
  return s;
}

BackwardEulerSettings SolidSource::joint_settings() const {
  return euler_ ? euler_->settings() : newton_settings();
}

bool SolidSource::resolve_with_newton(double time, const Eigen::VectorXd& x_n) {
  if (!safeguard_) safeguard_ = std::make_unique<BackwardEuler>(*model_, newton_settings());
  // Backward Euler's planes (one-sided, friction anchors unscaled), found anew as its
  // own step finds them (SolidSource::process).
  std::vector<TickPlane> solved = contact_.planes();  // the step's, should this fail
  std::span<TickPlane> planes;
  if (contact_.any()) {
    double speed = 0.0;
    for (Index a : free_) speed = std::max(speed, v_.segment<3>(3 * a).norm());
    contact_.find(time, h_, speed, x_n, fixed_, model_->lumped_mass(), &v_);
    planes = contact_.planes();
  }
  x_end_ = x_n;
  v_end_ = v_;
  const BackwardEulerReport r = safeguard_->step(h_, x_end_, v_end_, f_ext_, fixed_, planes);
  counters_.newton_iterations += r.newton_iterations;
  if (r.factorization_failed) {
    contact_.planes() = std::move(solved);
    return false;
  }
  if (!r.converged) warn_unconverged("the energy safeguard's backward Euler step", time, r);
  record_plane_impulses(x_end_, planes);
  v_new_ = v_end_ - v_;
  return true;
}

void SolidSource::record_plane_impulses(const Eigen::VectorXd& x_end, std::span<const TickPlane> planes) {
  // Each plane's impulse over the step, h k v at the landing positions: applied to the
  // kernel after the step and the loads the next step's friction anchors scale with.
  impulses_.resize(planes.size());
  for (std::size_t k = 0; k < planes.size(); ++k)
    impulses_[k] = h_ * planes[k].stiffness * planes[k].violation(x_end);
  if (contact_.any()) contact_.record_loads(h_, impulses_, vertices_.size());
}

// Once per run and solid, not per step (io/run/run.cpp logs it).
std::vector<std::string> SolidSource::run_log() const {
  std::vector<std::string> lines;
  if (counters_.safeguarded > 0)
    lines.push_back(fmt::format("{}: {} of {} linearised steps gained energy and were re-solved by "
                                "Newton (energy safeguard, docs/solids.md)",
                                body_, counters_.safeguarded, counters_.coarse_steps));
  if (counters_.rotation_limited > 0)
    lines.push_back(fmt::format("{}: in {} of {} steps the angular-momentum rotation was cut to keep "
                                "the energy (docs/solids.md \"Angular momentum and energy\")",
                                body_, counters_.rotation_limited, counters_.coarse_steps));
  return lines;
}

}  // namespace clockwork
