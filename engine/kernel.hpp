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

#include "engine/contingency.hpp"
#include "engine/event_queue.hpp"
#include "engine/event_source.hpp"
#include "engine/health.hpp"
#include "engine/kernel_observer.hpp"
#include "engine/mass_share.hpp"
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
  /// Certificates may outlive the kernel (a scene destroys its contact system after
  /// it): their supports are emptied here, so that destroying them later touches no list.
  ~Kernel();
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

  // --- contingency -----------------------------------------------------------------
  /// Adds vertex `a` to the support of `c` (c.kind, c.slot identify its event;
  /// c.envelope chooses the list).
  void attach(Certificate& c, Index a);
  /// Reports a velocity change of `a` (after syncing it). Dependent certificates are
  /// rescheduled once each at the end of the current event: exact ones always,
  /// enveloped ones only if the velocity left their level's envelope.
  void velocity_changed(Index a) {
    check_health(a);
    if (!dependents_[0][a].empty()) touched_[0].push_back(a);
    for (int l = 1; l < kEnvelopeLevels; ++l) {
      // A ball holds whatever the velocity: only its exit time moves (even with no
      // dependents, so that the ball is still valid when one attaches).
      if (l == ball_level_ && in_ball(envelope_[l][a])) [[unlikely]] {
        ball_velocity_changed(l, a);
        continue;
      }
      if (dependents_[l][a].empty()) continue;
      Envelope& e = envelope_[l][a];
      if (leaves_envelope(l, e, state_.velocity(a))) {
        e.centre = state_.velocity(a);
        touched_[l].push_back(a);
        if (saturated_exit_ && l == ball_level_) enter_ball(l, a);
      }
    }
  }
  const DependentList& dependents(Index a, int level = 0) const { return dependents_[level][a]; }
  /// Slack δ (m/s) of envelope level `level` (1 ≤ level < kEnvelopeLevels); 0 makes it
  /// exact. Set before any certificate of that level is attached.
  void set_velocity_slack(int level, double slack) {
    assert(level > 0 && level < kEnvelopeLevels && slack >= 0.0);
    slack_[level] = double(float(slack));  // the per-vertex slacks are floats (Envelope)
    for (Envelope& e : envelope_[level]) e.slack = float(slack);
  }
  /// Per-vertex adaptive slack at `level` (off while reach is 0). A vertex whose
  /// velocity leaves its envelope again before the slack could cover reach/4 (time
  /// since the last exit × δ_a) doubles its δ_a, up to max_factor × the level's δ: a
  /// velocity that jitters (a vertex in a jam, kicked by penalties and by the phantom
  /// tick in turn) stops rescheduling its certificates, which pay with earlier failure
  /// times instead. Once the slack has covered `reach` without an exit, δ_a halves
  /// back towards the level's δ at its next velocity change; certificates computed with
  /// the wider envelope stay valid inside the narrower one, so relaxing reschedules
  /// nothing. `reach` is the length a certificate's margin is made of (η1 for contact).
  void set_adaptive_slack(int level, double reach, double max_factor) {
    assert(level > 0 && level < kEnvelopeLevels && reach >= 0.0 && max_factor >= 1.0);
    reach_[level] = reach;
    max_factor_[level] = max_factor;
  }
  /// Position envelopes at `level` (docs/contact.md "Position envelopes"; needs the
  /// adaptive slack). A vertex whose velocity leaves even the widest envelope again
  /// and again (a vertex rattling in a jam: kicked by layers and by the phantom tick
  /// in turn) is bounded by position instead: while in its *ball* it stays within
  /// `radius` of an anchor p_a, whatever its velocity. Its certificates see the
  /// anchor (envelope_position), the radius (envelope_radius) and a zero velocity
  /// envelope (centre 0, slack 0), and are rescheduled only when the vertex leaves
  /// the ball — an event of kind "certificate:ball" at the exit time of its linear
  /// path, moved earlier as its velocity changes. On an exit the ball re-centres on
  /// the vertex if its velocity would have left the widest envelope at least twice
  /// meanwhile (the ball saved reschedules), else the vertex returns to its velocity
  /// envelope. Call after finalize_vertices(), set_velocity_slack() and
  /// set_adaptive_slack() of the level, before certificates attach.
  void enable_position_envelopes(int level, double radius);
  /// Where a certificate of `level` takes vertex a to be from time t on: the anchor
  /// of its ball, or its position at t.
  Vec3 envelope_position(int level, Index a, double t) const {
    return in_ball(envelope_[level][a]) ? balls_[a].anchor : state_.position_at(a, t);
  }
  /// The ball's radius for a vertex in one, else 0.
  double envelope_radius(int level, Index a) const {
    return in_ball(envelope_[level][a]) ? ball_radius_ : 0.0;
  }
  bool in_ball(int level, Index a) const { return level > 0 && in_ball(envelope_[level][a]); }
  /// Entries into balls and exits from them so far.
  std::uint64_t ball_entries() const { return ball_entries_; }
  std::uint64_t ball_exits() const { return ball_exits_; }
  /// Processes vertex a's ball event at t (the "certificate:ball" source).
  double ball_event(Index a, double t);
  /// The level's slack δ (the base of the adaptive per-vertex slacks).
  double velocity_slack(int level) const { return slack_[level]; }
  /// Vertex a's slack δ_a at `level` (the level's δ unless adaptive).
  double velocity_slack(int level, Index a) const { return double(envelope_[level][a].slack); }
  /// Centre u_a of vertex a's envelope at `level` (level 0: the velocity itself).
  const Vec3& envelope_velocity(int level, Index a) const {
    return level == 0 ? state_.velocity(a) : envelope_[level][a].centre;
  }
  /// Envelope exits so far at levels >= 1 (each reschedules that level's certificates
  /// of the vertex).
  std::uint64_t envelope_exits() const { return envelope_exits_; }
  /// Reschedules the certificates of all vertices touched so far (the kernel calls it
  /// after each event; sources that change many velocities at once may call it too).
  void flush_contingency();

  // --- shared masses (engine/mass_share.hpp) -----------------------------------------
  /// Vertex `a`'s mass is shared with `share` (its local index `local` there).
  void set_mass_share(Index a, MassShare* share, Index local) {
    if (shared_mass_.size() < state_.size()) shared_mass_.resize(state_.size());
    shared_mass_[a] = {share, local};
  }
  /// Who holds the rest of vertex a's mass ({nullptr} if the kernel holds all of it).
  SharedMass shared_mass(Index a) const {
    return a < shared_mass_.size() ? shared_mass_[a] : SharedMass{};
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
  /// 32 bytes, aligned: a cache line holds two and none straddles two. Floats suffice:
  /// δ_a is read as the same float by the exit test and by the failure times, and
  /// `since` only steers the heuristic.
  struct alignas(32) Envelope {
    Vec3 centre = Vec3::Zero();
    float slack = 0.0f;  ///< δ_a
    float since = 0.0f;  ///< time of the last exit or change of δ_a
  };
  /// A vertex in a ball has centre 0 and slack −0: certificates read a zero envelope,
  /// and the sign bit tells the ball apart from a level whose slack is 0.
  static bool in_ball(const Envelope& e) { return std::signbit(e.slack); }
  /// Whether velocity v leaves e (adapting δ_a first: set_adaptive_slack). An exit
  /// that comes quickly with δ_a already at its cap sets saturated_exit_.
  bool leaves_envelope(int l, Envelope& e, const Vec3& v) {
    const double d2 = (v - e.centre).squaredNorm();
    if (reach_[l] > 0.0) {
      saturated_exit_ = false;
      const double slack = e.slack;
      const double covered = (now_ - double(e.since)) * slack;
      if (d2 > slack * slack) {
        const double cap = max_factor_[l] * slack_[l];
        saturated_exit_ = covered < 0.25 * reach_[l] && slack >= double(float(cap));
        if (covered < 0.25 * reach_[l]) e.slack = float(std::min(2.0 * slack, cap));
        e.since = float(now_);
        return true;
      }
      if (covered > reach_[l] && slack > slack_[l]) {
        e.slack = float(std::max(0.5 * slack, slack_[l]));
        e.since = float(now_);
        return d2 > double(e.slack) * double(e.slack);
      }
      return false;
    }
    return d2 > double(e.slack) * double(e.slack);
  }
  /// A vertex's position envelope (enable_position_envelopes).
  struct Ball {
    Vec3 anchor = Vec3::Zero();
    Vec3 shadow = Vec3::Zero();  ///< the widest velocity envelope's centre, followed
    int shadow_exits = 0;        ///< its exits since the ball was anchored
  };
  void enter_ball(int l, Index a);
  void ball_velocity_changed(int l, Index a);
  /// When vertex a's linear path from time t leaves its ball (shrunk by a millionth,
  /// so that rounding never puts it outside the radius its certificates assume).
  double ball_exit_time(Index a, double t) const;
  /// The widest slack of level l (its cap).
  double slack_cap(int l) const { return double(float(max_factor_[l] * slack_[l])); }
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
  std::vector<std::vector<SlotHandle>> handles_;
  std::vector<KindStats> stats_;
  std::array<std::vector<DependentList>, kEnvelopeLevels> dependents_;
  std::array<std::vector<Envelope>, kEnvelopeLevels> envelope_;  ///< [0] unused
  std::array<double, kEnvelopeLevels> slack_{}, reach_{}, max_factor_{};
  std::uint64_t envelope_exits_ = 0;
  bool saturated_exit_ = false;  ///< set by leaves_envelope
  int ball_level_ = 0;           ///< 0: no position envelopes
  double ball_radius_ = 0.0;
  EventKind ball_kind_ = 0;
  std::vector<Ball> balls_;
  std::uint64_t ball_entries_ = 0, ball_exits_ = 0;
  std::array<std::vector<Index>, kEnvelopeLevels> touched_;
  std::vector<Certificate*> pending_;
  std::vector<SharedMass> shared_mass_;
  std::uint64_t epoch_ = 0;
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
