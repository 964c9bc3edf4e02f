#pragma once
/// Contact inside an implicit solve (DESIGN §7): the features near a body at the
/// start of its step or tick — obstacle features and the contact system's near element
/// pairs — as one-sided planes on its landing positions (tick_plane.hpp), which enter
/// the solve's energy; the other body of a pair takes the plane's reaction at once.
/// Shared by the phantom ticks (docs/phantom.md "Obstacles in the tick", "Near pairs in
/// the tick") and the coarse steps of backward-Euler solids (docs/backward-euler.md "Contact
/// inside the step"). The penalty layers and certificates stay the guarantee against
/// interpenetration; the planes keep implicit bodies from answering contact one step
/// late (an explicit impulse against an implicit step longer than the contact's
/// elastic period creates energy).
#include <functional>
#include <span>
#include <vector>

#include "engine/kernel.hpp"
#include "integrators/energy/tick_plane.hpp"

namespace clockwork {

/// A body that takes a pair plane's reaction through its own bookkeeping (a phantom
/// body changes both of its copies' velocities).
class ImpulseReceiver {
 public:
  virtual ~ImpulseReceiver() = default;
  /// An impulse J on local vertex a at `time`.
  virtual void receive_impulse(Index a, const Vec3& impulse, double time, Kernel& kernel) = 0;
};

/// Something the landing point of a tick must keep clear of (docs/phantom.md
/// "Obstacles in the tick", "Near pairs in the tick"): the combination Σ w_i x_i of
/// local vertices (zero weights unused) and the other side's point p and velocity u, so
/// that y = Σ w_i q_i − p is the separation at the tick's start.
///  - obstacle: Σ w x a point of the body's surface (weights ≥ 0, sum 1), p the
///    obstacle's closest point; the plane keeps the landing point `clearance` off it.
///  - pair: a near element pair of deformable surfaces (distance.hpp's signed
///    weights); own vertices in `vertices`, another body's folded into p and u
///    (p = −Σ w_j q_j over them). The plane keeps the pair from closing below
///    min(its gap now, `clearance`): it stops an approach without pushing the pair
///    apart, which stays the penalty layers' work. The other body's primary vertices
///    take the opposite impulse at once (momentum is exchanged, not made).
struct TickContactFeature {
  std::array<Index, TickPlane::kMaxVertices> vertices{};
  Eigen::Vector4d weights = Eigen::Vector4d::Zero();
  Vec3 point = Vec3::Zero(), velocity = Vec3::Zero();
  bool pair = false;
  /// A pair's vertices in other bodies (global indices, zero weights unused): they
  /// take the reaction of the plane's impulse.
  std::array<Index, TickPlane::kMaxVertices> others{};
  Eigen::Vector4d other_weights = Eigen::Vector4d::Zero();
  /// The other body's phantom, if it has one (its vertices are local from
  /// `other_first`): the reaction goes to both its copies (receive_impulse).
  ImpulseReceiver* other_phantom = nullptr;
  Index other_first = 0;
  /// Σ w_j²/m_j over the other body's vertices (the kernel's masses; 0 for obstacles):
  /// a solid's pair plane is as stiff as the pair's reduced mass allows, since the
  /// other side takes its force explicitly (SolveContact::add_planes).
  double other_inverse_mass = 0.0;
  /// A pair's other point's own velocity −Σ w_j v_j (`velocity` is the two sides'
  /// common one).
  Vec3 other_velocity = Vec3::Zero();
  /// The other body is a solid that plans pairs too (SolveContact::add_planes).
  bool other_solid = false;
  /// The pair was solved in one system with the other body (joint_solids.hpp): each
  /// side took its impulse in the solve, so no reaction is given (apply_impulses).
  bool joint = false;
  /// A pair the other body plans (TickPairFinder): no plane here; SolveContact keeps a
  /// vertex of the other body (planned_by_others), for JointSolids.
  bool planned_by_other = false;
};
/// Fills `out` with the body's features at time t (the primary positions); `reach` is
/// how far a point of the body can move in the tick (obstacle finders add the
/// obstacles' own motion to it; pair finders report the live near pairs).
using ContactFinder = std::function<void(double t, double reach, std::vector<TickContactFeature>& out)>;

struct TickContactSettings {
  /// m: the separation the planes keep (scenes, unless given: obstacles twice the
  /// contact thickness η(1), so that the planes' own give stays out of the layers;
  /// near pairs η(1))
  double clearance = 0.0;
  /// m: the clearance of a pair plane whose other side is a solid, in a solve whose pair
  /// planes are on the reduced mass (a solid's); 0: `clearance` (scenes: 2 η(1) for a
  /// backward-Euler or Zhao body unless `deformable_clearance` is given). The planes' give then
  /// stays out of the first layer, as an obstacle plane's (SolveContact::add_planes).
  double solid_clearance = 0.0;
  /// κ: the planes' stiffness as a multiple of the point's inertia term m/h². A plane
  /// stops an approach at speed u within a violation of about u h / κ (0.4 mm for
  /// 4 m/s at 1 ms with κ = 10); stiffer planes cost solver iterations (docs/phantom.md).
  double stiffness = 10.0;
  /// Coulomb μ of the obstacle planes (solids: the scene contact's `friction`; the
  /// planes carry no friction in a phantom tick): SolveContact::add_friction.
  double friction = 0.0;
};


/// The planes of one body's implicit solve. Local vertex a is global vertices[a].
class SolveContact {
 public:
  /// Self pairs (both sides in the body) are kept unless `self_pairs` is false: a tet
  /// solid's step couples only the vertices of its tets, so a plane between two far
  /// points of its surface has no place in its Hessian; its layers handle them.
  /// `reduced_mass`: a pair plane's stiffness is κ over the inertia of both sides (the
  /// solids'; add_planes), else of the body's side only (the phantom ticks', as
  /// measured in docs/phantom.md).
  explicit SolveContact(bool self_pairs = true, bool reduced_mass = false)
      : self_pairs_(self_pairs), reduced_mass_(reduced_mass) {}

  void set_obstacles(ContactFinder finder, TickContactSettings settings) {
    obstacles_ = std::move(finder);
    obstacle_settings_ = settings;
  }
  void set_pairs(ContactFinder finder, TickContactSettings settings) {
    pairs_ = std::move(finder);
    pair_settings_ = settings;
  }
  bool any() const { return static_cast<bool>(obstacles_) || static_cast<bool>(pairs_); }

  /// The planes for a step of h from `time`: `x` the local positions (3n) at `time`,
  /// `fixed` and `mass` (the full lumped masses) per local vertex, `speed` the fastest
  /// motion of a point of the body over the step (m/s). With the velocities `v` (local,
  /// 3n), an obstacle plane that the point approaches at speed u is stiff enough that
  /// its give, about u h / κ, stays within a quarter of the clearance: κ ≥ 4 u h / c
  /// (a block landing at 1.7 m/s with h = 10 ms and κ = 10 went 1.7 mm past its 2 mm
  /// plane, into the 1 mm layer, whose explicit impulses added 0.7 J to its 2.2 J).
  void find(double time, double h, double speed, const Eigen::VectorXd& x,
            const std::vector<bool>& fixed, const std::vector<double>& mass,
            const Eigen::VectorXd* v = nullptr);
  const std::vector<TickPlane>& planes() const { return planes_; }
  std::vector<TickPlane>& planes() { return planes_; }
  /// Whether plane k is a pair plane whose other side is a solid (backward Euler, Zhao,
  /// Schroeder): the one-sided active set of SolidSource's multirate step covers these.
  bool solid_pair(std::size_t k) const { return plane_features_[k].pair && plane_features_[k].other_solid; }
  /// The feature plane k was made from.
  const TickContactFeature& feature(std::size_t k) const { return plane_features_[k]; }
  /// The clearance of a pair plane whose other side is a solid (add_planes).
  double solid_pair_clearance() const {
    return pair_settings_.solid_clearance > 0.0 ? pair_settings_.solid_clearance : pair_settings_.clearance;
  }
  /// κ of the pair planes (TickContactSettings::stiffness).
  double pair_stiffness() const { return pair_settings_.stiffness; }
  /// Coulomb μ of the pair planes (JointSolids: between solids stepped together).
  double pair_friction() const { return pair_settings_.friction; }
  /// Marks pair plane k as solved jointly with the other body (TickContactFeature::joint).
  void mark_joint(std::size_t k) { plane_features_[k].joint = true; }
  /// Appends the body's side of a pair plane another body planned and solved jointly
  /// with it (its vertices local to this body, signed weights): its impulse then counts
  /// in this body's loads and torques.
  void add_joint_side(const TickPlane& side) {
    TickContactFeature f;
    f.pair = f.joint = f.other_solid = true;
    f.vertices = side.vertices;
    f.weights = side.weights;
    planes_.push_back(side);
    plane_features_.push_back(f);
  }
  /// One vertex (global) of the other body of each near pair that the other body plans,
  /// at the last find().
  const std::vector<Index>& planned_by_others() const { return planned_by_others_; }
  /// Whether plane k is an obstacle's (not a pair's, not a friction anchor).
  bool obstacle(std::size_t k) const { return !plane_features_[k].pair && !planes_[k].friction; }
  /// Whether plane k is a pair plane whose other side is a solid or a phantom body
  /// (SolidSource::plan_multirate_contact takes the βK dashpot off them).
  bool pair_with_solid_or_phantom(std::size_t k) const {
    const TickContactFeature& f = plane_features_[k];
    return f.pair && (f.other_solid || f.other_phantom != nullptr);
  }
  /// After a step of h with the planes' impulses Λ: each vertex's normal load
  /// Σ Λ |w_i| / h, which the next step's planes on it must carry within a quarter of
  /// their clearance: k ≥ 4 F / c (add_planes). κ m/h² alone is far too soft where a
  /// light surface vertex carries a heavy body: the bunny's bottom vertices (~1e-4 kg
  /// each, carrying ~0.1 kg of bunny) sank centimetres into their planes at h = 10 ms,
  /// into the layers, and a 3 mm drop went from 1.2 J to 7.8 J.
  void record_loads(double h, std::span<const double> impulses, std::size_t vertices);
  /// Each local vertex's elastic stiffness (N/m: a third of the trace of its diagonal
  /// block of K at rest). An obstacle plane is at least 10 × Σ |w_i| k_i stiff, so that the
  /// first step of a contact, before any load is recorded, holds what the material
  /// around the point can push with: the bunny's bottom vertices on κ m/h² = 10 N/m
  /// planes under ~1 N each sank to the layers in the first step of a 3 mm drop.
  void set_material_stiffness(std::vector<double> k) { material_k_ = std::move(k); }

  /// Keeps the planes for which `keep(plane)` is true (it may change them); a contact's
  /// friction anchors go with its normal plane.
  template <typename Keep>
  void keep(Keep keep) {
    std::size_t out = 0;
    bool kept = false;
    for (std::size_t i = 0; i < planes_.size(); ++i)
      if (planes_[i].friction ? kept : (kept = keep(planes_[i]))) {
        planes_[out] = planes_[i];
        plane_features_[out++] = plane_features_[i];
      }
    planes_.resize(out);
    plane_features_.resize(out);
  }
  /// Removes the planes k with `dropped[k]` (one flag per plane), and with a dropped
  /// normal plane its friction anchors. (keep() hands the callback planes_[i] before
  /// anything is written at or after i, so its address gives k.)
  void drop(std::span<const char> dropped) {
    keep([&](const TickPlane& p) { return !dropped[static_cast<std::size_t>(&p - planes_.data())]; });
  }
  /// The reactions of the pair planes that push at the landing positions x_end (a
  /// backward-Euler step of h): the plane's impulse on the body is Λ = h k v, Σ_i Λ w_i n
  /// over its vertices; the other body's vertices take Λ w_j n each (their weights sum
  /// to minus the body's: the two sum to zero), at `time`. Returns the number of pushing
  /// pair planes.
  int apply_reactions(Kernel& kernel, double time, double h, const Eigen::VectorXd& x_end) const;
  /// The same with each plane's impulse Λ given (a multi-rate step sums it over its
  /// substeps).
  int apply_impulses(Kernel& kernel, double time, std::span<const double> impulses) const;
  std::uint64_t obstacle_planes = 0;  ///< planes made, summed over steps
  std::uint64_t pair_planes = 0;

  /// Below this slip speed a contact sticks (its anchors are as stiff as μ F / (h ε)).
  /// A vertex that sticks keeps its anchor from step to step while the anchor's pull
  /// stays within μ F (add_friction), so a body held by friction does not creep.
  static constexpr double kStickSpeed = 1e-4;  // m/s

 private:
  void add_planes(double time, double h, const Eigen::VectorXd& x, const std::vector<bool>& fixed,
                  const std::vector<double>& mass, const TickContactSettings& settings,
                  const Eigen::VectorXd* v);
  void add_friction(double time, double h, const Eigen::VectorXd& x, const TickPlane& plane,
                    const TickContactFeature& f, double friction_force, const Eigen::VectorXd* v,
                    double other_inverse_mass);

  /// A sticking vertex's friction anchor: where its step ending at `end` anchored it.
  struct StickAnchor {
    Vec3 anchor = Vec3::Zero();
    double end = -1.0;  ///< s; < 0: none
  };

  bool self_pairs_ = true;
  bool reduced_mass_ = false;
  ContactFinder obstacles_, pairs_;
  TickContactSettings obstacle_settings_, pair_settings_;
  std::vector<TickContactFeature> features_;
  std::vector<TickContactFeature> plane_features_;  ///< the feature of each plane
  std::vector<TickPlane> planes_;
  std::vector<Index> planned_by_others_;
  std::vector<int> own_pairs_;      ///< add_planes' scratch: pairs with friction per own vertex
  std::vector<Index> other_pairs_;  ///< and their other vertices, sorted (one per pair and vertex)
  mutable std::vector<double> impulses_;  ///< apply_reactions' scratch
  std::vector<double> load_;              ///< per local vertex, N (record_loads)
  std::vector<double> material_k_;        ///< per local vertex, N/m (set_material_stiffness)
  /// Per local vertex: the anchors of the last step (stuck_) and of the step being
  /// planned (anchoring_; a step's planes may be found twice, by the energy
  /// safeguard's re-solve: the last finding wins). find() at a new time moves the
  /// second into the first.
  std::vector<StickAnchor> stuck_, anchoring_;
  double anchoring_time_ = -1.0;
};

}  // namespace clockwork
