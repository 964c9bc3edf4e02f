#pragma once
/// Asynchronous contact mechanics (Harmon et al. 2009; phantom-mesh paper §4):
/// discrete penalty layers as explicit force events, kept honest by separation-slab
/// certificates per primitive pair and a kinetic hash grid that creates and destroys
/// pairs, all on the kernel's queue.
///
/// Invariant: every live element pair (vertex–triangle or edge–edge) whose deepest
/// active layer is L (0: none) has a slab certificate proving its distance > η(L+1)
/// until the certificate's failure time; every pair of collision triangles that
/// share no vertex and come within η(1) of each other share a grid cell, so their
/// element pairs exist.
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "contact/contact_parameters.hpp"
#include "contact/distance.hpp"
#include "contact/slab.hpp"
#include "engine/kernel.hpp"

namespace clockwork {

/// Counters for diagnostics and benchmarks.
struct ContactCounters {
  std::size_t live_pairs = 0;
  std::size_t active_layers = 0;
  int deepest_layer = 0;             ///< deepest layer active now
  int deepest_layer_ever = 0;
  std::uint64_t layer_activations = 0;
  std::uint64_t slab_failures = 0;   ///< certificate events (failures) processed
  std::uint64_t slab_evaluations = 0;  ///< failure-time computations (incl. reschedules)
  std::uint64_t grid_failures = 0;
  std::uint64_t certificate_reschedules = 0;  ///< queue updates of slab and grid events
  std::size_t certificates = 0;               ///< live slab + grid certificates
};

/// Wall-clock time spent in contact work when timing is enabled (benchmarks).
struct ContactTimers {
  double kds_seconds = 0.0;    ///< slab and grid certificates: failures and reschedules
  double layer_seconds = 0.0;  ///< penalty layer events
};

class ContactSystem {
 public:
  ContactSystem(Kernel& kernel, const ContactParameters& params);

  /// Adds a collision triangle (global vertex indices). Call before start().
  void add_triangle(const std::array<Index, 3>& vertices);
  /// Adds a collision point (a chain's vertex): it meets triangles as a vertex–
  /// triangle pair and ignores other points. Call before start().
  void add_point(Index vertex);
  /// Registers the three event sources, builds the grid and the initial pairs at the
  /// kernel's current time, activating layers for pairs already within η(1).
  void start();

  const ContactParameters& params() const { return params_; }
  ContactCounters counters() const;
  /// Times every contact handler (two clock reads each); off by default.
  void enable_timing(bool on) { timing_ = on; }
  const ContactTimers& timers() const { return timers_; }
  /// Σ over active layers of ½ r(l) (d − η(l))² at time t (positions read, not synced).
  double potential_energy(const VertexState& s, double t) const;
  std::size_t triangle_count() const { return triangles_.size(); }

  // Event handlers, called by the source adapters.
  double layer_tick(EventSlot slot, double t);
  double slab_failed(EventSlot slot, double t);
  double grid_failed(EventSlot slot, double t);
  void slab_support_changed(EventSlot slot);
  void grid_support_changed(EventSlot slot);

 private:
  struct CellRange {
    std::array<int, 3> lo{}, hi{};
  };
  struct Triangle {
    std::array<Index, 3> v;
    bool kinematic = false;
    bool point = false;  ///< v = {a, a, a}
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
  struct LayerEvent {
    EventSlot pair;
    int layer;
  };
  struct PairKey {
    std::uint8_t type;
    std::array<Index, 4> v;
    bool operator==(const PairKey&) const = default;
  };
  struct PairKeyHash {
    std::size_t operator()(const PairKey& k) const;
  };

  StencilPositions<4> positions(const Pair& p, double t) const;
  StencilPositions<4> velocities(const Pair& p) const;
  double eta(int l) const;
  double stiffness(int l) const;
  double period(int l) const;

  // Pairs.
  void triangle_pair_overlap(std::uint32_t t0, std::uint32_t t1, int delta);
  void add_element_pair(PairType type, const std::array<Index, 4>& v, std::uint32_t triangle);
  void release_element_pair(PairType type, const std::array<Index, 4>& v);
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
  ContactParameters params_;
  EventKind layer_kind_ = 0, slab_kind_ = 0, grid_kind_ = 0;
  std::deque<Triangle> triangles_;
  std::deque<Pair> pairs_;
  std::vector<EventSlot> free_pairs_;
  std::vector<LayerEvent> layer_events_;
  std::vector<EventSlot> free_layer_events_;
  std::unordered_map<PairKey, EventSlot, PairKeyHash> pair_index_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cells_;
  std::unordered_map<std::uint64_t, int> triangle_pair_cells_;
  std::vector<std::uint32_t> vertex_owner_;                   ///< lowest triangle per vertex
  std::unordered_map<std::uint64_t, std::uint32_t> edge_owner_;  ///< lowest triangle per edge
  ContactCounters counters_;
  bool timing_ = false;
  ContactTimers timers_;
};

}  // namespace clockwork
