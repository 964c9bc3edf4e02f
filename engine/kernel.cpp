#include "engine/kernel.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>

namespace clockwork {

Kernel::~Kernel() {
  for (const auto& lists : dependents_)
    for (const DependentList& list : lists)
      for (const DependentList::Entry& e : list.entries())
        if (e.owner) e.owner->support_size = 0;
}

namespace {

/// The exits of vertices from their position envelopes (slot: the vertex).
class BallSource final : public EventSource {
 public:
  std::string_view name() const override { return "certificate:ball"; }
  double process(EventSlot slot, double t, Kernel& kernel) override {
    return kernel.ball_event(static_cast<Index>(slot), t);
  }
};

}  // namespace

void Kernel::enable_position_envelopes(int level, double radius) {
  assert(level > 0 && level < kEnvelopeLevels && radius > 0.0 && ball_level_ == 0);
  assert(reach_[level] > 0.0 && slack_[level] > 0.0 && "position envelopes need the adaptive slack");
  assert(envelope_[level].size() == state_.size() && "finalize_vertices() first");
  ball_level_ = level;
  ball_radius_ = radius;
  balls_.assign(state_.size(), Ball{});
  ball_kind_ = add_source(std::make_unique<BallSource>());
}

void Kernel::enter_ball(int l, Index a) {
  Envelope& e = envelope_[l][a];
  Ball& b = balls_[a];
  b.anchor = state_.position_at(a, now_);
  b.shadow = state_.velocity(a);
  b.shadow_exits = 0;
  e.centre = Vec3::Zero();
  e.slack = -0.0f;
  e.since = float(now_);
  ++ball_entries_;
  reschedule(ball_kind_, a, ball_exit_time(a, now_));
}

void Kernel::ball_velocity_changed(int l, Index a) {
  Ball& b = balls_[a];
  const Vec3& v = state_.velocity(a);
  const double cap = slack_cap(l);
  if ((v - b.shadow).squaredNorm() > cap * cap) {
    b.shadow = v;
    ++b.shadow_exits;
  }
  reschedule_no_later(ball_kind_, a, ball_exit_time(a, now_));
}

double Kernel::ball_exit_time(Index a, double t) const {
  const Vec3 d = state_.position_at(a, t) - balls_[a].anchor;
  const Vec3& v = state_.velocity(a);
  const double r = ball_radius_ * (1.0 - 1e-6);
  const double c = d.squaredNorm() - r * r;
  if (c >= 0.0) return t;
  const double vv = v.squaredNorm();
  if (vv == 0.0) return kNever;
  // |d + v s| = r at the positive root (c < 0: the discriminant is positive).
  const double b = d.dot(v);
  return t + (std::sqrt(b * b - vv * c) - b) / vv;
}

double Kernel::ball_event(Index a, double t) {
  const int l = ball_level_;
  const double r = ball_radius_ * (1.0 - 2e-6);
  if ((state_.position_at(a, t) - balls_[a].anchor).squaredNorm() < r * r)
    return ball_exit_time(a, t);  // moved earlier by a velocity since changed again
  ++ball_exits_;
  if (!dependents_[l][a].empty()) touched_[l].push_back(a);
  Ball& b = balls_[a];
  if (b.shadow_exits >= 2) {
    b.anchor = state_.position_at(a, t);
    b.shadow = state_.velocity(a);
    b.shadow_exits = 0;
    return ball_exit_time(a, t);
  }
  // The vertex went through its ball with (nearly) one velocity: the velocity
  // envelope, at its widest, serves it better.
  Envelope& e = envelope_[l][a];
  e.centre = state_.velocity(a);
  e.slack = float(slack_cap(l));
  e.since = float(t);
  return kNever;
}

EventKind Kernel::add_source(std::unique_ptr<EventSource> source) {
  assert(sources_.size() < 0xffff);
  const auto kind = static_cast<EventKind>(sources_.size());
  sources_.push_back(std::move(source));
  handles_.emplace_back();
  stats_.emplace_back();
  for (KernelObserver* o : observers_) o->on_source_added(kind, *sources_.back());
  return kind;
}

void Kernel::finalize_vertices() {
  // Lists hold intrusive links: they may only be (re)sized while all are empty.
  for (int l = 0; l < kEnvelopeLevels; ++l) {
    for ([[maybe_unused]] const auto& list : dependents_[l]) assert(list.empty());
    dependents_[l] = std::vector<DependentList>(state_.size());
    if (l > 0) {
      envelope_[l].resize(state_.size());
      for (Index a = 0; a < state_.size(); ++a) envelope_[l][a] = {state_.velocity(a), float(slack_[l]), float(now_)};
    }
    touched_[l].reserve(state_.size());
  }
}

Kernel::SlotHandle& Kernel::slot_handle(EventKind kind, EventSlot slot) {
  auto& table = handles_[kind];
  if (slot >= table.size()) table.resize(std::size_t(slot) + 1);
  return table[slot];
}

void Kernel::schedule(EventKind kind, EventSlot slot, double time) {
  assert(time >= now_);
  SlotHandle& h = slot_handle(kind, slot);
  assert(h.state == 0 && "event already scheduled");
  place(h, kind, slot, time);
  if (queue_watched_) [[unlikely]]
    notify_queue(kind, slot, QueueChange::created);
}

void Kernel::reschedule(EventKind kind, EventSlot slot, double time) {
  assert(time >= now_);
  SlotHandle& h = slot_handle(kind, slot);
  const bool moved = h.state != 0;
  place(h, kind, slot, time);
  if (moved) ++stats_[kind].rescheduled;
  if (queue_watched_) [[unlikely]]
    notify_queue(kind, slot, moved ? QueueChange::rescheduled : QueueChange::created);
}

void Kernel::reschedule_no_later(EventKind kind, EventSlot slot, double time) {
  SlotHandle& h = slot_handle(kind, slot);
  // The time kept beside the handle: the check costs no visit to the queue.
  if (h.state == 1 && h.time <= time) {
    ++stats_[kind].rescheduled;
    ++stats_[kind].kept;
    return;
  }
  reschedule(kind, slot, time);
}

void Kernel::cancel(EventKind kind, EventSlot slot) {
  SlotHandle& h = slot_handle(kind, slot);
  if (h.state == 0) return;
  remove(h);
  if (queue_watched_) [[unlikely]]
    notify_queue(kind, slot, QueueChange::destroyed);
}

bool Kernel::scheduled(EventKind kind, EventSlot slot) const {
  return slot < handles_[kind].size() && handles_[kind][slot].state != 0;
}

double Kernel::scheduled_time(EventKind kind, EventSlot slot) const {
  assert(scheduled(kind, slot));
  return handles_[kind][slot].time;
}

void Kernel::attach(Certificate& c, Index a) {
  assert(c.support_size < Certificate::kMaxSupport);
  assert(a < dependents_[0].size() && "finalize_vertices() before attaching certificates");
  assert(c.envelope < kEnvelopeLevels);
  const int l = c.envelope;
  // A velocity set without velocity_changed (scene set-up) may lie outside the
  // envelope: re-centre it, and let the others who rely on it reschedule.
  if (l > 0 && !in_ball(envelope_[l][a]) && leaves_envelope(l, envelope_[l][a], state_.velocity(a))) {
    envelope_[l][a].centre = state_.velocity(a);
    if (!dependents_[l][a].empty()) touched_[l].push_back(a);
  }
  ContingencyLink& link = c.links[c.support_size];
  link.list = &dependents_[l][a];
  link.pos = link.list->push(&c, c.support_size);
  ++c.support_size;
}

void Kernel::flush_contingency() {
  bool any = false;
  for (const auto& t : touched_) any = any || !t.empty();
  if (!any) return;
  ++epoch_;
  // Collect first: a certificate's handler may re-link its support. The owners are
  // scattered in their sources' pools: their stamps are prefetched a few entries ahead.
  constexpr std::size_t kAhead = 8;
  const auto collect = [&](std::vector<Index>& touched, std::vector<DependentList>& lists) {
    for (Index a : touched) {
      const std::vector<DependentList::Entry>& entries = lists[a].entries();
      const std::size_t n = entries.size();
      for (std::size_t i = 0; i < std::min(kAhead, n); ++i)
        if (entries[i].owner) __builtin_prefetch(&entries[i].owner->stamp, 1);
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n && entries[i + kAhead].owner)
          __builtin_prefetch(&entries[i + kAhead].owner->stamp, 1);
        Certificate* c = entries[i].owner;
        if (c == nullptr || c->stamp == epoch_) continue;
        c->stamp = epoch_;
        pending_.push_back(c);
      }
    }
    touched.clear();
  };
  for (int l = 1; l < kEnvelopeLevels; ++l) envelope_exits_ += touched_[l].size();
  for (int l = 0; l < kEnvelopeLevels; ++l) collect(touched_[l], dependents_[l]);
  // The handlers read each certificate's pool entry and then its queue handle: both
  // are prefetched, the handle once the entry (which names it) has arrived. (Staged
  // prefetches of the support's vertices through the sources were slower, measured
  // while the pools were still deques: bench/results/history_contact.md "Contingency lists
  // and pools".)
  const std::size_t n = pending_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n) __builtin_prefetch(pending_[i + 2 * kAhead]);
    if (i + kAhead < n) {
      const Certificate* ahead = pending_[i + kAhead];
      const std::vector<SlotHandle>& table = handles_[ahead->kind];
      if (ahead->slot < table.size()) __builtin_prefetch(table.data() + ahead->slot, 1);
    }
    const Certificate* c = pending_[i];
    sources_[c->kind]->support_changed(c->slot, *this);
  }
  pending_.clear();
}

template <bool kObserved>
void Kernel::process_top_impl() {
  const EventNode event = queue_.top();
  now_ = event.time;
  SlotHandle& h = handles_[event.kind][event.slot];
  assert(h.state == 1);
  h.state = 2;
  EventSource& source = *sources_[event.kind];
  if constexpr (kObserved)
    for (KernelObserver* o : hooked_[0]) o->before_event(event, source);
  double next;
  try {
    next = source.process(event.slot, event.time, *this);
  } catch (NumericalFailure& e) {
    // A failure found deep in a solver or a contact pair: the event names it.
    if (e.event_kind.empty()) {
      e.event_kind = source.name();
      e.time = event.time;
    }
    throw;
  }
  if (unhealthy_) [[unlikely]]
    fail_health(event.kind, event.time);
  if constexpr (kObserved)
    for (KernelObserver* o : hooked_[1]) o->after_process(event);
  // The slot's next occurrence. A source either returns it, or reschedules or cancels
  // its own slot through the kernel and returns kNever; either way it reaches the
  // queue through place/remove. (An in-flight event is still the top: moving it later
  // is one sift instead of a pop and a push.) The handle table may have grown during
  // processing: look the slot up again.
  SlotHandle& after = handles_[event.kind][event.slot];
  if (after.state == 2) {
    if (next < kNever) place(after, event.kind, event.slot, next);
    else remove(after);
  } else {
    assert(next == kNever && "a source that rescheduled itself must return kNever");
  }
  if constexpr (kObserved)
    for (KernelObserver* o : hooked_[2]) o->before_flush(event, after.state == 1 ? after.time : kNever);
  flush_contingency();
  ++processed_;
  ++stats_[event.kind].processed;
  if constexpr (kObserved)
    for (KernelObserver* o : hooked_[3]) o->after_event(event, source);
}

template void Kernel::process_top_impl<false>();
template void Kernel::process_top_impl<true>();

void Kernel::add_observer(KernelObserver& observer) {
  assert(std::find(observers_.begin(), observers_.end(), &observer) == observers_.end());
  observers_.push_back(&observer);
  const unsigned hooks = observer.hooks();
  for (int i = 0; i < kHookCount; ++i)
    if (hooks & (1u << i)) hooked_[std::size_t(i)].push_back(&observer);
  observed_ = !hooked_[0].empty() || !hooked_[1].empty() || !hooked_[2].empty() || !hooked_[3].empty();
  queue_watched_ = !hooked_[kQueueHook].empty();
  for (std::size_t k = 0; k < sources_.size(); ++k)
    observer.on_source_added(static_cast<EventKind>(k), *sources_[k]);
}

void Kernel::remove_observer(KernelObserver& observer) {
  const auto drop = [&](std::vector<KernelObserver*>& list) { std::erase(list, &observer); };
  drop(observers_);
  for (auto& list : hooked_) drop(list);
  observed_ = !hooked_[0].empty() || !hooked_[1].empty() || !hooked_[2].empty() || !hooked_[3].empty();
  queue_watched_ = !hooked_[kQueueHook].empty();
}

bool Kernel::step() {
  if (queue_.empty()) return false;
  process_top();
  return true;
}

void Kernel::run_until(double t_end) {
  stopped_ = false;
  while (!queue_.empty() && queue_.top().time <= t_end) {
    process_top();
    if (processed_ >= next_poll_) [[unlikely]] {
      next_poll_ = processed_ + poll_every_;
      if (poll_ && poll_()) {
        stopped_ = true;
        return;
      }
    }
  }
  if (t_end > now_ && t_end < kNever) now_ = t_end;
}

std::string Kernel::health_problem(Index a, double t) const {
  const Vec3& v = state_.velocity(a);
  const Vec3 x = state_.position_at(a, t);
  const auto triple = [](const Vec3& u) { return fmt::format("({:.6g}, {:.6g}, {:.6g})", u.x(), u.y(), u.z()); };
  if (!v.allFinite()) return fmt::format("velocity {} m/s is not finite", triple(v));
  if (!x.allFinite()) return fmt::format("position {} m is not finite", triple(x));
  if (!(v.squaredNorm() <= max_speed2_))
    return fmt::format("speed {:.6g} m/s is above the health limit max_speed = {:.6g} m/s", v.stableNorm(),
                       health_.max_speed);
  if (!(x.squaredNorm() <= max_extent2_))
    return fmt::format("position {} m is {:.6g} m from the origin, beyond the health limit "
                       "max_extent = {:.6g} m",
                       triple(x), x.stableNorm(), health_.max_extent);
  return {};
}

void Kernel::fail_health(EventKind kind, double time) const {
  const Index a = unhealthy_vertex_;
  const std::string problem = health_problem(a, time);
  const std::string_view name = sources_[kind]->name();
  throw NumericalFailure(fmt::format("numerical failure at t = {:.9g} s in a {} event: vertex {}: {}",
                                     time, name, a, problem),
                         std::string(name), time, a, problem);
}

}  // namespace clockwork
