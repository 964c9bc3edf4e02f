#pragma once
/// An event source owns the payloads of one event kind and processes its events.
#include <span>
#include <string_view>

#include "engine/event_queue.hpp"
#include "engine/vertex_state.hpp"

namespace clockwork {

class Kernel;

/// How a source begins its clock. A scene's initial velocities are those *at* the start
/// time, so the first impulse of an explicit stencil or a phantom tick covers only the
/// time from the start to its interval's midpoint: V at the start weighs half a period
/// (the trapezoidal end weight of the action's quadrature), p^{1/2} = p^0 − (h/2)∇V(q^0).
/// The leapfrog is then velocity Verlet and free fall is exact at the ticks; a whole
/// first kick puts every later position off by −g h t/2. A run resumed from a frame
/// (Kernel::start_at) holds the velocities of the intervals under way, which had their
/// first half already: its first impulses are whole.
enum class StartFrom { initial_state, resumed_frame };

class EventSource {
 public:
  virtual ~EventSource() = default;
  /// Kind name in traces and statistics, e.g. "force:membrane".
  virtual std::string_view name() const = 0;
  /// Processes the event of `slot` at `time` (the kernel's current time). Returns the
  /// time of the slot's next occurrence, or kNever. A source that reschedules or
  /// cancels the processed slot itself through the kernel returns kNever.
  virtual double process(EventSlot slot, double time, Kernel& kernel) = 0;
  /// Number of vertices the event touches (for traces).
  virtual int stencil_size(EventSlot /*slot*/) const { return 0; }
  /// The vertices whose velocity the event of `slot` may change, for the per-vertex
  /// event counts (io/run/event_counts.hpp; the viewer's heat map). Read before
  /// the event is processed. Certificates return none: they change no velocity.
  virtual std::span<const Index> stencil_vertices(EventSlot /*slot*/) const { return {}; }
  /// Potential energy of this source's terms at time `t` (positions read, not synced).
  virtual double potential_energy(const VertexState& /*state*/, double /*t*/) const {
    return 0.0;
  }
  /// Momentum, angular momentum (about the origin) and kinetic energy this source
  /// carries outside the vertex state at time t (a phantom mesh's share), added in.
  virtual void add_carried(const VertexState& /*state*/, double /*t*/, Vec3& /*p*/, Vec3& /*L*/,
                           double& /*kinetic*/) const {}
};

}  // namespace clockwork
