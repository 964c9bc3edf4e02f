#pragma once
/// Backward-Euler solids in contact, stepped as one system (docs/backward-euler.md
/// "Solids in contact step together").
///
/// Alone, each solid solves its own step, and a pair plane between two solids is
/// planned by one of them: its own side is an unknown, the other side a prediction
/// (its velocity plus its lumped recoil), and the other body takes the plane's
/// reaction as an impulse before its own step. Two bodies that meet once pass with
/// that (the sweep's free pairs), but under a sustained load — a block resting on
/// another that rests on the ground — the planner's guess of the other face and that
/// body's elastic answer differ at every step, and the difference adds energy: two
/// 10 ms blocks +92 % of the initial total, 5 ms under 10 ms +65 % (sweep `stack_*`).
///
/// Here backward-Euler and Zhao solids that share near pairs — those either plans —
/// step as one backward-Euler step over all their unknowns (Zhao et al. eq. 1–3 on the
/// union of the meshes, TetFemModel::joined; a Zhao body's share at the energy
/// safeguard's Newton settings, single-rate, as Zhao et al. handle collisions at h_L).
/// A pair plane is a penalty on both sides' landing positions,
///   P = (k/2) max(0, c − n·(Σ_i w_i x_i))²   (i over both sides, Σ w = 0),
/// held at the clearance c as an obstacle plane is (a pair plane planned alone stops an
/// approach at min(gap, c): under a load the gap then shrinks by the plane's give every
/// step, into the layers), with Coulomb friction anchors between the two sides. The
/// step is a minimisation, so it ends with no more kinetic, elastic and plane energy
/// than it started with; the plane's forces on the two sides are equal and opposite, so
/// the union's linear momentum changes by the external impulses alone (BackwardEuler's
/// rigid shift makes that exact), and their torques cancel (n is along the pair's
/// separation Σ w_i x_i at the step's start). Each solid then applies its own share of
/// the result as its step would (its angular-momentum rotation, its kick, the
/// reactions of its pairs with bodies outside the group).
///
/// The group steps at its shortest h: a solid at a longer step (a whole multiple, on
/// the same grid) is stepped at the shorter one's times while in contact (a Zhao solid
/// only outside a large step it planned); a solid whose own event falls at the group's
/// time only advances its clock there. Not joined: Schroeder and cloth bodies, other
/// settings, steps that are not whole multiples of each other.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "engine/kernel.hpp"
#include "integrators/implicit/backward_euler.hpp"

namespace clockwork {

class SolidSource;

class JointSolids {
 public:
  /// Registers a backward-Euler solid whose vertices are already in the kernel.
  void add(SolidSource& solid);
  /// Called by `first`'s step at `time` once its planes are found: steps it together
  /// with the solids its pair planes reach (and theirs), if any can join. Returns false
  /// (nothing changed) if none can.
  bool step(SolidSource& first, double time, Kernel& kernel);
  /// Steps taken jointly (one per group and time).
  std::uint64_t joint_steps() const { return joint_steps_; }

 private:
  struct Group {
    std::unique_ptr<TetFemModel> model;
    std::unique_ptr<BackwardEuler> euler;
  };
  /// The registered solid that owns global vertex g, or none.
  SolidSource* owner_of(Index g) const;
  /// Whether `other` can step with `first` at `time` (header).
  bool joinable(const SolidSource& first, const SolidSource& other, double time) const;
  Group& group();

  std::vector<SolidSource*> solids_;  ///< in vertex order
  std::map<std::vector<SolidSource*>, Group> groups_;
  std::uint64_t joint_steps_ = 0;
  // Scratch of one joint step (no allocation once sized).
  std::vector<SolidSource*> members_;
  std::vector<Index> base_;  ///< per member: its first vertex in the joint model
  Eigen::VectorXd x_, v_, f_ext_;
  std::vector<bool> fixed_;
  std::vector<TickPlane> planes_, anchors_;
  std::vector<Vec3> net_;   ///< per vertex of the union: net normal load, N
  std::vector<int> count_;  ///< per vertex: the pushing pair planes on it
  /// Per plane of the union (before the friction anchors): the member whose plane it is,
  /// its index in that member's list, and whether it is a pair plane between two members.
  struct PlaneOrigin {
    std::size_t member = 0, plane = 0;
    bool pair = false;
  };
  std::vector<PlaneOrigin> origin_;
  std::vector<std::vector<double>> impulses_;  ///< per member, per plane of its list
};

}  // namespace clockwork
