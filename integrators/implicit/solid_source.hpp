#pragma once
/// Tet solids in the kernel (DESIGN §4): a body's elastic forces, damping and gravity
/// act through one *coarse step* event per large step, which solves the implicit
/// system at the start of its interval ("everything is kick + drift": backward Euler's
/// x_{n+1} = x_n + h v_{n+1} is "set v = v_{n+1} at t_n, then drift for h") and
/// applies velocity *increments*, so contact impulses that landed in between are kept.
///
/// - Synchronous backward Euler (kind "coarse:backward_euler"): one step of h.
/// - Zhao et al.'s multi-rate scheme (kind "coarse:zhao"): the coarse event applies
///   Δv^L_{0,m} to L and Δv^S_{0,1} to every region, and schedules the region's fine
///   events (kind "fine:zhao", one slot per region) at t_n + r h_S, r = 1..m−1, which
///   apply Δv^S_{r,r+1} = Δv^S_{0,r+1} − Δv^S_{0,r} (eq. 20). Positions then follow
///   eq. 21–22 exactly: S drifts h_S with each v^S_{r+1}, L drifts h_L with v^L_m.
///   If another source (a contact impulse, a script) changed a velocity of the region's
///   tets' vertices since the coarse event, the precomputed increments no longer fit:
///   the region's remaining substeps of that large step are solved one per fine event
///   from the kernel's state, so that a stiff region meets the ground at h_S instead of
///   answering a contact impulse one large step late: the planned increment plus the
///   response of the region's tets to the state's difference from the plan, solved on S
///   and its L neighbours together (MultirateSolver::substep_change), so that the S–L
///   exchange still sums to zero and linear momentum stays exact (issue 41).
///
/// Contact inside the step (DESIGN §7, docs/backward-euler.md "Contact inside the step"): with
/// `contact()` given finders, each step's solve sees the obstacles and the near element
/// pairs with other bodies as one-sided planes on its landing positions
/// (solve_contact.hpp); the other body of a pair takes the plane's impulse over the
/// step at the step's time, so momentum is exchanged, not made. Backward Euler solves
/// with them (one-sided, Newton); Zhao's linear step takes the planes behind which
/// x_n or x_n + h_L v_n lies as springs in its system (MultirateSolver::set_planes), at
/// h_L on L and at h_S on a region's vertices (a region's pair plane with another solid
/// also from the later substep its point reaches it: TickPlane::first_substep); a plane
/// whose vertices straddle L and a region is left to the layers. A pair plane with another solid may only push: the
/// step is solved again with the pair planes that push (an active set: process(),
/// kMaxPlanePasses).
///
/// The external force of a step is gravity on the lumped masses, held over the step.
/// Prescribed (pinned, infinite-mass) vertices are removed from the unknowns; their
/// velocity (zero, or a script's) enters the right-hand side.
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/kernel.hpp"
#include "engine/step_clock.hpp"
#include "integrators/body_integrator.hpp"
#include "integrators/implicit/backward_euler.hpp"
#include "integrators/zhao/multirate_solver.hpp"
#include "integrators/implicit/solve_contact.hpp"

namespace clockwork {

struct SolidCounters {
  std::uint64_t coarse_steps = 0;
  std::uint64_t fine_steps = 0;
  std::uint64_t resolved_substeps = 0;  ///< fine steps solved after an outside velocity change
  std::uint64_t newton_iterations = 0;  ///< backward Euler
  std::uint64_t linear_iterations = 0;  ///< backward Euler with an iterative solver
  std::uint64_t unconverged = 0;        ///< backward Euler steps at the Newton cap (logged)
  std::uint64_t pushing_pairs = 0;      ///< pair planes that pushed (reactions given, or solved jointly)
  /// Linearised steps (backward Euler max_newton 1, Zhao coarse steps) that gained
  /// energy and were re-solved by the energy safeguard (energy_safeguard.hpp).
  std::uint64_t safeguarded = 0;
  /// Steps whose angular-momentum rotation was cut short because giving the whole of it
  /// back would have created energy (energy_limited_share): their L is not exact.
  std::uint64_t rotation_limited = 0;
  std::uint64_t joint_steps = 0;  ///< steps taken with other solids (joint_solids.hpp)
};

class SolidFineSource;
class JointSolids;

class SolidSource final : public EventSource, public BodyIntegrator {
 public:
  /// `vertices`: global indices of the model's vertices (local index = position);
  /// `fixed`: per local vertex, prescribed (infinite mass in the kernel).
  SolidSource(std::string body, std::vector<Index> vertices, std::shared_ptr<TetFemModel> model,
              std::vector<bool> fixed, const Vec3& gravity);

  /// Synchronous backward Euler with step h.
  void use_backward_euler(double h, const BackwardEulerSettings& settings);
  /// Zhao's scheme; region vertices are local indices. Throws std::invalid_argument
  /// (from MultirateSolver) for bad regions.
  void use_multirate(std::vector<MultirateRegion> regions, const MultirateSettings& settings);

  /// The energy safeguard of the linearised steps (on by default; energy_safeguard.hpp,
  /// solid_safeguard.cpp). Off only in tests that show what it prevents; call before
  /// start().
  void set_energy_safeguard(bool on);

  /// Backward Euler: steps with the solids in contact that step at the same times
  /// (joint_solids.hpp), registered there too. Call before start().
  void set_joint(std::shared_ptr<JointSolids> joint);

  /// Registers the fine-step source (multi-rate only) and schedules the first coarse
  /// step at t0. Call after every vertex is in the kernel.
  void start(EventKind kind, Kernel& kernel, double t0 = 0.0);

  std::string_view name() const override;
  int stencil_size(EventSlot) const override { return static_cast<int>(free_global_.size()); }
  /// A coarse step changes the velocity of every free vertex of the body.
  std::span<const Index> stencil_vertices(EventSlot) const override { return free_global_; }
  double process(EventSlot slot, double time, Kernel& kernel) override;
  double potential_energy(const VertexState& state, double t) const override;

  // BodyIntegrator (body_integrator.hpp).
  std::string_view kind() const override { return multirate_ ? "zhao" : "backward_euler"; }
  const std::string& body() const override { return body_; }
  std::span<const Index> body_vertices() const override { return vertices_; }
  EventSource* source() override { return this; }
  void start(Kernel& kernel, EventKind kind, StartFrom) override { start(kind, kernel, kernel.now()); }
  double owned_potential(const VertexState& state, double t) const override { return potential_energy(state, t); }
  void add_totals(IntegratorTotals& totals) const override { totals.safeguarded_steps += counters_.safeguarded; }
  std::vector<std::string> run_log() const override;

  const TetFemModel& model() const { return *model_; }
  const SolidCounters& counters() const { return counters_; }
  double coarse_step() const { return h_; }
  const MultirateSolver* multirate() const { return multirate_.get(); }
  const std::vector<Index>& vertices() const { return vertices_; }
  /// Whether global vertex g is one of this body's (its vertices are consecutive).
  bool owns(Index g) const {
    return !vertices_.empty() && g >= vertices_.front() && g - vertices_.front() < static_cast<Index>(vertices_.size());
  }
  /// The planes of the steps' solves (backward Euler): set its finders before start().
  SolveContact& contact() { return contact_; }
  const SolveContact& contact() const { return contact_; }

 private:
  friend class SolidFineSource;
  friend class JointSolids;
  void gather(const VertexState& state, double t);
  /// The energy safeguard's Newton step (resolve_with_newton): projected tangent and
  /// damping, the body's α and β.
  BackwardEulerSettings newton_settings() const;
  /// The backward-Euler settings of this body's share of a joint step (JointSolids): its
  /// own, or for a Zhao body the safeguard's Newton step — Zhao's "collision can only be
  /// checked and handled at this rate" (h_L), as region_meets_solid() does.
  BackwardEulerSettings joint_settings() const;
  /// Gathers the state at `time` (x_, v_; x_start_ and v_new_ from them) and, with
  /// contact, finds the planes of a backward-Euler step of h (0: the body's own).
  void find_planes(Kernel& kernel, double time, double h = 0.0);
  /// v_a += dv_a for the listed local vertices (synced to t), reported to the kernel.
  void kick(Kernel& kernel, double t, const Eigen::VectorXd& dv, const std::vector<Index>& local);
  /// Counts an unconverged Newton step (`what`: which step) and warns with its gradient,
  /// the bound, and whether Newton stopped at the objective's rounding floor.
  void warn_unconverged(const char* what, double time, const BackwardEulerReport& r);
  /// The planes of a multi-rate step at `time` (header), given to the solver.
  void plan_multirate_contact(double time);
  /// Each plane's impulse Λ on the body over the large step just planned (step_):
  /// h_L k [(offset − n·y(x_m)) − β n·y(v_m)] on L, the sum of h_S k [...] at each
  /// substep's end on a region — what the linear system applied.
  void multirate_plane_impulses();
  /// The energy safeguard (energy_safeguard.hpp, solid_safeguard.cpp). Whether the kick
  /// v_new_ at x_n (with v_ before it, then a drift of h) ends the step with more
  /// energy than it started with: backward Euler's step, or a single-rate Zhao step.
  bool kick_gained_energy(const Eigen::VectorXd& x_n);
  /// The same for the multi-rate plan step_ (from x_ and v_): its positions and
  /// velocities at t_n + h_L (eq. 21–22).
  bool multirate_step_gained_energy();
  /// The plan's positions and velocities at t_n + h_L (eq. 21–22) into x_end_, v_end_.
  void plan_end_state();
  /// The share of the rotation u = rotation_ (at x_n) that the step of h ending at
  /// (x_end_, v_end_) may take (energy_limited_share), spending energy_credit_; counts
  /// and logs a cut.
  double rotation_share(const Eigen::VectorXd& x_n, double h);
  /// The safeguard's re-solve: the step from (x_n, v_) taken again as one converged
  /// backward-Euler step of h (Newton, line search, the planes found anew as backward
  /// Euler's one-sided ones). On success v_new_ holds its Δv and impulses_ the planes'
  /// impulses (loads recorded); false (a failed factorisation) leaves the step's planes.
  bool resolve_with_newton(double time, const Eigen::VectorXd& x_n);
  /// Whether a region at m > 1 holds a pair plane with another solid in this plan.
  /// Such a plane acts from a substep at the stiffness of a plane over h_L (κ/m² against
  /// a substep's inertia; plan_multirate_contact, where ×m broke other pairs), and the
  /// plan does not stop the approach: backward Euler at 5 ms against a 10 ms block at
  /// m = 2 took 0.165 N s in the plan (m = 1: 0.396), the faces met in the layers and
  /// 0.57 J went to 1.13 J; at m = 4 and 10 the faces grazed in the layers after the
  /// bounce and climbed back 3.5e-2 and 6.9e-3 of E0 (0.17 with spin; docs/zhao.md
  /// "Contact inside the large step"). The energy safeguard then re-solves the step as
  /// backward Euler at h_L (resolve_with_newton), as m = 1 steps it: Zhao's "collision
  /// can only be checked and handled at this rate" (h_L).
  bool region_meets_solid() const;
  /// The group (−1 L, i region i) of a plane's free vertices; −3: none, or mixed.
  int plane_group(const TickPlane& p) const;
  /// A free body's step dv (3n, applied at t_n at x_n = x_start, a step of h: the body's
  /// own, or a joint step's) made to change the
  /// angular momentum by exactly the external impulses' torque — gravity, α damping,
  /// the planes' impulses_ — by a rigid rotation ω × (x_n − C) about the mass centre C
  /// (no linear momentum, O(h²)): backward Euler's own change, −h² Σ v_{n+1} × f, and a
  /// deformed linear-FEM body's torque −Σ u × K u are cancelled, the latter not in a
  /// step on an obstacle (material_torque_is_external). With the energy safeguard on,
  /// only the share of the rotation the step's energy allows (energy_limited_share) is
  /// added.
  void keep_angular_momentum(const Eigen::VectorXd& x_n, Eigen::VectorXd& dv, double alpha, double h);
  /// The same for a multi-rate step with regions at m > 1 (step_, planned from x_ and
  /// v_): a region's increments land at its substeps, at the positions the plan has
  /// reached by then, so the step changes L by Σ_k Σ_a (x_a(t_k) − C) × m_a Δv_{a,k} over
  /// its kicks k. The rotation ω × r joins every vertex's first increment (so also the
  /// positions of the later kicks, which adds B ω to the change, B linear in the later
  /// increments) and solves (I + B) ω = −excess exactly for the plan.
  void keep_angular_momentum_multirate(double alpha);
  /// Whether this step's rotation counts the material's own torque as external
  /// (material_torque): for linear FEM in a step with an obstacle plane. Linear FEM is
  /// not rotation invariant; its forces carry the torque −Σ u × K u (u = x − X). In
  /// free flight and body–body contact the rotation cancels it, and angular momentum
  /// is exact (issue 41's momentum matrix uses linear FEM). On an obstacle that torque
  /// is what holds a tilted body at rest against gravity's and the obstacle's torques;
  /// cancelled, it is a torque the rotation adds at every step, at rest too, paid with
  /// the energy the body dissipated before (energy_credit_): a linear-FEM bunny dropped
  /// 4 mm tipped 40° and climbed back 26 % of its initial energy (sweep
  /// bunny_be_h10_4mm_mu0.5_damped_linear; docs/backward-euler.md "Angular momentum and
  /// energy"). The obstacle takes torques of its own, as pins do.
  bool material_torque_is_external() const;
  /// h Σ (x1 − C) × f_int(x1): the elastic forces' torque over a step of h ending at x1 (3n).
  Vec3 material_torque(const Eigen::VectorXd& x1, double h);
  /// An off-plan substep's response dv (SolidFineSource) on a region and, if given, its
  /// interface: internal, so it must carry no torque; a rigid rotation of those
  /// vertices about their mass centre (no linear momentum) takes its torque, plus
  /// `extra`, out.
  void cancel_response_torque(const std::vector<Index>& region, const std::vector<Index>* interface,
                              Eigen::VectorXd& dv, const Vec3& extra) const;

  std::string body_;
  std::vector<Index> vertices_;
  std::shared_ptr<TetFemModel> model_;
  std::vector<bool> fixed_;
  std::vector<Index> free_;
  std::vector<Index> free_global_;                ///< global indices of free_
  std::vector<std::vector<Index>> region_global_;  ///< per region: its global vertices
  Eigen::VectorXd f_ext_, x_, v_, v_new_;
  double h_ = 0.0;
  std::unique_ptr<BackwardEuler> euler_;
  std::unique_ptr<MultirateSolver> multirate_;
  bool energy_safeguard_ = true;
  std::unique_ptr<BackwardEuler> safeguard_;  ///< the safeguard's Newton solver
  Eigen::VectorXd x_end_, v_end_;            ///< the safeguard's end-of-step state
  Eigen::VectorXd rotation_;                 ///< ω × (x_n − C) per vertex (3n)
  Eigen::VectorXd x_share_, v_share_;        ///< energy_limited_share's scratch
  Eigen::VectorXd torque_x_, torque_g_;      ///< material_torque's scratch
  /// J: the energy the body's steps dissipated and the rotation has not spent (the
  /// negated sum of their balances; energy_limited_share).
  double energy_credit_ = 0.0;
  /// The share of the body's largest kinetic energy at a step's start (peak_kinetic_)
  /// that its rotations may create in all, beyond energy_credit_ (docs/backward-euler.md
  /// "Angular momentum and energy"). A damped body spinning at Ω, stepped at h, holds
  /// the elastic energy of a stretch the steps' drift makes, O((h Ω)²), once L is
  /// exact: a spinning Zhao block at h_L = β = 10 ms, 1 rad/s, 1.5e-5 of its kinetic
  /// energy (test_zhao_spin_momentum). With no budget the rule cut its rotation and
  /// lost L (4e-5). A tenth of issue 41's energy bound (1e-3).
  static constexpr double kRotationBudget = 1e-4;
  double peak_kinetic_ = 0.0;  ///< J: the largest Σ ½ m v² at a step's start so far
  MultirateStep step_;
  EventKind fine_kind_ = 0;
  SolidFineSource* fine_ = nullptr;
  StepClock clock_;          ///< t_n = t0 + n h (engine/step_clock.hpp)
  std::uint64_t next_step_ = 0;  ///< n of the next large step
  std::uint64_t current_ = 0;  ///< n of the current large step
  Eigen::VectorXd v_start_;  ///< velocities at t_n (multi-rate: the plan's reference)
  Eigen::VectorXd x_start_;  ///< positions at t_n (multi-rate: the plan's start)
  std::vector<char> off_plan_;  ///< per region: substeps solved from the kernel's state
  /// No self pairs (a tet's step couples only its tets); pair planes on the reduced mass.
  SolveContact contact_{false, true};
  std::vector<double> impulses_;  ///< per plane, over a step
  /// A multi-rate step's obstacle planes left out of its solve (plan_multirate_contact:
  /// neither x_n nor the point's prediction is behind them; process()'s active set did
  /// not take them): the energy safeguard re-solves a plan that lands behind them
  /// (unheld_plane_energy).
  std::vector<TickPlane> unheld_;
  /// The first substep r (1 on L) after which the plan's position of plane p's point is
  /// behind it; 0 if none (or p straddles groups).
  int first_substep_behind(const TickPlane& p) const;
  /// Per plane of a multi-rate step: in the set the step was solved with, in the next
  /// set (process()'s active set); acting_ the planes of the set.
  std::vector<char> solved_with_, next_with_;
  std::vector<TickPlane> acting_;
  /// At most this many solves of a multi-rate step with planes: the first, then one per
  /// change of its active set (a step whose set still changes after them is taken as
  /// solved, with the planes it was solved with).
  static constexpr int kMaxPlanePasses = 8;
  void record_plane_impulses(const Eigen::VectorXd& x_end, std::span<const TickPlane> planes);
  SolidCounters counters_;
  std::shared_ptr<JointSolids> joint_;
  /// The step n that JointSolids took with another solid's (this event only advances).
  std::uint64_t joint_step_ = std::numeric_limits<std::uint64_t>::max();
  /// Per local vertex: its share of the net normal load of the joint step before the
  /// one at joint_share_time_ (N; JointSolids sets the stiffness of the pair planes by it).
  std::vector<double> joint_share_;
  double joint_share_time_ = -1.0;
};

/// The fine events of a multi-rate solid: slot i applies region i's substep increments.
class SolidFineSource final : public EventSource {
 public:
  explicit SolidFineSource(SolidSource& coarse) : coarse_(coarse) {}
  std::string_view name() const override { return "fine:zhao"; }
  int stencil_size(EventSlot slot) const override;
  std::span<const Index> stencil_vertices(EventSlot slot) const override {
    return coarse_.region_global_[slot];
  }
  double process(EventSlot slot, double time, Kernel& kernel) override;
  /// Called by the coarse event: region i's next substep is r = 1.
  void begin(EventSlot region) { next_[region] = 1; }

 private:
  /// Whether a vertex of region i's tets has a velocity other than the plan's before
  /// substep r (v(t_n) + Δv^L + Δv^S_{0,r}).
  bool left_plan(EventSlot region, int r, const VertexState& state) const;
  /// dx_plan_, dv_plan_ on the region's stencil: the gathered state (coarse_.x_, v_)
  /// minus the plan's at fine event r, before its kick.
  void plan_difference(EventSlot region, int r);
  friend class SolidSource;
  friend class JointSolids;
  SolidSource& coarse_;
  std::vector<int> next_;          ///< per region: index r of the next substep
  Eigen::VectorXd dv_;
  Eigen::VectorXd dx_plan_, dv_plan_;  ///< the state minus the plan, on region stencils
};

}  // namespace clockwork
