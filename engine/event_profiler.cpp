#include "engine/event_profiler.hpp"

namespace clockwork {

void EventProfiler::on_source_added(EventKind kind, const EventSource& /*source*/) {
  if (kinds_.size() <= kind) kinds_.resize(std::size_t(kind) + 1);
}

void EventProfiler::before_event(const EventNode& event, const EventSource& /*source*/) {
  weight_ = weight(event.kind);
  if (weight_ > 0) process_start_ = Clock::now();
}

void EventProfiler::after_process(const EventNode& /*event*/) {
  if (weight_ > 0) process_end_ = Clock::now();
}

void EventProfiler::before_flush(const EventNode& /*event*/, double /*next_time*/) {
  if (weight_ > 0) flush_start_ = Clock::now();
}

void EventProfiler::after_event(const EventNode& event, const EventSource& /*source*/) {
  if (!(weight_ > 0)) return;
  Kind& k = kinds_[event.kind];
  const double seconds = std::chrono::duration<double>(process_end_ - process_start_).count();
  k.seconds += weight_ * seconds;
  k.timed_seconds += seconds;
  ++k.timed_events;
  contingency_seconds_ += weight_ * std::chrono::duration<double>(Clock::now() - flush_start_).count();
}

double EventProfiler::weight(EventKind kind) {
  const Kind& k = kinds_[kind];
  const std::uint64_t n = k.timed_events;
  if (n < 16 || k.timed_seconds > 2e-6 * static_cast<double>(n)) return 1.0;
  // xorshift64: cheap, and no stride to alias with periodic event sequences.
  sample_state_ ^= sample_state_ << 13;
  sample_state_ ^= sample_state_ >> 7;
  sample_state_ ^= sample_state_ << 17;
  return (sample_state_ & 15u) == 0 ? 16.0 : 0.0;
}

}  // namespace clockwork
