#pragma once
/// Phantom-mesh implicit AVI (phantom-mesh paper §3.2, §4; DESIGN §3): a body whose
/// stiff potentials act on a phantom copy of its vertices, integrated implicitly
/// (midpoint, α = ½) at one period h_imp, coupled to the primary mesh by constraint
/// impulses at the same ticks. The primary keeps the explicit, asynchronous forces
/// (penalty layers). Kinetic energy is split equally: the primary vertices carry m/2
/// in the kernel's state, the phantom m/2 here.
///
/// One event per body does both the constraint and the implicit update (they share
/// the clock): with the primary synced to q, v⁻ and the phantom at q̃, ṽ⁻,
///   constraint impulses  ±Λ_a (eq. 6, 7; equal and opposite from λᵀ(q − q̃) in eq. 4),
///   approximation (eq. 8)  q + h v⁺ = q̃ + h ṽ⁺ = x,
/// which together with eq. 7 reduce to the minimisation of implicit_tick.hpp with
///   y = (q + q̃)/2 + (h/2)(v⁻ + ṽ⁻) − (h²/2) M⁻¹ g_prev,  g_prev = ∇V(q̃ at the
/// previous midpoint); the first tick from a scene's initial state has no previous
/// interval and no g_prev term: a half kick (StartFrom). Then v⁺ = (x − q)/h, ṽ⁺ = (x − q̃)/h, and the phantom moves to x.
/// All primary velocity changes are reported at once; the kernel reschedules their
/// certificates in one pass at the end of the event.
///
/// Angular momentum: the paper's conservation argument assumes the constraint holds,
/// which the eq.-8 approximation does not give after explicit (contact) impulses: the
/// copies differ by d = q − q̃ and the constraint impulses ±Λ, applied at q and q̃,
/// exert the torque Σ d × Λ (the merge of two offset half-masses at x loses their
/// relative spin). A partial solve adds the residual torque h Σ q̃ × ρ. Both are
/// cancelled at the tick by a rigid rotation ω × (c − C) of both copies' velocities
/// (c the pair centres, C their mass centre): it changes no strain to first order and
/// no linear momentum, and is of the size of the mismatch times Λ (at most 6e-6 of
/// the speeds in the two-cloth collision). With it the discrete Noether momentum is exact:
/// test_phantom_runs, 7e-14 relative through a collision of two phantom cloths. A
/// plane's reaction received between ticks adds torques of its own, cancelled by the
/// same rotation (receive_impulse).
/// Linear momentum is exact regardless (±Λ are equal and opposite; the shift below).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/kernel.hpp"
#include "contact/mass_share.hpp"
#include "integrators/body_integrator.hpp"
#include "integrators/phantom/implicit_tick.hpp"
#include "integrators/implicit/solve_contact.hpp"
#include "integrators/energy/wind_force.hpp"

namespace clockwork {

/// Counters for diagnostics and benchmarks.
struct PhantomCounters {
  std::uint64_t ticks = 0;
  std::uint64_t iterations = 0;        ///< solver iterations over all ticks
  int last_iterations = 0;
  int max_iterations = 0;
  std::uint64_t unconverged = 0;       ///< ticks that hit the iteration cap (logged)
  double solve_seconds = 0.0;          ///< wall time in the solver
  std::uint64_t torque_corrections = 0;  ///< ticks that cancelled a constraint torque
  double max_correction_speed = 0.0;     ///< largest |ω| × radius of gyration applied
  std::uint64_t torque_skipped = 0;      ///< ticks whose correction was too large to apply
  std::uint64_t factorizations = 0;      ///< sparse Cholesky factorisations (solver)
  std::uint64_t obstacle_planes = 0;     ///< obstacle planes given to the ticks
  std::uint64_t pair_planes = 0;         ///< near-pair (self- and body–body) planes
  std::uint64_t pushing_planes = 0;      ///< of both, those that pushed the landing point
  std::uint64_t halvings = 0;            ///< solves retried with half the step (TickHalving)
  std::uint64_t short_ticks = 0;         ///< ticks taken with a step below h_imp
  int deepest_halving = 0;               ///< the smallest step taken: h_imp / 2^this
  std::uint64_t damped_ticks = 0;        ///< midpoint ticks solved again, damped, for making energy
  double max_tick_energy = 0.0;          ///< largest energy a kept midpoint tick made, over the body's kinetic
};

/// Ticks whose solve does not converge are solved again from the same state with half
/// the step, down to h_imp / 2^max_halvings (docs/phantom.md "Halving the tick"). A
/// smaller step makes E better conditioned (its inertia term M/h² grows against the
/// elastic Hessian), and an unconverged iterate is what folds a sheet at the mesh scale.
/// After `calm_ticks` converged ticks at a level, the step doubles again once the tick
/// times are back on the coarser level's grid, so that a body returns to h_imp; if the
/// doubled step fails at once, the wait doubles (a failed solve costs max_iterations).
struct TickHalving {
  int max_halvings = 0;  ///< 0: the paper's fixed period
  int calm_ticks = 4;
};

/// A midpoint tick that makes energy is solved again with Rayleigh damping (docs/phantom.md
/// "Ticks that make energy"). Without outside impulses the midpoint rule changes the
/// interval energy E = ½ ṽᵀ M ṽ + V(midpoint) by exactly the trapezoidal error of the
/// elastic work between the two midpoints m⁻ (where g⁻ was taken) and m⁺:
///   ε = V(m⁺) − V(m⁻) − ½ (g⁻ + g⁺)·(m⁺ − m⁻),
/// zero for a quadratic V. On a stiff cloth crumpled by an impact (ω h ≈ 10) it is
/// positive tick after tick and pumps the mesh-scale modes. Checked in free flight only
/// (no impulse reached the body in the interval; no pins, no wind, one step). A tick with
/// ε > tolerance × (its interval's kinetic energy) is solved again with
/// D = β K_mat, β = damping × h (at least the body's own): damping ratio β ω / 2 ≥ 1 for
/// the modes with ω h ≥ 2 that the rule cannot resolve; no net force, no torque.
struct TickEnergyGuard {
  double damping = 1.0;      ///< β over the tick's step; 0: off (the paper's rule)
  double tolerance = 1e-3;
};

class PhantomSource final : public EventSource, public BodyIntegrator, public MassShare, public ImpulseReceiver {
 public:
  /// `vertices`: global indices of the body's vertices (local index = position in the
  /// list); `mass`: their full lumped masses (the kernel holds m/2 for free vertices,
  /// infinity for pinned ones, which are prescribed).
  PhantomSource(std::string body, std::vector<Index> vertices, std::vector<double> mass,
                double h_imp, ImplicitSolverSettings settings);

  BodyPotential& potential() { return *potential_; }
  /// Wind drag on the phantom's triangles (local indices), evaluated at the start of
  /// each tick and held constant through the solve.
  void add_wind(const std::array<Index, 3>& triangle, const WindForce& w) {
    wind_.push_back({triangle, w});
  }
  /// Lets the ticks see obstacles: each surface feature near one gets a one-sided
  /// plane (tick_plane.hpp) that keeps its landing point `clearance` off the obstacle.
  void set_obstacles(ContactFinder finder, TickContactSettings settings) {
    contact_.set_obstacles(std::move(finder), settings);
  }
  /// Lets the ticks see the near element pairs of deformable surfaces (this body with
  /// itself and with other bodies): each gets a plane that stops it closing.
  void set_pair_contact(ContactFinder finder, TickContactSettings settings) {
    contact_.set_pairs(std::move(finder), settings);
  }
  void set_halving(TickHalving halving);
  void set_energy_guard(TickEnergyGuard guard);
  /// Contact impulses on the primary move the whole mass: both copies change velocity
  /// by J/m (docs/phantom.md "Contact on the whole mass"; the paper's penalties act on
  /// the primary's half, m/2, and reach the phantom through the next tick). Before start().
  /// "contact_mass": "whole": a contact impulse moves both copies (the scene registers
  /// the body's vertices with the contact system: ContactSystem::share_mass).
  void set_contact_on_whole_mass(bool on) { contact_on_whole_ = on; }
  bool contact_on_whole_mass() const { return contact_on_whole_; }
  /// The tick's rigid rotation that keeps angular momentum (cancel_constraint_torque;
  /// on by default). Off: the ticks as printed, for tests that compare the two.
  void set_torque_correction(bool on) { torque_correction_ = on; }
  void share_velocity_change(Index local, const Vec3& dv, double t) override;
  /// An impulse J on local vertex a at `time` from outside the body's own tick (the
  /// reaction of another body's contact plane): both copies' velocities change by J/m,
  /// so the pair's momentum changes by J and their mismatch does not grow. Angular
  /// momentum stays exact with the plane's torque taken at the primary: the next
  /// midpoint tick's rotation cancels the difference (cancel_constraint_torque), the
  /// diagnostics carry it until then (add_carried).
  void receive_impulse(Index a, const Vec3& impulse, double time, Kernel& kernel) override;
  /// Copies the primary state into the phantom and schedules the first tick at `t0`.
  /// From an initial state the first tick is a half kick; a resumed run's first tick
  /// takes the previous interval's half at the copy's positions (restore_copy).
  void start(EventKind kind, Kernel& kernel, double t0 = 0.0,
             StartFrom from = StartFrom::initial_state);

  std::string_view name() const override { return "implicit:phantom"; }
  int stencil_size(EventSlot) const override { return static_cast<int>(vertices_.size()); }
  /// A tick moves every vertex of the body.
  std::span<const Index> stencil_vertices(EventSlot) const override { return vertices_; }
  double process(EventSlot slot, double time, Kernel& kernel) override;
  double potential_energy(const VertexState& state, double t) const override;
  void add_carried(const VertexState& state, double t, Vec3& p, Vec3& L, double& kinetic) const override;

  // BodyIntegrator (body_integrator.hpp): the copy is the vertex copy frames hold.
  std::string_view kind() const override { return "phantom"; }
  const std::string& body() const override { return body_; }
  std::span<const Index> body_vertices() const override { return vertices_; }
  EventSource* source() override { return this; }
  void start(Kernel& kernel, EventKind kind, StartFrom from) override { start(kind, kernel, kernel.now(), from); }
  double owned_potential(const VertexState& state, double t) const override { return potential_energy(state, t); }
  void carried(const VertexState& state, double t, Vec3& p, Vec3& L, double& kinetic) const override {
    add_carried(state, t, p, L, kinetic);
  }
  bool has_vertex_copy() const override { return true; }
  void vertex_copy(Index a, double t, Vec3& x, Vec3& v) const override {
    x = phantom_position(a, t);
    v = phantom_velocity(a);
  }
  void restore_vertex_copy(const std::vector<Vec3>& x, const std::vector<Vec3>& v) override { restore_copy(x, v); }
  std::vector<std::string> summary_lines() const override;

  const PhantomCounters& counters() const { return counters_; }
  double h_imp() const { return h_; }
  /// The step of the current interval (h_imp unless a tick was halved).
  double h_tick() const { return h_tick_; }
  /// Phantom position of local vertex a at time t (between ticks: linear).
  Vec3 phantom_position(Index a, double t) const {
    return q_tilde_.segment<3>(3 * a) + (t - t_tick_) * v_tilde_.segment<3>(3 * a);
  }
  Vec3 phantom_velocity(Index a) const { return v_tilde_.segment<3>(3 * a); }
  /// max_a |q̃_a(t) − q_a(t)| over the body (the constraint mismatch).
  double mismatch(const VertexState& state, double t) const;
  /// Sets the copy's positions and velocities at the start time (a resumed run; after
  /// start(), before the first tick). The previous midpoint's gradient, which the
  /// first tick needs, is taken at the copy's positions, as at any start.
  void restore_copy(const std::vector<Vec3>& q, const std::vector<Vec3>& v);

 private:
  /// The tick's problem for step h from the primary at `time` (synced): y, the initial
  /// guess x_ (the phantom's free flight) and the contact planes.
  void set_up_tick(VertexState& state, double time, double h);
  /// Solves it, halving the step while the solve does not converge (TickHalving);
  /// leaves the step taken in h_tick_.
  TickReport solve_tick(VertexState& state, double time, bool released);
  /// The next tick's time (on the grid of h_imp / 2^max_halvings, so that runs without
  /// halvings tick at exactly t0 + k h_imp), coarsening the step when it may.
  double next_tick_time(bool converged);
  /// Cancels the torque Σ (q − q̃) × Λ of the constraint impulses of a mismatched pair
  /// by a rigid rotation of the tick's landing positions x (changes no strain, no
  /// linear momentum); returns whether x changed. Free bodies only. Not applied (and
  /// counted) when the rotation would exceed kMaxCorrection of the body's fastest
  /// landing speed: at a hard impact the mismatch is of the order of h_imp × the
  /// impact speed, and a rigid rotation that large pumps kinetic energy into the body
  /// (measured: a hat hitting a pole off-centre got 1 m/s rotations and exploded).
  bool cancel_constraint_torque(const VertexState& state);
  /// The contact planes of this tick (problem_.planes), from the primary at `time`
  /// (synced).
  void find_contact_planes(const VertexState& state, double time);
  /// Gives the other bodies' vertices of the pushing pair planes the reaction of the
  /// planes' impulses h k v w_j n, so that a collision of two bodies exchanges
  /// momentum exactly (the plane pushes this body only).
  void apply_plane_reactions(Kernel& kernel, double time);
  /// Σ over the planes of the force they exert at x_ (pushing planes only).
  Vec3 plane_force() const;
  static constexpr double kMaxCorrection = 1e-3;

  std::string body_;
  std::vector<Index> vertices_;
  std::vector<double> mass_;
  std::vector<bool> free_;
  double h_;
  double h_tick_, h_prev_;  ///< this interval's step and the previous one's
  TickHalving halving_;
  TickEnergyGuard energy_guard_;
  /// The energy the solved tick makes (TickEnergyGuard), relative to the kinetic energy
  /// of its interval; 0 where it is not measured (backward Euler, a step change, the
  /// first tick, released pins).
  double tick_energy(const VertexState& state, bool released);
  bool contact_on_whole_ = false;
  bool torque_correction_ = true;
  int level_ = 0;           ///< h_tick_ = h_ / 2^level_
  int calm_ = 0;            ///< converged ticks at this level (−1: trying a doubled step)
  int calm_needed_ = 4;     ///< calm_ticks, doubled after each failed try of a doubled step
  std::int64_t grid_ = 0;   ///< the tick time in units of h_ / 2^max_halvings from t0
  std::unique_ptr<BodyPotential> potential_;
  std::unique_ptr<ImplicitTickSolver> solver_;
  struct WindTriangle {
    std::array<Index, 3> v;
    WindForce force;
  };
  std::vector<WindTriangle> wind_;
  Eigen::VectorXd q_tilde_, v_tilde_, g_prev_, wind_force_;
  Eigen::VectorXd mid_prev_;   ///< where g_prev_ was taken (the previous interval's midpoint)
  double v_mid_prev_ = 0.0;    ///< V there
  bool mid_prev_valid_ = false;
  Eigen::VectorXd v_primary_;     ///< the primary's velocities the last tick set
  bool outside_impulse_ = false;  ///< an impulse reached the copy in this interval (receive_impulse, shared)
  double t_tick_ = 0.0, t0_ = 0.0;
  double t_next_ = 0.0;  ///< the time of the next tick (the current interval's end)
  /// This interval's received impulses (receive_impulse): the torque their lever arm
  /// (q̃ − q)/2 and the next tick's elastic impulse at the points they moved exert,
  /// which the tick's rotation cancels (cancel_constraint_torque); and what the
  /// diagnostics add until then, so that they read L as the rotation will leave it.
  Vec3 reaction_torque_ = Vec3::Zero();
  Vec3 spurious_torque_ = Vec3::Zero();
  std::uint64_t tick_ = 0;
  bool g_prev_valid_ = false;
  StartFrom from_ = StartFrom::initial_state;
  TickProblem problem_;
  Eigen::VectorXd x_;
  Eigen::VectorXd tick_point_;  ///< where the last tick evaluated V (scratch)
  Eigen::VectorXd g_tick_;      ///< ∇V at the tick point when the solver holds none (tick_energy's scratch)
  SolveContact contact_;          ///< the ticks' planes (solve_contact.hpp)
  std::vector<bool> fixed_;       ///< !free_, for contact_
  Eigen::VectorXd primary_;       ///< the primary's positions at the tick, for contact_
  PhantomCounters counters_;
};

}  // namespace clockwork
