#pragma once
/// The kernel's observer hook (DESIGN §1): what watches the event loop without being
/// part of it — the trace (engine/trace.hpp), the sampling profiler
/// (engine/event_profiler.hpp), the viewer's event counts (io/run/event_counts.hpp).
/// An observer names the hooks it wants (hooks()); the kernel calls only those. With
/// none attached the loop pays one predictable branch per event and one per queue
/// change (docs/performance.md "Observers").
#include <cstdint>

#include "engine/event_queue.hpp"

namespace clockwork {

class EventSource;

/// What happened to a scheduled event other than the one being processed (the
/// processed event's own next time is in before_flush).
enum class QueueChange : std::uint8_t {
  created,      ///< schedule, or reschedule of an idle slot
  rescheduled,  ///< reschedule of a scheduled (or in-flight) slot
  destroyed,    ///< cancel of a scheduled slot
};

class KernelObserver {
 public:
  /// The hooks, in the order they are called for one event.
  enum Hook : unsigned {
    kBeforeEvent = 1u << 0,   ///< before the source processes it
    kAfterProcess = 1u << 1,  ///< the source returned (the queue not yet updated)
    kBeforeFlush = 1u << 2,   ///< the slot's next time is in the queue; contingency next
    kAfterEvent = 1u << 3,    ///< after the contingency flush: the event is done
    kQueueChanges = 1u << 4,  ///< every schedule, reschedule and cancel (on_queue_change)
  };
  virtual ~KernelObserver() = default;
  /// Bitwise or of the Hook values this observer implements; read once, when attached.
  virtual unsigned hooks() const = 0;

  /// A source exists under `kind`: called for every source present when the observer
  /// is attached, then for each one added while it is.
  virtual void on_source_added(EventKind /*kind*/, const EventSource& /*source*/) {}
  /// Before `source` processes `event` (its stencil is still the event's: a source may
  /// recycle the slot while processing).
  virtual void before_event(const EventNode& /*event*/, const EventSource& /*source*/) {}
  virtual void after_process(const EventNode& /*event*/) {}
  /// The slot's next occurrence: the time the source returned or rescheduled it to,
  /// kNever if it is idle now.
  virtual void before_flush(const EventNode& /*event*/, double /*next_time*/) {}
  virtual void after_event(const EventNode& /*event*/, const EventSource& /*source*/) {}
  virtual void on_queue_change(EventKind /*kind*/, EventSlot /*slot*/, QueueChange /*what*/) {}
};

}  // namespace clockwork
