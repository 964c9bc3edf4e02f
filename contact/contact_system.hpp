#pragma once
/// Asynchronous contact mechanics (Harmon et al. 2009; phantom-mesh paper §4):
/// discrete penalty layers as explicit force events, kept honest by separation-slab
/// certificates per primitive pair and a kinetic hash grid that creates and destroys
/// pairs, all on the kernel's queue.
///
/// Two levels of certificates, as in the phantom-mesh paper §4: a pair of triangles
/// that share a grid cell holds one slab over its six vertices certifying all of its
/// 15 element pairs at once (distance > η(1)); only when that slab cannot be kept
/// does the pair *expand* into its element pairs (vertex–triangle, edge–edge), each
/// with its own layers and slab. An expanded pair collapses back once all its element
/// pairs are at depth 0 and the triangles are well apart again.
///
/// Invariant: every live element pair whose deepest active layer is L (0: none) has a
/// slab certificate proving its distance > η(L+1) until the certificate's failure
/// time, or L = 0 and every triangle pair generating it is collapsed with a valid
/// slab; every pair of collision triangles that share no vertex and come within η(1)
/// of each other share a grid cell, so their triangle pair exists.
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "contact/contact_parameters.hpp"
#include "contact/distance/distance.hpp"
#include "contact/mass_share.hpp"
#include "contact/penalty/penalty_potential.hpp"
#include "contact/certificates/contingency.hpp"
#include "contact/certificates/slab.hpp"
#include "engine/kernel.hpp"
#include "engine/stable_pool.hpp"

namespace clockwork {

/// Counters for diagnostics and benchmarks.
struct ContactCounters {
  std::size_t triangle_pairs = 0;      ///< pairs of triangles sharing a grid cell
  std::size_t expanded_pairs = 0;      ///< of which expanded into element pairs
  std::size_t live_pairs = 0;          ///< element pairs
  std::size_t active_layers = 0;
  int deepest_layer = 0;             ///< deepest layer active now
  int deepest_layer_ever = 0;
  std::uint64_t layer_activations = 0;
  std::uint64_t deformable_activations = 0;  ///< of pairs with no kinematic vertex (cloth–cloth)
  std::uint64_t slab_failures = 0;   ///< certificate events (failures) processed
  std::uint64_t slab_evaluations = 0;  ///< failure-time computations (incl. reschedules)
  std::uint64_t grid_failures = 0;
  std::uint64_t expansions = 0;      ///< triangle pairs expanded into element pairs
  std::uint64_t collapse_polls = 0;  ///< checks of expanded pairs for collapse
  std::uint64_t certificate_reschedules = 0;  ///< queue updates of slab and grid events
  std::size_t certificates = 0;  ///< live grid, triangle-pair and element-pair certificates
};

class ContactSystem {
 public:
  /// `contingency`: the kernel's, installed when the vertices were complete and before
  /// any source started (Contingency::install), so that its envelopes start from the
  /// scene's initial velocities.
  ContactSystem(Kernel& kernel, Contingency& contingency, const ContactParameters& params);

  /// Triangles of one `group` never form pairs with each other (a solid's boundary,
  /// whose tets keep it from folding onto itself); kSelfContact: pairs with all.
  static constexpr std::uint32_t kSelfContact = UINT32_MAX;
  /// Adds a collision triangle (global vertex indices). Call before start().
  void add_triangle(const std::array<Index, 3>& vertices, std::uint32_t group = kSelfContact);
  /// Adds a collision point (a chain's vertex): it meets triangles as a vertex–
  /// triangle pair and ignores other points. Call before start().
  void add_point(Index vertex);
  /// Declares a kinematic vertex that a script will release later (it gets a mass):
  /// it counts as movable, so pairs of triangles or elements made only of kinematic
  /// vertices are not skipped when one of them is such a vertex. Call before
  /// add_triangle().
  void mark_releasable(Index vertex);
  /// Registers the four event sources, builds the grid and the initial pairs at the
  /// kernel's current time, activating layers for pairs already within η(1).
  void start();

  /// An element pair near contact: one of an expanded triangle pair (its triangles
  /// came within kExpandClearance η(1)), with or without active layers.
  struct NearPair {
    PairType type;
    std::array<Index, 4> v;
  };
  /// The near element pairs with a vertex in [first, first + count) into `out`: what
  /// an implicit solve of those vertices must not close (docs/phantom.md "Near pairs
  /// in the tick").
  void near_pairs(Index first, Index count, std::vector<NearPair>& out) const;
  /// near_pairs, and also the element pairs of the collapsed triangle pairs between a
  /// triangle of [first, first + count) and one of another body whose
  /// triangles' boxes at time t are within `reach` plus 2 h times their fastest
  /// vertex's speed: what a step of length h may close though the layers have not
  /// expanded it yet (a coarse step moves a body further than kExpandClearance η(1)).
  /// Each pair once, in expand()'s canonical vertex order.
  void near_pairs_within(Index first, Index count, double t, double reach, double h,
                         std::vector<NearPair>& out) const;
  const ContactParameters& params() const { return params_; }
  /// Vertex `a`'s mass is shared with `share` (its local index `local` there): a phantom
  /// body with "contact_mass": "whole" (contact/mass_share.hpp). Call before start().
  void share_mass(Index a, MassShare* share, Index local) {
    if (shared_mass_.size() <= a) shared_mass_.resize(std::size_t(a) + 1);
    shared_mass_[a] = {share, local};
  }
  /// Who holds the rest of vertex a's mass ({nullptr} if the kernel holds all of it).
  SharedMass shared_mass(Index a) const {
    return a < shared_mass_.size() ? shared_mass_[a] : SharedMass{};
  }
  /// The certificates' contingency (envelope exits, position-envelope counts).
  const Contingency& contingency() const { return contingency_; }
  /// Brute force, for tests: how far (m) the actual positions at time t break the far
  /// certificates — the slabs of collapsed triangle pairs and the grid ranges (each
  /// vertex, grown by η1/2, inside its triangle's box); 0 or less when all hold, as they
  /// must between events.
  double far_certificate_violation(double t) const;
  ContactCounters counters() const;
  /// Σ over active layers of their PenaltyLayer energy ½ r(l) (d − η(l))² at time t
  /// (positions read, not synced).
  double potential_energy(const VertexState& s, double t) const;
  std::size_t triangle_count() const { return triangles_.size(); }

  /// The four vertices of a penalty layer event's element pair.
  std::span<const Index> layer_stencil(EventSlot slot) const {
    return pairs_[layer_events_[slot].pair].v;
  }

  // Event handlers, called by the source adapters.
  double layer_tick(EventSlot slot, double t);
  double slab_failed(EventSlot slot, double t);
  double grid_failed(EventSlot slot, double t);
  double triangle_pair_event(EventSlot slot, double t);
  /// Adds a certificate kind's source to the kernel and names it to the contingency.
  template <class Source>
  EventKind add_certificate_source(std::unique_ptr<Source> source);
  void slab_support_changed(EventSlot slot);
  void grid_support_changed(EventSlot slot);
  void triangle_pair_support_changed(EventSlot slot);

 private:
  struct CellRange {
    std::array<int, 3> lo{}, hi{};
  };
  struct Triangle {
    std::array<Index, 3> v;
    bool kinematic = false;  ///< all three vertices fixed()
    bool point = false;  ///< v = {a, a, a}
    std::uint32_t group = kSelfContact;
    CellRange range;
    Certificate cert;
  };
  struct Pair {
    PairType type = PairType::VertexTriangle;
    std::array<Index, 4> v{};
    int refs = 0;   ///< triangle pairs that generate it
    int depth = 0;  ///< deepest active layer
    std::uint32_t triangle = 0;  ///< vertex–triangle pairs: the triangle's index
    bool alive = false;
    Slab slab{};
    Certificate cert;
    boost::container::small_vector<EventSlot, 4> layers;  ///< event slot of layer l at [l-1]
  };
  /// Two triangles sharing grid cells. Collapsed: `slab` over their six vertices
  /// (event = its failure). Expanded: element pairs `elements` hold the refs, and the
  /// event is the next poll for collapse.
  struct TrianglePair {
    std::uint32_t a = 0, b = 0;  ///< triangle indices
    int cells = 0;               ///< grid cells they share
    bool alive = false;
    bool expanded = false;
    int failed_polls = 0;
    Slab slab{};
    Certificate cert;
    boost::container::small_vector<EventSlot, 15> elements;
  };
  struct LayerEvent {
    EventSlot pair;
    int layer;
    /// What this layer adds to its vertices' loads (vertex_load_) since its last tick.
    std::array<double, 4> load{};
  };
  struct PairKey {
    std::uint8_t type;
    std::array<Index, 4> v;
    bool operator==(const PairKey&) const = default;
  };
  struct PairKeyHash {
    std::size_t operator()(const PairKey& k) const;
  };

  /// f(i, vertex) for the six vertices of a triangle pair's support, A's first.
  template <typename F>
  void for_each_of_six(const TrianglePair& tp, F&& f) const {
    for (int i = 0; i < 3; ++i) {
      f(i, triangles_[tp.a].v[i]);
      f(3 + i, triangles_[tp.b].v[i]);
    }
  }
  StencilPositions<4> positions(const Pair& p, double t) const;
  StencilPositions<6> positions(const TrianglePair& tp, double t) const;
  /// Where the far certificates take the support to be from t on: positions, or the
  /// anchors of the vertices in position envelopes (Contingency::envelope_position), and
  /// those balls' radii (0 for the others).
  StencilPositions<6> envelope_positions(const TrianglePair& tp, double t) const;
  StencilSlack<6> envelope_radii(const TrianglePair& tp) const;
  /// Centres of the support's velocity envelopes (Contingency::envelope_velocity).
  StencilPositions<6> envelope_velocities(const TrianglePair& tp) const;
  StencilPositions<4> envelope_velocities(const Pair& p) const;
  /// Their slacks δ_a (per vertex: Contingency::set_adaptive_slack).
  StencilSlack<6> envelope_slacks(const TrianglePair& tp) const;
  StencilSlack<4> envelope_slacks(const Pair& p) const;
  double eta(int l) const;
  double stiffness(int l) const;
  /// Layer l of pair p: the term whose impulse and energy the layer events use.
  PenaltyLayer layer(const Pair& p, int l) const;
  double period(int l) const;
  /// The period of layer l of pair p: h(l), or shorter where a vertex of p is loaded
  /// by more layers than h(l) is stable for (ContactParameters::vertex_periods).
  double layer_period(const Pair& p, int l) const;
  /// Replaces the load layer event `slot` puts on its vertices: 2 r(l) |w_i| while it
  /// pushes (a Gershgorin row bound of its stiffness, Σ_j |w_j| = 2), else 0.
  void set_layer_load(EventSlot slot, const Pair& p, const PairClosest* pushing);
  /// 1/m of the mass an impulse on vertex a moves (the kernel's, or the whole of a
  /// shared mass: contact/mass_share.hpp).
  double impulse_inverse_mass(Index a) const;
  /// Applies an impulse to vertex a (synced) and to the other copy of a shared mass,
  /// and reports the velocity change to the kernel.
  void add_impulse(Index a, const Vec3& impulse, double t);

  // Triangle pairs.
  void triangle_pair_overlap(std::uint32_t t0, std::uint32_t t1, int delta);
  /// Keeps the pair collapsed under a fresh slab if the triangles are farther than
  /// `clearance`; otherwise expands it.
  void certify_triangle_pair(EventSlot slot, double t, double clearance);
  void expand(EventSlot slot);
  void attach_support(TrianglePair& tp);
  /// A failed or new triangle-pair slab is renewed if the triangles are farther than
  /// this many η1, else the pair expands; an expanded pair collapses only beyond the
  /// second (hysteresis: no chatter at the boundary).
  static constexpr double kExpandClearance = 1.25, kCollapseClearance = 1.5;
  void release_elements(TrianglePair& tp);
  void destroy_triangle_pair(EventSlot slot);
  /// Infinite mass for good: kinematic and not to be released.
  bool fixed(Index a) const;
  double poll_period(const TrianglePair& tp) const;

  // Element pairs.
  /// Adds a reference to the element pair (creating it); its slot, or kNoPair for a
  /// pair of four kinematic vertices (never needed).
  EventSlot add_element_pair(PairType type, const std::array<Index, 4>& v, std::uint32_t triangle);
  /// The edge–edge pair (a, b)–(c, d) in its canonical vertex order (each edge's ends
  /// ascending, the smaller edge first), so that pairs shared by neighbouring triangle
  /// pairs coincide.
  static std::array<Index, 4> canonical_edge_pair(Index a, Index b, Index c, Index d) {
    if (a > b) std::swap(a, b);
    if (c > d) std::swap(c, d);
    if (std::make_pair(a, b) > std::make_pair(c, d)) {
      std::swap(a, c);
      std::swap(b, d);
    }
    return {a, b, c, d};
  }
  void release_element_pair(EventSlot slot);
  void destroy_pair(EventSlot slot);
  /// Activates layers while the pair is within η(depth+1), then certifies the rest.
  void certify(EventSlot slot, double t);
  void activate_layer(EventSlot slot, double t);
  void reschedule_slab(EventSlot slot);
  /// Whether this pair applies the impulse for the contact its closest points describe
  /// (see layer_tick): a vertex–face or interior edge–edge contact always; a contact
  /// at a triangle's edge or vertex only through the lowest-index triangle holding it.
  bool owns_contact(const Pair& p, const PairClosest& c) const;
  static std::uint64_t edge_key(Index a, Index b);

  // Grid.
  CellRange cells_of(const Triangle& tri, double t) const;
  double grid_failure_time(const Triangle& tri, double t) const;
  void move_triangle(std::uint32_t tri, const CellRange& from, const CellRange& to, bool fresh);
  static std::uint64_t cell_key(int i, int j, int k);

  Kernel& kernel_;
  Contingency& contingency_;
  std::vector<SharedMass> shared_mass_;  ///< share_mass
  ContactParameters params_;
  static constexpr EventSlot kNoPair = ~EventSlot{0};
  /// Envelope levels (contact/certificates/certificate.hpp): element pairs sit near contact, where a
  /// wide envelope would make their slabs fail at once; triangle pairs and grid
  /// certificates have room.
  static constexpr std::uint8_t kNear = 1, kFar = 2;
  /// Cap of the adaptive per-vertex slacks, × the level's slack (docs/contact.md).
  static constexpr double kMaxSlackFactor = 8.0;
  /// A layer retires at a distance of (1 + kRetireMargin) × its thickness (layer_tick).
  static constexpr double kRetireMargin = 0.1;
  /// A layer activates at a distance of (1 + kActivateMargin) × its thickness (certify).
  static constexpr double kActivateMargin = 0.05;
  /// Whether pair p at this distance needs its next layer active (certify).
  bool wants_layer(const Pair& p, double distance) const;
  EventKind layer_kind_ = 0, slab_kind_ = 0, grid_kind_ = 0, triangle_pair_kind_ = 0;
  StablePool<Triangle> triangles_;
  std::vector<bool> releasable_;  ///< per global vertex (mark_releasable)
  StablePool<Pair> pairs_;
  std::vector<EventSlot> free_pairs_;
  std::vector<LayerEvent> layer_events_;
  std::vector<EventSlot> free_layer_events_;
  std::unordered_map<PairKey, EventSlot, PairKeyHash> pair_index_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cells_;
  StablePool<TrianglePair> triangle_pairs_;
  std::vector<EventSlot> free_triangle_pairs_;
  std::unordered_map<std::uint64_t, EventSlot> triangle_pair_index_;
  std::vector<std::uint32_t> vertex_owner_;                   ///< lowest triangle per vertex
  std::unordered_map<std::uint64_t, std::uint32_t> edge_owner_;  ///< lowest triangle per edge
  ContactCounters counters_;
  /// Per global vertex: Σ 2 r(l) |w_a| over the layers that pushed on it at their last
  /// tick (layer_period; sized only with vertex_periods).
  std::vector<double> vertex_load_;
  /// h1² · 2 r1 / min_mass: a vertex of mass m under load K is stable at periods up to
  /// sqrt(period_scale2_ · m / K), which is h(l) for one layer on a vertex of min_mass.
  double period_scale2_ = 0.0;
};

}  // namespace clockwork
