#pragma once
/// Up-front limits of a scene (docs/scene-format.md "Limits"): the memory a scene will
/// hold and the events it will process per simulated second are estimated from its
/// fields before anything large is built, and a scene the machine cannot run is
/// refused with the estimate, naming the field responsible. Without this a grid of
/// 4096² cells took minutes and gigabytes in `validate`, a 1024³ tet bar died in
/// bad_alloc, and a step of 1e-300 s made `run` spin forever.
#include <optional>
#include <string>
#include <vector>

#include "engine/health.hpp"
#include "io/scene/json_reader.hpp"
#include "io/world/spec_origin.hpp"

namespace clockwork {

// --- rough bytes per item of a built scene (measured: docs/scene-format.md "Limits") ---
/// A kernel vertex: state, envelopes, event counts, mesh copies.
inline constexpr double kBytesPerVertex = 250;
/// A cloth triangle with its share of edges and hinges: membrane, bending and wind
/// stencils with their queue entries, the body's triangle lists, the mesh's half edges.
inline constexpr double kBytesPerTriangle = 450;
/// A chain segment: its spring stencil and edge.
inline constexpr double kBytesPerSpring = 150;
/// A tet: the FEM model's per-element data, its share of the sparse stiffness matrix
/// and factor, the mesh's faces.
inline constexpr double kBytesPerTet = 1500;
/// A voxel of a tet generator's grid (labels and flood-fill marks), before the tets.
inline constexpr double kBytesPerVoxel = 12;
/// A (triangle, cell) entry of the contact hash grid: bucket node and list slot.
inline constexpr double kBytesPerGridEntry = 64;

// --- shape maxima (docs/scene-format.md) -------------------------------------------
// At the former maxima (4096 grid cells a side, 2048 disk rings: 34 and 25 million
// triangles) `validate` took minutes and gigabytes; at these it builds the mesh and
// refuses one whose events are out of reach (kMaxEventRate) in 0.3 s and 0.25 GB.
inline constexpr long long kMaxGridCells = 1024;  ///< grid `resolution`, per side
inline constexpr long long kMaxDiskRings = 512;   ///< disk `rings`
inline constexpr long long kMaxSphereCells = 400;  ///< tet_sphere `cells_per_diameter`
/// Voxels in the bounding grid of a voxelised tet shape (tet_dinosaur, tet_dragon).
inline constexpr double kMaxVoxels = 5e7;

// --- caps ---------------------------------------------------------------------------
/// Events per simulated second above which a scene is refused: at the 1e7–5e7 events
/// per second of one core, one simulated second would take an hour or more (and a
/// period of 1e-300 s would take forever). The heaviest scenes we run sit below it:
/// the paper-scale reef knot under explicit AVI at 5.8e10, the stiff cards at 3.9e9.
inline constexpr double kMaxEventRate = 1e11;
/// Frames a scene may ask for (end_time × frame_rate); above, the int frame counter
/// and the output folder are the wrong tools.
inline constexpr double kMaxFrames = 1e6;
/// An explicit AVI period above this multiple of the stability estimate 1 / ω_max is
/// refused unless the body says "allow_unstable_periods": true. 2 / ω_max is
/// leapfrog's stability limit for a stencil alone: beyond it nothing holds the stencil.
inline constexpr double kMaxPeriodFactor = 2.0;

/// The memory cap: the smaller of 16 GiB and the machine's physical memory.
double memory_cap_bytes();
/// "3.2 GB".
std::string bytes_text(double bytes);

/// The running estimates of one scene.
class SceneBudget {
 public:
  /// Adds the `bytes` that `what` (e.g. "16785409 vertices, 33554432 triangles")
  /// will need; if the scene's total exceeds memory_cap_bytes(), fails at `field`
  /// with the estimate.
  void need_memory(const JsonField& field, double bytes, const std::string& what) {
    if (auto m = add_memory(bytes, what)) field.fail(*m);
  }
  void need_memory(const SpecField& field, double bytes, const std::string& what) {
    if (auto m = add_memory(bytes, what)) field.fail(*m);
  }
  /// Adds `rate` events per simulated second of `what`; if the scene's total exceeds
  /// kMaxEventRate, fails at `field` with the estimate.
  void need_events(const JsonField& field, double rate, const std::string& what) {
    if (auto m = add_events(rate, what)) field.fail(*m);
  }
  void need_events(const SpecField& field, double rate, const std::string& what) {
    if (auto m = add_events(rate, what)) field.fail(*m);
  }

  double memory() const { return memory_; }
  double event_rate() const { return events_; }

 private:
  /// The refusal, if the total is now beyond the limit.
  std::optional<std::string> add_memory(double bytes, const std::string& what);
  std::optional<std::string> add_events(double rate, const std::string& what);
  double memory_ = 0.0, events_ = 0.0;
};

/// Why an initial state breaks the health check's limits (engine/health.hpp), and
/// whether the velocity (rather than the shape) is at fault.
struct InitialStateProblem {
  std::string what;
  bool velocity = false;
};
std::optional<InitialStateProblem> initial_state_problem(const std::vector<Vec3>& x,
                                                         const std::vector<Vec3>& v,
                                                         const HealthLimits& limits = {});

/// The health check's limits on a body's or obstacle's initial state, so that a scene
/// the run would stop at its first event is refused as input: every vertex within
/// max_extent of the origin (fails at `shape`), every initial velocity at most
/// max_speed (fails at `velocity`, or at `shape` without one).
template <typename Field>
void check_initial_state(const Field& shape, const std::optional<Field>& velocity,
                         const std::vector<Vec3>& x, const std::vector<Vec3>& v,
                         const HealthLimits& limits = {}) {
  if (auto p = initial_state_problem(x, v, limits)) {
    if (p->velocity && velocity) velocity->fail(p->what);
    shape.fail(p->what);
  }
}

/// Fails at `field` unless `step` (s) is at most `end_time` (a step longer than the
/// run is never taken whole; 1e308 made backward Euler print -nan).
std::optional<std::string> step_beyond_run(double step, double end_time);
template <typename Field>
void check_step_within_run(const Field& field, double step, double end_time) {
  if (auto m = step_beyond_run(step, end_time)) field.fail(*m);
}

}  // namespace clockwork
