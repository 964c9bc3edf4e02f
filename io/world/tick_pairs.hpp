#pragma once
/// The near element pairs of deformable surfaces, as contact features for the ticks of
/// phantom bodies with `deformable_contact` (docs/phantom.md "Near pairs in the tick").
#include <vector>

#include "contact/contact_system.hpp"
#include "integrators/phantom/phantom_source.hpp"

namespace clockwork {

/// A body of the scene, as the pair finder sees it.
struct PairOwner {
  Index first = 0;                  ///< its first global vertex (bodies are in vertex order)
  PhantomSource* phantom = nullptr;  ///< its phantom, which takes reactions; or none
  bool plans_pairs = false;         ///< its ticks see their near pairs
  bool solid = false;               ///< a tet solid (backward Euler, Zhao, Schroeder)
  double step = 0.0;                ///< a solid's coarse step h, s
  bool obstacle = false;            ///< a kinematic obstacle mesh
};

/// A ContactFinder over the contact system's near pairs with a vertex in body `body`.
/// Self pairs: the plane bounds the pair's own gap. A pair with another body: that
/// body's side is the point −Σ w_j q_j, moving for the plane with the two sides'
/// common (momentum-weighted) velocity, so the plane stops the approach as a
/// perfectly inelastic impact would; the other body takes the reaction
/// (PhantomSource::apply_plane_reactions). Such a pair is planned in one tick only:
/// that of the earlier of the two bodies if both plan pairs, or else the one that
/// does. (Planned in both, each contact force was applied twice — once by each body's
/// own plane, once as the other's reaction — and two ribbons pressed together by
/// tension kicked each other apart at m/s.) Two solids with different coarse steps:
/// the one with the longer step, so that its reactions land at the other's step times
/// (plans_before).
///
/// A solid (backward Euler, Zhao) plans no pair with an explicit cloth: the cloth's
/// layers answer that contact at the cloth's own rate, and the solid takes their
/// impulses as a Schroeder solid does. Planned by the solid, the cloth's side moved for
/// a whole coarse step with the pair's common velocity while the cloth ticked 50 times:
/// a cloth dropped onto a backward-Euler block (5 ms) resting on the ground flapped
/// off its edges and gained 5.2 % of E0 (0.055 J, more than the cloth's own potential
/// energy), and an explicit cloth hit at 3 m/s by a Zhao m = 1 block 0.38 of E0; with
/// the layers alone the stack never reads above E0 and the pair 3.7e-3
/// (bench/results/sweep_solids_stacks.csv, sweep_solids_pairs.csv).
class TickPairFinder {
 public:
  /// `look_ahead` > 0: the step's length h of a solid, whose pairs are also those a
  /// step may close before the layers expand them (ContactSystem::near_pairs_within).
  TickPairFinder(const VertexState& state, const ContactSystem& contact, std::vector<PairOwner> owners,
                 std::size_t body, double look_ahead = 0.0);
  void operator()(double time, double reach, std::vector<TickContactFeature>& out);

 private:
  const PairOwner& owner_of(Index vertex) const;
  /// Whether a pair with `other` is planned by `other` (see the class comment). Between
  /// solids of different steps the longer step plans: it steps first at the common
  /// times (its step there was queued earlier), so its reactions reach the other body
  /// just before that body's own step answers them. Planned by the shorter step, they
  /// landed inside the longer body's step, whose interior went on at its planned
  /// velocity into the stopped face until its next step (backward Euler at 5 ms against
  /// Zhao m = 1 at 10 ms: 0.57 J -> 9.9 J; tests/integrators/implicit/test_pair_energy.cpp).
  bool plans_before(const PairOwner& other) const;

  const VertexState* state_;
  const ContactSystem* contact_;
  std::vector<PairOwner> owners_;
  Index first_ = 0, count_ = 0;
  double look_ahead_ = 0.0;
  std::vector<ContactSystem::NearPair> near_;
};

}  // namespace clockwork
