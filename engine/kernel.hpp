#pragma once
/// The kernel (DESIGN §1): vertex state, one event queue, the event sources that own
/// the payloads of each kind, contingency lists and the event loop, with a hook for
/// observers (engine/kernel_observer.hpp: trace, profiler, event counts).
#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/event_source.hpp"
#include "engine/health.hpp"
#include "engine/kernel_observer.hpp"
#include "engine/velocity_watch.hpp"
#include "engine/vertex_state.hpp"

namespace clockwork {

/// Per-kind event statistics. They stay in the kernel (a few increments, no observer):
/// contact's certificate_reschedules (diagnostics.csv) and the run summary read them.
struct KindStats {
  std::uint64_t processed = 0;
  std::uint64_t rescheduled = 0;  ///< new times of already scheduled events
  std::uint64_t kept = 0;         ///< of which reschedule_no_later left the queue alone
};

class Kernel {
 public:
  Kernel() = default;
  ~Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  VertexState& state() { return state_; }
  const VertexState& state() const { return state_; }

  /// Registers a source; the returned kind identifies its events.
  EventKind add_source(std::unique_ptr<EventSource> source);
  EventSource& source(EventKind kind) { return *sources_[kind]; }
  const EventSource& source(EventKind kind) const { return *sources_[kind]; }
  std::size_t source_count() const { return sources_.size(); }

  /// Starts the clock at `t` instead of 0 (a run resumed from a frame at time t):
  /// call before any source is registered; sources schedule from now().
  void start_at(double t) {
    assert(sources_.empty() && queue_.empty() && t >= 0.0);
    now_ = t;
  }

  // --- scheduling (by kind and slot; the kernel keeps the queue handles) -----------
  void schedule(EventKind kind, EventSlot slot, double time);
  /// Moves a scheduled event to `time`, or schedules it if it is not.
  void reschedule(EventKind kind, EventSlot slot, double time);
  /// A certificate's new failure time after a support change: moves its event
  /// earlier, schedules it if idle, but leaves it in place if `time` is later. The
  /// event then fires early, where its handler re-certifies from the state of that
  /// moment — safe, since a certificate may always be re-evaluated before it fails.
  /// Under jitter (penalty kicks near a jam) a failure time moves up and down many
  /// times between firings; only its new minima touch the queue.
  void reschedule_no_later(EventKind kind, EventSlot slot, double time);
  void cancel(EventKind kind, EventSlot slot);
  bool scheduled(EventKind kind, EventSlot slot) const;
  /// Time of a scheduled event.
  double scheduled_time(EventKind kind, EventSlot slot) const;

  // --- velocity changes (engine/velocity_watch.hpp) --------------------------------
  /// Reports a velocity change of `a` (after syncing it): its health is checked, and
  /// the velocity watch (contact's contingency), if any, learns of it.
  void velocity_changed(Index a) {
    check_health(a);
    if (watch_) watch_->velocity_changed(a);
  }
  /// Installs the velocity watch (owned; replaces any other): contact's certificate
  /// contingency (contact/certificates/contingency.hpp).
  void set_velocity_watch(std::unique_ptr<VelocityWatch> watch) { watch_ = std::move(watch); }
  VelocityWatch* velocity_watch() const { return watch_.get(); }
  /// Lets the watch act on the changes so far (the kernel calls it after each event;
  /// sources that change many velocities at once may call it too).
  void flush_velocity_watch() {
    if (watch_) watch_->flush();
  }
  /// Prefetches the queue handle of a slot whose event is about to be rescheduled.
  void prefetch_slot(EventKind kind, EventSlot slot) const {
    const std::vector<SlotHandle>& table = handles_[kind];
    if (slot < table.size()) __builtin_prefetch(table.data() + slot, 1);
  }

  // --- health (engine/health.hpp) ---------------------------------------------------
  void set_health_limits(const HealthLimits& limits) {
    health_ = limits;
    max_speed2_ = limits.max_speed * limits.max_speed;
    max_extent2_ = limits.max_extent * limits.max_extent;
  }
  const HealthLimits& health_limits() const { return health_; }
  /// Flags vertex a if its velocity is not finite or above max_speed; the event being
  /// processed then throws NumericalFailure when it returns. Positions are checked at
  /// frames (health_problem): a position only moves by a finite velocity over a finite
  /// time, so it cannot leave the limits faster than max_speed lets it, and the check
  /// here stays one squared norm (it runs at every velocity change).
  void check_health(Index a) {
    if (!(state_.velocity(a).squaredNorm() <= max_speed2_)) [[unlikely]]
      flag_unhealthy(a);
  }
  /// What is wrong with vertex a's state at time t, or "" if nothing.
  std::string health_problem(Index a, double t) const;

  // --- the loop ----------------------------------------------------------------------
  /// Processes every event with time <= t_end, in (time, seq) order, and returns
  /// early if the poll hook asks to stop (set_poll).
  void run_until(double t_end);
  /// Called every `every` processed events from run_until (progress lines, Ctrl-C):
  /// returns true to stop the loop. An empty hook is never called.
  void set_poll(std::function<bool()> hook, std::uint64_t every = 1024) {
    poll_ = std::move(hook);
    poll_every_ = every;
    next_poll_ = processed_ + every;
  }
  /// Whether the last run_until returned because the poll hook asked it to.
  bool stopped() const { return stopped_; }
  /// Processes one event; false if the queue is empty.
  bool step();
  double now() const { return now_; }
  bool empty() const { return queue_.empty(); }
  double next_event_time() const { return queue_.empty() ? kNever : queue_.top().time; }
  std::size_t queue_size() const { return queue_.size(); }

  // --- observers (engine/kernel_observer.hpp) ------------------------------------
  /// Attaches `observer` (not owned: remove it before it dies; ScopedObserver does).
  /// It learns of every source already added (on_source_added), then of later ones.
  /// Attach and remove between events or from a source, never from inside a hook
  /// (the kernel is walking its observer lists then).
  void add_observer(KernelObserver& observer);
  void remove_observer(KernelObserver& observer);
  std::size_t observer_count() const { return observers_.size(); }

  // --- statistics --------------------------------------------------------------------
  std::uint64_t events_processed() const { return processed_; }
  const KindStats& stats(EventKind kind) const { return stats_[kind]; }

 private:
  struct SlotHandle {
    double time = 0.0;  ///< the event's time while scheduled (reschedule_no_later)
    EventQueue::Handle handle{};
    std::uint8_t state = 0;  // 0 idle, 1 scheduled, 2 in flight (at the top, processing)
  };
  SlotHandle& slot_handle(EventKind kind, EventSlot slot);
  /// The one way a slot's event gets a time (pushed if idle, moved if scheduled or in
  /// flight) or leaves the queue: schedule, reschedule, cancel and the time a processed
  /// event's source returns all go through these two.
  void place(SlotHandle& h, EventKind kind, EventSlot slot, double time) {
    if (h.state == 0) h.handle = queue_.push(time, kind, slot);
    else queue_.update(h.handle, time);
    h.time = time;
    h.state = 1;
  }
  void remove(SlotHandle& h) {
    queue_.erase(h.handle);
    h.state = 0;
  }
  void process_top() {
    if (observed_) [[unlikely]] process_top_impl<true>();
    else process_top_impl<false>();
  }
  /// The loop body, with the observer hooks compiled in or out.
  template <bool kObserved>
  void process_top_impl();
  void notify_queue(EventKind kind, EventSlot slot, QueueChange what) {
    for (KernelObserver* o : hooked_[kQueueHook]) o->on_queue_change(kind, slot, what);
  }
  void flag_unhealthy(Index a) {
    if (!unhealthy_) unhealthy_vertex_ = a;
    unhealthy_ = true;
  }
  [[noreturn]] void fail_health(EventKind kind, double time) const;

  VertexState state_;
  EventQueue queue_;
  std::vector<std::unique_ptr<EventSource>> sources_;
  std::unique_ptr<VelocityWatch> watch_;  ///< after sources_: destroyed before them
  std::vector<std::vector<SlotHandle>> handles_;
  std::vector<KindStats> stats_;
  std::uint64_t processed_ = 0;
  double now_ = 0.0;
  // Observers, and per hook (KernelObserver::Hook bit i) those that asked for it.
  static constexpr int kHookCount = 5, kQueueHook = 4;
  std::vector<KernelObserver*> observers_;
  std::array<std::vector<KernelObserver*>, kHookCount> hooked_;
  bool observed_ = false;       ///< some observer wants an event hook
  bool queue_watched_ = false;  ///< some observer wants kQueueChanges
  HealthLimits health_;
  double max_speed2_ = health_.max_speed * health_.max_speed;
  double max_extent2_ = health_.max_extent * health_.max_extent;
  bool unhealthy_ = false;
  Index unhealthy_vertex_ = 0;
  std::function<bool()> poll_;
  std::uint64_t poll_every_ = 1024, next_poll_ = ~std::uint64_t(0);
  bool stopped_ = false;
};

/// Attaches an observer to a kernel for the lifetime of this object.
class ScopedObserver {
 public:
  ScopedObserver(Kernel& kernel, KernelObserver& observer) : kernel_(kernel), observer_(observer) {
    kernel_.add_observer(observer_);
  }
  ~ScopedObserver() { kernel_.remove_observer(observer_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  Kernel& kernel_;
  KernelObserver& observer_;
};

}  // namespace clockwork
