#pragma once
/// Schroeder, Kwatra, Zheng and Fedkiw, "Asynchronous evolution for fully-implicit and
/// semi-implicit time integration" (shared/papers/schroeder-async-evolution-*):
/// the semi-implicit scheme (§3.1), the fully-implicit scheme (§3.2, the final,
/// unconditionally stable variant), and the asynchronous scheme (§4.3) that evolves the
/// semi-implicit elements E at substeps Δt and the fully-implicit elements I at the
/// frame rate Δt_frame = p Δt, coupled in the last substep of every frame, with the
/// force-distributing projection of §5 (integrators/schroeder/schroeder_projection.hpp) and the
/// position-targeting collision response of §6 against static bodies
/// (contact/obstacles/static_collider.hpp), by default as a constraint of the implicit solves.
///
/// Every step has the form of §4: a *position update* (a half-step velocity
/// v^{n+½} from x^n, v^n; then x^{n+1} = x^n + Δt v^{n+½}) and a *velocity update*
/// (v^{n+1} from v^n at x^{n+1}). With h = Δt/2, forces f = −∇E (TetFemModel, split into
/// the E and I element sets), Rayleigh damping D = α_R M + β_R K (the mass part goes
/// with E: it is per particle, like gravity f_g, which acts on every particle in every
/// substep), and the linearisation f(x + c v) ≈ f(x) − c K v of [BW98] (K the
/// stiffness at x, PSD-projected for corotational FEM; the damping-only solves of the
/// substeps after a frame's first keep that substep's K):
///
///   semi-implicit §3.1   M(v½ − vⁿ) = h (f_E(xⁿ) − D_E v½ + f_g)
///                        M(vⁿ⁺¹ − vⁿ) = Δt (f_E(xⁿ⁺¹) − D_E vⁿ⁺¹ + f_g)
///   fully-implicit §3.2  M(v½ − vⁿ) = h (f(xⁿ + h v½) − D v½ + f_g)
///                        M(vⁿ⁺¹ − vⁿ) = Δt (f(xⁿ⁺¹ + Δt vⁿ⁺¹) − D vⁿ⁺¹ + f_g)
///   coupled §4.3         v½ = vⁿ + h (a_E(xⁿ, v½) + α a_I(xⁿ + α h v½, v½))
///                        vⁿ⁺¹ = vⁿ + Δt â(xⁿ⁺¹ + Δt vⁿ⁺¹, vⁿ⁺¹)
/// with α = (2Δt_frame − Δt)/Δt (§4.3) and â the force scaling of §4.1 on I
/// (f̂ = α f, ∂f̂/∂v = α ∂f/∂v, ∂f̂/∂x = α² ∂f/∂x). The coupled position update uses
/// α h where the paper prints α Δt: see docs/schroeder.md, decision 1 (with α h the
/// coupled step at p = 1 is exactly §3.2). The other p − 1 substeps of a frame are
/// semi-implicit on E only, with the forces on the particles of I distributed by
/// P_ε (§5): M Δv = P_ε(h (f_E − D_E v)) + h f_g.
///
/// Each update is one linear system M Δv + P_ε B Δv = P_ε r (B symmetric PSD: the
/// damping and stiffness terms above; P_ε = I when not projecting), solved by
/// conjugate gradients in mass-scaled unknowns (Π_ε = M^{-1/2} P_ε M^{1/2} is
/// symmetric): (Π_ε + Π_ε B̃ Π_ε) u = Π_ε r̃, M^{1/2} Δv = Π_ε u — for ε ∈ {0, 1} this is
/// CG with Π_ε as its projection, "used as a projection inside CG" (§5). The solution
/// is shifted by a uniform velocity so that its momentum is exactly that of the forces
/// (CG's residual may carry a net force; B's stiffness terms and P_ε have none), so
/// linear momentum is conserved whatever the CG tolerance (bodies with no fixed
/// vertex). The CG starts from the free-fall answer, so free fall takes zero
/// iterations and gets exactly h g and Δt g. (The re-evaluation of the forces with the
/// solution of §4.2.2 is not used: at frame-size steps it amplifies CG's residual by
/// (ω Δt)², which grew without bound in our tests.)
///
/// §6 collisions. The paper reduces a particle's normal velocity after the solve so
/// that it lands on the surface, and zeroes the approaching normal velocity after the
/// velocity update ("the final contact step"). At frame-size steps the solve then
/// assumes those particles free to move into the obstacle, and a body resting on it
/// settles flattened (a linear ball 26 % flattened at 1/24 s). With
/// `constrain_collisions` (the default) the same two conditions are constraints of the
/// solves instead ([BW98]'s filtered CG: the normal component of the particle's Δv is
/// prescribed, its tangential part free), with an active set: a particle whose
/// constraint would pull it onto the surface is released, one that would cross it is
/// added, and the solve repeated (at most kMaxContactRounds solves per update). The
/// constraint impulse J = n·(A Δv − b) is the normal impulse friction is taken from.
/// The paper's after-the-solve response stays as the last word (it changes nothing
/// when the constraints hold).
///
/// Asynchronous scheme in contact: from a substep whose particles touch, or are within
/// two substeps' drift of, a collider to the frame's end every substep is coupled
/// (α = 2m − 1 after m − 1 uncoupled substeps), because an interior that feels no force
/// of its own for the rest of the frame flies through a landed shell and creates elastic
/// energy (docs/schroeder.md, decision 9). The same from a substep whose
/// interior particles move relative to their rigid motion fast enough to deform their
/// elements by kInteriorDrift within a frame (a ball vibrating after a bounce; decision
/// 12).
#include <algorithm>
#include <Eigen/Sparse>
#include <memory>
#include <vector>

#include "integrators/implicit/backward_euler.hpp"
#include "integrators/solvers/nonlinear.hpp"
#include "integrators/schroeder/schroeder_projection.hpp"
#include "contact/obstacles/static_collider.hpp"
#include "integrators/fem/tet_fem.hpp"

namespace clockwork {

/// y without its component along the unit normal n (the §6 collisions' sliding part).
inline Vec3 tangential_part(const Vec3& y, const Vec3& n) { return y - n.dot(y) * n; }

enum class SchroederScheme { SemiImplicit, FullyImplicit, Asynchronous };

struct SchroederSettings {
  SchroederScheme scheme = SchroederScheme::Asynchronous;
  /// s: the fully-implicit step, and the asynchronous frame (the period of the coupled
  /// step). Semi-implicit: optional (0); if given, the step is rounded down to divide it.
  double frame_dt = 0.0;
  /// s: the semi-implicit step or asynchronous substep; 0 = from the stability limit of
  /// the semi-implicit elements, safety × √2/ω_max (§3.1's scheme is stable for
  /// ω Δt ≤ √2; ω_max² the largest eigenvalue of M^{-1/2} K_E M^{-1/2} at rest). Asynchronous with
  /// a given substep: frame_dt must be a multiple of it.
  double substep = 0.0;
  double safety = 0.8;          ///< (0, 1]: fraction of the stability limit
  double epsilon = 0.5;         ///< §5, in [0, 1]
  double rayleigh_alpha = 0.0;  ///< 1/s
  double rayleigh_beta = 0.0;   ///< s
  double cg_tolerance = 1e-8;   ///< relative residual
  int cg_max_iterations = 5000;
  std::vector<StaticCollider> colliders;  ///< §6 static obstacles
  /// §6 contact as a constraint of the implicit solves (false: only after them, as
  /// printed in the paper).
  bool constrain_collisions = true;
  /// Asynchronous: couple every remaining substep of a frame once the particles of I
  /// move relative to their rigid motion enough to deform their elements by
  /// kInteriorDrift within a frame (false: the paper's schedule, coupled only at the
  /// frame's last substep and near colliders). Not a scene key.
  bool couple_deforming_interior = true;
  /// The rigid rotation that keeps angular momentum (decision 13, keep_angular_momentum;
  /// false: the schemes as printed, which do not keep it). Not a scene key: tests
  /// compare the two.
  bool keep_angular_momentum = true;
  /// The fully-implicit updates' energy safeguard (docs/schroeder.md, decision 15): an
  /// update whose balance gained energy is re-solved converged. Not a scene key: off
  /// only in tests that show what it prevents.
  bool energy_safeguard = true;
  /// The fully-implicit step's whole-step check (docs/schroeder.md, decision 16): a step
  /// whose balance (xⁿ, vⁿ) → (xⁿ⁺¹, vⁿ⁺¹) gains energy is taken as 2, 4, … 16 §3.2
  /// steps of Δt/k inside the position update's event. Not a scene key.
  bool split_gaining_steps = true;
};

/// Throws std::invalid_argument naming the setting and its value: a non-positive or
/// non-finite step, ε outside [0, 1], safety outside (0, 1], a frame that is not a
/// multiple of a given asynchronous substep, a bad collider (validate_static_collider).
void validate_schroeder_settings(const SchroederSettings& s);

/// Tets with a vertex on a boundary face (`faces`, e.g. boundary_faces of the mesh):
/// the automatic semi-implicit set of §7 ("surface elements ... semi-implicitly").
std::vector<bool> tets_touching_faces(const std::vector<std::array<Index, 4>>& tets,
                                      const std::vector<std::array<Index, 3>>& faces,
                                      std::size_t vertex_count);

struct SchroederCounters {
  std::uint64_t steps = 0;          ///< substeps completed (velocity updates)
  std::uint64_t coupled_steps = 0;  ///< of which coupled (fully-implicit: all)
  std::uint64_t solves = 0;         ///< CG solves
  std::uint64_t cg_iterations = 0;  ///< summed
  int max_cg_iterations = 0;        ///< in one solve
  std::uint64_t unconverged = 0;    ///< solves stopped at cg_max_iterations
  std::uint64_t collisions = 0;     ///< §6 particle–obstacle collisions processed
  std::uint64_t contact_resolves = 0;  ///< extra solves for a changed contact set
  std::uint64_t contact_round_limit = 0;  ///< updates that stopped at kMaxContactRounds
  /// Events whose angular-momentum rotation was cut because all of it would have
  /// created energy (keep_angular_momentum, energy_limited_share's rule): their L is not
  /// exact.
  std::uint64_t rotation_limited = 0;
  double first_cut_share = 1.0;  ///< the share the first cut kept
  /// Fully-implicit updates whose energy balance was checked (energy_safeguard), and
  /// of those the ones that gained energy and were re-solved by Newton (decision 15).
  std::uint64_t safeguard_checks = 0;
  std::uint64_t safeguarded = 0;
  std::uint64_t safeguard_newton_iterations = 0;  ///< the re-solves' Newton steps, summed
  std::uint64_t safeguard_unconverged = 0;  ///< re-solves that kept their last iterate
  /// Fully-implicit steps whose whole-step balance was checked (decision 16), those that
  /// gained and were split into k steps of Δt/k, and the largest k.
  std::uint64_t whole_step_checks = 0;
  std::uint64_t split_steps = 0;
  int max_split = 1;
};

class SchroederStepper {
 public:
  using Vector = Eigen::VectorXd;
  using Sparse = Eigen::SparseMatrix<double>;

  /// `model`: the whole body (its lumped masses and elements), `materials` the per-tet
  /// materials it was built with (the element sets E and I are TetFemModels over the
  /// same vertices, so the element code is shared); `semi_tets`: per tet,
  /// whether it is in E (ignored by the synchronous schemes, which put every tet in E
  /// (semi-implicit) or I (fully-implicit)); `fixed`: per vertex, prescribed (keeps
  /// its velocity). Throws std::invalid_argument for bad settings or sizes.
  SchroederStepper(const TetFemModel& model, const std::vector<TetMaterial>& materials,
                   const std::vector<bool>& semi_tets, std::vector<bool> fixed, const Vec3& gravity,
                   SchroederSettings settings);
  ~SchroederStepper();

  const SchroederSettings& settings() const { return settings_; }
  /// More §6 static bodies (the scene's obstacles: World), before the first update.
  /// Throws std::invalid_argument for a bad one (validate_static_collider).
  void add_colliders(const std::vector<StaticCollider>& colliders);
  double substep() const { return dt_; }
  /// Substeps per frame p (semi-implicit without a frame: 1).
  int substeps_per_frame() const { return p_; }
  /// α = (2Δt_frame − Δt)/Δt of the frame's coupled step (one coupled early because of
  /// a collider uses 2m − 1, m the substeps since the last coupled one).
  double alpha() const { return alpha_; }
  /// Largest ω of M^{-1/2} K_E M^{-1/2} at rest (power iteration), rad/s; 0 if E is empty.
  double omega_max() const { return omega_max_; }
  std::size_t semi_implicit_tets() const { return n_semi_tets_; }
  /// Particles of the fully-implicit elements (the subset of §5).
  const ForceDistribution& distribution() const { return dist_; }
  /// Index of the next substep within its frame, 0..p−1 (p − 1: the coupled one).
  int step_in_frame() const { return k_; }
  bool next_step_coupled() const;
  const SchroederCounters& counters() const { return counters_; }

  /// Position update of the next substep from x, v (3n): w = v^{n+½}, with the §6
  /// collision response applied to w and (the same impulse) to v.
  void position_update(const Vector& x, Vector& v, Vector& w);
  /// Velocity update of the substep begun by position_update, at its end positions
  /// x1: v ← v^{n+1}; then contact (§6: the particles that collided keep no approaching
  /// normal velocity). Advances the substep index.
  void velocity_update(const Vector& x1, Vector& v);
  /// One whole substep (synchronous use, tests, benchmarks): x, v in and out.
  void step(Vector& x, Vector& v);

  /// A §6 contact as a constraint of a solve. Sticking (static friction, while the
  /// tangential impulse stays inside the cone μ J_n): the whole Δv_a is prescribed.
  /// Sliding: only n·Δv_a is (n·target); the tangential part is free under the
  /// kinetic friction impulse μ J_n, a known force of the solve along the direction
  /// the sticking constraint pushed (the Coulomb projection of that impulse).
  struct Contact {
    Index vertex = 0;
    int collider = 0;
    Vec3 normal = Vec3::UnitZ();
    Vec3 target = Vec3::Zero();
    bool stick = false;
    double impulse = 0.0;           ///< normal impulse the constraint took, N·s (< 0: pulls)
    Vec3 tangential = Vec3::Zero();  ///< sticking: the tangential impulse it took, N·s
    Vec3 friction = Vec3::Zero();    ///< sliding: the friction impulse applied, N·s
    bool overshot = false;  ///< sliding: the last solve's friction reversed its slide
    /// Sticking again after its friction reversed its slide: it does not slide again
    /// within that update.
    bool held = false;
    /// The collider's impulse on the particle in the last solve (constraint + friction), N·s.
    Vec3 applied = Vec3::Zero();
  };
  /// The §6 contacts of the last update (constrain_collisions): after a position
  /// update those it landed, after a velocity update those that held (the seeds of
  /// the next position update).
  const std::vector<Contact>& contacts() const { return contacts_; }

  /// Elastic energy of both element sets at x, J.
  double elastic_energy(const Vector& x) const;

 private:
  /// An update's terms: forces × t_E, t_I, gravity × t_g, damping m_damp α_R M +
  /// k_E K_E + k_I K_I, the §5 projection.
  struct Coefficients {
    double t_E = 0, t_I = 0, t_g = 0;
    double m_damp = 0, k_E = 0, k_I = 0;
    bool project = false;
  };
  static constexpr int kMaxContactRounds = 6;

  void solve(const Vector& x, const Vector& v, const Coefficients& c, Vector& dv);
  /// Solves with contacts_ as constraints, dropping those that pull (impulse < 0),
  /// letting sticking ones slide when their tangential impulse leaves the friction
  /// cone and, when `add_crossing` (position updates), adding particles whose
  /// x + Δt (v + Δv) would cross an obstacle, until the set stops changing.
  void solve_with_contacts(const Vector& x, const Vector& v, const Coefficients& c,
                           bool add_crossing);
  /// Whether the solves take the §6 contacts as constraints.
  bool constrain_contacts() const;
  /// A contact of particle a with a collider, sticking if that collider has friction.
  Contact new_contact(Index a, int collider, const Vec3& n, const Vec3& target) const;
  void filter_contacts(Vector& y) const;
  /// Angular momentum (docs/schroeder.md, decision 13). An event of the kernel
  /// is a velocity update and the next position update (or the first position update
  /// alone): the velocities the kernel holds change from v^{n−½} (+ other bodies' kicks)
  /// to v^{n+½}, by Δv_vel + Δv_pos' − Δv_pos (the last position update's increment,
  /// held in v^{n−½} only, is taken back). Its external part is the same combination of
  /// the updates' external impulses — gravity, Rayleigh α damping, the §6 colliders'
  /// constraint, friction and after-solve responses (event_ext_) —, the rest is
  /// internal and carries a torque: the semi-implicit substep's (Δt²/2) Σ f(xⁿ) × vⁿ,
  /// the implicit terms', a deformed linear-FEM body's −Σ u × K u. At the end of the
  /// position update a rigid rotation ω × (x − C) about the mass centre C (no linear
  /// momentum) joins w and v (so it is kept) and cancels that torque: the kernel's
  /// angular momentum changes by exactly the external impulses' torque. Not with fixed
  /// vertices (pins take torques of their own), nor in an event that touched a static
  /// collider (it takes momentum: the solves' momentum shift is left out there too), nor
  /// when the rotation would carry a particle into one. Nor beyond the energy the body
  /// has dissipated (docs/solids.md "Schroeder", decision 14): the rotation's share is
  /// cut by limited_share (integrators/implicit/energy_safeguard.hpp) to keep the
  /// event's balance — from the last event's state (x, v with the other bodies' kicks)
  /// to this one's, (xⁿ, vⁿ + s u) — within the energy earlier events dissipated
  /// (energy_credit_).
  void open_event(const Vector& v);
  void keep_angular_momentum(const Vector& x, Vector& v, Vector& w);
  /// Whether x + Δt (w + ω × (x − C)) puts a particle within kOnSurface of a collider.
  bool rotation_crosses(const Vector& x, const Vector& w, const Vec3& omega,
                        const Vec3& centre) const;
  /// solve_ext_ = the external impulses of the solve just done from v with Δv = dv:
  /// gravity t_g m g, Rayleigh α damping −m_damp α_R m (v + Δv) (P_ε keeps its net force
  /// and torque), the contacts' applied impulses.
  void record_external(const Vector& v, const Coefficients& c, const Vector& dv);
  /// The Δv of a particle at x with velocity v that lands on the plane through s with
  /// normal n after Δt, with no tangential drift (a sliding contact keeps only n·).
  /// Whether the body holds §6 contacts or a free particle is on, or within 2Δt v of,
  /// a collider (the asynchronous scheme then couples the substep).
  bool near_collider(const Vector& x, const Vector& v) const;
  Vec3 landing(const Vec3& x, const Vec3& v, const Vec3& n, const Vec3& s) const;
  /// Whether the particles of I move relative to their rigid motion of best fit fast
  /// enough (rms over the frame) to deform their elements by kInteriorDrift of their
  /// mean rest edge within a frame (the asynchronous scheme then couples the substep).
  bool interior_deforming(const Vector& x, const Vector& v);
  /// Friction from the normal impulse J on particle a (the §6 response after a solve):
  /// Coulomb-limited removal of the tangential part of y_a (the velocity) by μ J / m_a.
  void apply_friction(Index a, const StaticCollider& body, const Vec3& n, double impulse,
                      Vector& y) const;
  /// The energy safeguard of a fully-implicit update (decision 15,
  /// schroeder_safeguard.cpp): the update just solved from (x, v), Δv = dv_, is the
  /// linearisation of a backward-Euler step of τ (its forces at x + τ v'); if that
  /// step's balance (energy_safeguard.hpp) gained energy, dv_ becomes the converged
  /// step's (BackwardEuler, Newton with line search).
  void safeguard_update(const Vector& x, const Vector& v, const Coefficients& c, double tau);
  /// The coefficients of a position (half) or velocity update of a step of `dt`.
  Coefficients update_coefficients(bool position, bool coupled, double dt) const;
  /// The whole-step check of a fully-implicit step (decision 16,
  /// schroeder_whole_step.cpp), at the end of its position update from (x, v) with
  /// w = v^{n+½}: the velocity update the next event would take is solved now (and
  /// kept for it); if the step (xⁿ, vⁿ) → (xⁿ + Δt w, vⁿ⁺¹) gained energy, it is
  /// taken as k §3.2 steps of Δt/k instead (k = 2, 4, … 16, the first whose balance
  /// holds), w set to land where they end and their end velocity handed to the
  /// velocity update.
  void check_whole_step(const Vector& x, const Vector& v, Vector& w);
  /// One §3.2 step of τ from (x, v) without contacts (x, v in and out).
  void plain_step(Vector& x, Vector& v, double tau);
  /// The velocity update's Δv prepared by check_whole_step for the kernel's (x1, v)
  /// (dv_, solve_ext_ set), or false: solve as usual.
  bool take_prepared_velocity_update(const Vector& x1, const Vector& v, const Coefficients& c);
  void ensure_stiffness(const Vector& x, bool need_E, bool need_I, bool refresh);
  void apply_B(const Coefficients& c, const Vector& y, Vector& out);

  const TetFemModel& model_;
  SchroederSettings settings_;
  std::vector<bool> fixed_;
  bool any_fixed_ = false;
  Vec3 gravity_;
  std::unique_ptr<TetFemModel> model_E_, model_I_;  ///< null when the set is empty
  std::size_t n_semi_tets_ = 0;
  ForceDistribution dist_;
  ForceDistribution interior_;  ///< the particles of I (asynchronous), whatever ε
  double interior_edge_ = 0.0;  ///< mean rest edge of the I tets, m
  /// Relative deformation of the I elements within a frame above which the
  /// asynchronous scheme couples every substep (docs/schroeder.md, decision 12).
  static constexpr double kInteriorDrift = 0.01;
  double dt_ = 0.0, alpha_ = 1.0, omega_max_ = 0.0;
  int p_ = 1, k_ = 0;
  int uncoupled_ = 0;       ///< substeps since the last coupled one
  bool coupled_ = false;    ///< the current substep is coupled
  bool touched_ = false;    ///< near a collider or deforming in this frame: every substep coupled
  double alpha_now_ = 1.0;  ///< its α
  Vector mass3_, inv_sqrt_mass3_, free3_;  ///< per DOF; free3_: 1 free, 0 fixed
  Sparse K_E_, K_I_;
  Vector x_KE_, x_KI_;  ///< positions of the last corotational K_E, K_I
  // Per-solve buffers (allocation-free after the first step).
  Vector f_E_, f_I_, r_, b_, u_, q_, tmp_, tmp2_, diag_, z_, kb_, dv_, dstar_, w_;
  PcgWorkspace pcg_;  ///< the filtered PCG's residual, directions and products
  std::vector<int> colliding_;  ///< per vertex: collider index of §6 contact, or −1
  /// Whether any particle is in §6 contact with a collider (colliding_).
  bool any_colliding() const {
    return std::any_of(colliding_.begin(), colliding_.end(), [](int c) { return c >= 0; });
  }
  static constexpr int kReleased = -2;  ///< colliding_ while solving: released this update
  static constexpr double kOnSurface = 1e-12;  ///< m: a landing this close is a contact
  std::vector<Index> released_;
  std::vector<Contact> contacts_;  ///< the constraints of the current solve
  /// External impulses (open_event): of the last solve, of the last position update's
  /// solve (in v^{n+½} only), of the current kernel event.
  Vector solve_ext_, half_ext_, event_ext_;
  Vector half_dv_;      ///< w − v after the last position update
  Vector event_v_;      ///< v when the event opened (other bodies' kicks included)
  bool event_open_ = false;
  bool event_collided_ = false;  ///< the event touched a static collider
  // The rotation's energy limit (keep_angular_momentum).
  Vector rotation_;        ///< ω × (x − C) of the event
  Vector v_share_;         ///< v + s ω × (x − C) (scratch)
  Vector f_ext_;           ///< m g per DOF (the balance's external work)
  Vector x_event_;         ///< positions of the last event
  double elastic_event_ = 0.0;  ///< elastic energy there, J
  bool have_event_ = false;     ///< x_event_ holds a state
  /// Energy the body's events dissipated and no rotation has spent (the negated sum of
  /// their balances; an event that touched a collider only spends it), J.
  double energy_credit_ = 0.0;
  // The energy safeguard (safeguard_update).
  std::unique_ptr<BackwardEuler> newton_;  ///< made at the first re-solve
  Vector x_end_, v_end_;                   ///< the update's end state (scratch)
  // The whole-step check (check_whole_step): the velocity update solved ahead for the
  // drift's end trial_x1_ from trial_v_ (trial_dv_, trial_ext_), or a split step's end
  // velocity split_v_ from the position update's vⁿ trial_v_.
  enum class Prepared { None, Trial, Split };
  Prepared prepared_ = Prepared::None;
  Vector trial_x1_, trial_v_, trial_dv_, trial_ext_, split_x_, split_v_;
  SchroederCounters counters_;
};

}  // namespace clockwork
