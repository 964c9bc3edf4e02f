#pragma once
/// Event trace (DESIGN §1, docs/trace-format.md): one record per processed event,
/// written through its own spdlog logger and file sink. A kernel observer
/// (engine/kernel_observer.hpp): off unless attached.
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "engine/event_queue.hpp"
#include "engine/kernel_observer.hpp"

namespace spdlog {
class logger;
}

namespace clockwork {

enum class TraceFormat { kJsonLines, kChrome };

/// What one event did to the queue (besides its own slot's next time), counted while it ran.
struct EventEffects {
  std::uint32_t created = 0;
  std::uint32_t rescheduled = 0;
  std::uint32_t destroyed = 0;
};

class Trace final : public KernelObserver {
 public:
  /// Opens `path` for writing; throws std::runtime_error naming the path on failure.
  Trace(const std::string& path, TraceFormat format);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  /// Names the timeline track of an event kind (Chrome format only).
  void name_track(EventKind kind, std::string_view kind_name);

  void record(const EventNode& event, std::string_view kind_name, int stencil_size,
              const EventEffects& effects, double wall_seconds);

  // The observer: a record per event, its wall time from before the source processes
  // it to the end of the contingency flush after it.
  unsigned hooks() const override { return kBeforeEvent | kAfterEvent | kQueueChanges; }
  void on_source_added(EventKind kind, const EventSource& source) override;
  void before_event(const EventNode& event, const EventSource& source) override;
  void after_event(const EventNode& event, const EventSource& source) override;
  void on_queue_change(EventKind kind, EventSlot slot, QueueChange what) override;

 private:
  EventEffects effects_;
  std::chrono::steady_clock::time_point wall_start_;
  std::shared_ptr<spdlog::logger> logger_;
  TraceFormat format_;
  std::uint64_t count_ = 0;
};

TraceFormat parse_trace_format(std::string_view name);

}  // namespace clockwork
