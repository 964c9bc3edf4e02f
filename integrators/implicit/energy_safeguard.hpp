#pragma once
/// The energy safeguard of the linearised implicit steps (docs/backward-euler.md "Linearised
/// steps and the energy safeguard"; issue 41). Backward Euler's converged step minimises
/// an objective whose descent makes it dissipative (backward_euler.hpp), but one linear
/// solve about x_n — backward Euler with max_newton = 1 (Zhao eq. 5) and Zhao's coarse
/// step — is only the minimiser of the objective's quadratic model. A stiff body turning
/// a large angle in one step leaves that model far behind: its landing positions are
/// stretched along the tangents of the rotation, and the step creates elastic energy
/// (a frictionless soft dragon landing at 3 m/s: +130–280 J in one Zhao step, 5e8 J
/// within 0.39 s for linearised backward Euler).
///
/// The check is the step's energy balance from state, against the work of what acts
/// on the body in the step:
///   gain = [½ v₁ᵀ M v₁ + E(x₁)] − [½ v₀ᵀ M v₀ + E(x₀)] − f_extᵀ (x₁ − x₀) − Σ_k F_k n_k·(y₁ − y₀)_k,
/// E the elastic energy, f_ext the step's constant external force (gravity), and for
/// each contact plane of the step (tick_plane.hpp) its force F along its normal times
/// its point's travel: backward Euler's force at the landing positions, k v(x₁), or the
/// step's impulse over h where the caller knows it (Zhao's). A normal plane's force is
/// taken one-sided: a linearised step holds the planes its prediction lands behind as
/// two-sided springs, and what such a spring pulls is energy made, not contact's work.
/// Friction anchors count as the two-sided springs they are. Damping is dissipative
/// and gets no credit. The converged backward-Euler step satisfies gain ≤ 0 for convex
/// elements: M (v₁ − v₀) = h f(x₁) gives ΔKE = f(x₁)·(x₁ − x₀) − ½ |v₁ − v₀|²_M, and
/// convexity gives E(x₁) − E(x₀) ≤ ∇E(x₁)·(x₁ − x₀). A step has gained energy when
/// gain > 1e-6 × scale, the scale being the sum of the magnitudes of the terms above
/// (round-off in them is ~1e-15 × scale). Prescribed vertices must be at rest (their
/// work is not in the balance).
#include <algorithm>
#include <span>
#include <vector>

#include "integrators/fem/tet_fem.hpp"
#include "integrators/energy/tick_plane.hpp"

namespace clockwork {

struct EnergyBalance {
  double gain = 0.0;       ///< J: energy created by the step (negative: dissipated)
  double tolerance = 0.0;  ///< J: 1e-6 × the scale of the balance's terms
  bool gained() const { return gain > tolerance; }
};

/// The relative tolerance of the check (above).
inline constexpr double kEnergySafeguardTolerance = 1e-6;

/// The balance of a step of h from (x0, v0) to (x1, v1) (3n each) under the constant
/// f_ext (3n), with `mass` the lumped mass per vertex; `impulses` (per plane, or empty:
/// k v(x₁) h) the planes' impulses on the body over the step.
EnergyBalance step_energy_balance(const TetFemModel& model, const std::vector<double>& mass,
                                  const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                  const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                  const Eigen::VectorXd& f_ext, double h,
                                  std::span<const TickPlane> planes,
                                  std::span<const double> impulses = {});

/// The same balance with the elastic energies E(x0), E(x1) given: for a caller that
/// has them already, or whose end positions do not depend on what it varies (the
/// Schroeder stepper's rotation, energy_limited_share with h = 0).
EnergyBalance step_energy_balance(const std::vector<double>& mass, double elastic0, double elastic1,
                                  const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                  const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                  const Eigen::VectorXd& f_ext, double h,
                                  std::span<const TickPlane> planes,
                                  std::span<const double> impulses = {});

/// Σ ½ k v(x₁)² over the normal planes that a linearised step did not hold (not
/// two-sided, not friction) and whose point lands behind them at x₁: the energy such a
/// plane stores once it acts. The balance above counts these planes' work as contact's,
/// and a step that dissipates elsewhere (a landing) covers it; but the step never
/// pushed on them, so the next step starts behind the plane and is pushed out by a
/// spring whose energy no total counts: the body climbs back. A Zhao block at m = 1,
/// h_L = 10 ms, dropped 4 mm fell through the ground's 2 mm planes to 1.06 mm (its
/// prediction x_n + h v_n stopped short of them, gravity's h g did not), and climbed
/// back 1.95e-3 of its energy after the landing (issue 41's sweep). A linearised step
/// whose unheld planes store more than its balance's tolerance is re-solved.
double unheld_plane_energy(std::span<const TickPlane> planes, const Eigen::VectorXd& x1);

/// The share of a rotation the step's energy allows, and the step's balance with it.
struct RotationShare {
  double share = 1.0;  ///< s ∈ [0, 1]
  double gain = 0.0;   ///< J: the step's balance (step_energy_balance) with s u
};

/// The rule of energy_limited_share (below) over any step whose balance `balance(s)`
/// (an EnergyBalance) depends on the share s ∈ [0, 1] of a rotation: s = 1 when
/// gain(1) is within its tolerance of `allowed`, otherwise the largest s that 40
/// halvings find with gain(s) ≤ allowed (0 if gain(0) is above it already). allowed =
/// max(gain(0), credit): a step may keep its own gain. Without `own_gain` allowed =
/// credit: a step that gains energy by itself gets no rotation unless the body's credit
/// covers it (the Schroeder events, where a rotation that keeps a fast spin up feeds
/// the next steps' own gains). The one implementation of the rule: the solids' steps
/// (energy_limited_share) and the Schroeder stepper's events
/// (integrators/schroeder/schroeder_momentum.cpp) both call it.
template <class Balance>
RotationShare limited_share(Balance&& balance, double credit, bool own_gain = true) {
  const EnergyBalance without = balance(0.0);
  const double allowed = own_gain ? std::max(without.gain, credit) : credit;
  const EnergyBalance full = balance(1.0);
  if (full.gain <= allowed + full.tolerance) return {1.0, full.gain};
  RotationShare r{0.0, without.gain};  // gain(share) ≤ allowed < gain(hi)
  if (without.gain > allowed) return r;
  double hi = 1.0;
  for (int k = 0; k < 40; ++k) {
    const double mid = 0.5 * (r.share + hi);
    const double gain = balance(mid).gain;
    if (gain <= allowed) r = {mid, gain};
    else hi = mid;
  }
  return r;
}

/// The share s ∈ [0, 1] of a velocity field u (3n, a rigid rotation that restores the
/// step's angular momentum) that the step (x0, v0) → (x1, v1) can take without creating
/// energy: u joins the end velocity and, through the drift of h, the end positions,
///   (x1 + s h u, v1 + s u).
/// s is 1 where that step's balance stays within the check's tolerance of
///   allowed = max(gain₀, credit),
/// gain₀ the balance without u and `credit` the energy the body's earlier steps
/// dissipated and have not spent (their balances' negated sum); otherwise the largest s
/// found by bisection (40 halvings) whose gain stays at `allowed`. A rotation about a
/// body the step has stretched or shrunk is not rigid for its elastic energy, and giving
/// back the spin a dissipative step removed can cost more energy than the step
/// dissipated (a bar spinning at 0.4 rad per step gains energy even under converged
/// Newton steps): the body may spend what it dissipated before, and past that energy
/// wins over exact angular momentum. x_s, v_s are scratch (3n, resized on first use).
RotationShare energy_limited_share(const TetFemModel& model, const std::vector<double>& mass,
                                   const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                   const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                   const Eigen::VectorXd& u, const Eigen::VectorXd& f_ext, double h,
                                   std::span<const TickPlane> planes, std::span<const double> impulses,
                                   double credit, Eigen::VectorXd& x_s, Eigen::VectorXd& v_s);

}  // namespace clockwork
