#pragma once
/// Parameters of the discrete penalty layers and the kinetic hash grid (DESIGN §2).
namespace clockwork {

struct ContactParameters {
  double eta1 = 0.0;       ///< η(1), thickness of the first layer, m > 0
  double r1 = 0.0;         ///< r(1), stiffness of the first layer, N/m > 0
  double h1 = 0.0;         ///< period of the first layer's force event, s > 0
  double friction = 0.0;   ///< Coulomb coefficient μ >= 0 (0: frictionless)
  double cell_size = 0.0;  ///< hash-grid cell edge, m > 0 (> η1)
  /// Slack δ of the velocity envelopes (m/s >= 0; 0: rescheduled on every velocity
  /// change) of element-pair slabs (near: small gaps) and of triangle-pair slabs and
  /// grid certificates (far: gaps of the order of a cell).
  double slack_near = 0.0, slack_far = 0.0;
  /// Per-vertex slacks that widen where velocities jitter (Contingency::set_adaptive_slack),
  /// up to ContactSystem::kMaxSlackFactor × the level's slack.
  bool adaptive_slack = true;
  /// Radius ρ of the position envelopes that vertices whose velocities jitter beyond
  /// the far level's widest slack switch to (m, 0: off; needs adaptive_slack; below
  /// (kExpandClearance − 1) η1 / 2, so that a triangle pair renewed at its clearance
  /// still has room for two balls). docs/contact.md "Position envelopes".
  double position_slack = 0.0;
  /// The largest position_slack, × η1.
  static constexpr double kMaxPositionSlack = 0.125;
  int max_layers = 4096;   ///< safety net: a pair this deep means the input was broken
  /// Per-vertex layer periods (docs/contact.md "Stacked layers"): a layer touching a
  /// vertex that several pushing layers load fires at the period that vertex's total
  /// stiffness allows, when that is shorter than its own h(l). `min_mass` (> 0 when
  /// on) is the mass h1 was chosen for: h1 = safety · 2 / sqrt(2 r1 / min_mass).
  bool vertex_periods = false;
  double min_mass = 0.0;
};

}  // namespace clockwork
