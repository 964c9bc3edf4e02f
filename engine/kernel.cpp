#include "engine/kernel.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>

namespace clockwork {

EventKind Kernel::add_source(std::unique_ptr<EventSource> source) {
  assert(sources_.size() < 0xffff);
  const auto kind = static_cast<EventKind>(sources_.size());
  sources_.push_back(std::move(source));
  handles_.emplace_back();
  stats_.emplace_back();
  for (KernelObserver* o : observers_) o->on_source_added(kind, *sources_.back());
  return kind;
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
  flush_velocity_watch();
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
