#pragma once
/// The kernel (DESIGN §1): vertex state, one event queue, the event sources that own
/// the payloads of each kind, contingency lists and the event loop.
#include <memory>
#include <string_view>
#include <vector>

#include "engine/contingency.hpp"
#include "engine/event_queue.hpp"
#include "engine/event_source.hpp"
#include "engine/trace.hpp"
#include "engine/vertex_state.hpp"

namespace clockwork {

/// Per-kind event statistics.
struct KindStats {
  std::uint64_t processed = 0;
  std::uint64_t rescheduled = 0;  ///< queue updates of already scheduled events
};

class Kernel {
 public:
  Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  VertexState& state() { return state_; }
  const VertexState& state() const { return state_; }

  /// Registers a source; the returned kind identifies its events.
  EventKind add_source(std::unique_ptr<EventSource> source);
  EventSource& source(EventKind kind) { return *sources_[kind]; }
  const EventSource& source(EventKind kind) const { return *sources_[kind]; }
  std::size_t source_count() const { return sources_.size(); }

  /// Sizes the per-vertex contingency lists; call after all vertices are added.
  void finalize_vertices();

  // --- scheduling (by kind and slot; the kernel keeps the queue handles) -----------
  void schedule(EventKind kind, EventSlot slot, double time);
  /// Moves a scheduled event to `time`, or schedules it if it is not.
  void reschedule(EventKind kind, EventSlot slot, double time);
  void cancel(EventKind kind, EventSlot slot);
  bool scheduled(EventKind kind, EventSlot slot) const;
  /// Time of a scheduled event.
  double scheduled_time(EventKind kind, EventSlot slot) const;

  // --- contingency -----------------------------------------------------------------
  /// Adds vertex `a` to the support of `c` (c.kind, c.slot identify its event;
  /// c.enveloped chooses the list).
  void attach(Certificate& c, Index a);
  /// Reports a velocity change of `a` (after syncing it). Dependent certificates are
  /// rescheduled once each at the end of the current event; enveloped ones only if
  /// the velocity left its envelope.
  void velocity_changed(Index a) {
    if (!dependents_[a].empty()) touched_.push_back(a);
    if (!enveloped_[a].empty() && (state_.velocity(a) - envelope_[a]).squaredNorm() > slack2_) {
      envelope_[a] = state_.velocity(a);
      touched_envelope_.push_back(a);
    }
  }
  const DependentList& dependents(Index a) const { return dependents_[a]; }
  /// Velocity envelope slack δ (m/s) of enveloped certificates; 0 makes them exact.
  /// Set before any certificate is attached.
  void set_velocity_slack(double slack) {
    slack_ = slack;
    slack2_ = slack * slack;
  }
  double velocity_slack() const { return slack_; }
  /// Centre u_a of vertex a's velocity envelope.
  const Vec3& envelope_velocity(Index a) const { return envelope_[a]; }
  /// Envelope re-centrings so far (each reschedules the vertex's enveloped certificates).
  std::uint64_t envelope_exits() const { return envelope_exits_; }
  /// Reschedules the certificates of all vertices touched so far (the kernel calls it
  /// after each event; sources that change many velocities at once may call it too).
  void flush_contingency();

  // --- the loop ----------------------------------------------------------------------
  /// Processes every event with time <= t_end, in (time, seq) order.
  void run_until(double t_end);
  /// Processes one event; false if the queue is empty.
  bool step();
  double now() const { return now_; }
  bool empty() const { return queue_.empty(); }
  double next_event_time() const { return queue_.empty() ? kNever : queue_.top().time; }
  std::size_t queue_size() const { return queue_.size(); }

  void set_trace(Trace* trace);
  std::uint64_t events_processed() const { return processed_; }
  const KindStats& stats(EventKind kind) const { return stats_[kind]; }

 private:
  struct SlotHandle {
    EventQueue::Handle handle{};
    std::uint8_t state = 0;  // 0 idle, 1 scheduled, 2 in flight (at the top, processing)
  };
  SlotHandle& slot_handle(EventKind kind, EventSlot slot);
  void process_top();

  VertexState state_;
  EventQueue queue_;
  std::vector<std::unique_ptr<EventSource>> sources_;
  std::vector<std::vector<SlotHandle>> handles_;
  std::vector<KindStats> stats_;
  std::vector<DependentList> dependents_, enveloped_;
  std::vector<Vec3> envelope_;
  double slack_ = 0.0, slack2_ = 0.0;
  std::uint64_t envelope_exits_ = 0;
  std::vector<Index> touched_, touched_envelope_;
  std::vector<Certificate*> pending_;
  std::uint64_t epoch_ = 0;
  std::uint64_t processed_ = 0;
  double now_ = 0.0;
  Trace* trace_ = nullptr;
  EventEffects effects_;
};

}  // namespace clockwork
