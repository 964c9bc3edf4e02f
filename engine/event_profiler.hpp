#pragma once
/// The sampling profiler, a kernel observer (engine/kernel_observer.hpp): times each
/// kind's events (the source's process) and, separately, the certificate rescheduling
/// that follows them (contingency_seconds): the phantom-mesh paper's Table 1 shares
/// (io/run/profile.hpp). A clock read costs ~30 ns, as much as a small event, so kinds
/// whose events take under 2 µs are sampled (one event in 16 at random, weighted 16);
/// longer ones are all timed.
#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/kernel_observer.hpp"

namespace clockwork {

class EventProfiler final : public KernelObserver {
 public:
  unsigned hooks() const override { return kBeforeEvent | kAfterProcess | kBeforeFlush | kAfterEvent; }
  void on_source_added(EventKind kind, const EventSource& source) override;
  void before_event(const EventNode& event, const EventSource& source) override;
  void after_process(const EventNode& event) override;
  void before_flush(const EventNode& event, double next_time) override;
  void after_event(const EventNode& event, const EventSource& source) override;

  /// Wall time in the sources' process of `kind`, s: an unbiased estimate from the
  /// sampled events (0 for a kind never seen).
  double seconds(EventKind kind) const { return kind < kinds_.size() ? kinds_[kind].seconds : 0.0; }
  /// Wall time in the contingency flushes after events, s (estimated the same way).
  double contingency_seconds() const { return contingency_seconds_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Kind {
    double seconds = 0.0;         ///< the estimate
    double timed_seconds = 0.0;   ///< raw time of the timed events
    std::uint64_t timed_events = 0;
  };
  /// Weight of this event's time in the estimate: 0 (not timed), 1 or 16.
  double weight(EventKind kind);

  std::vector<Kind> kinds_;
  double contingency_seconds_ = 0.0;
  std::uint64_t sample_state_ = 0x9E3779B97F4A7C15ull;
  // The event under way.
  double weight_ = 0.0;
  Clock::time_point process_start_, process_end_, flush_start_;
};

}  // namespace clockwork
