#include "io/run/event_counts.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/event_source.hpp"

namespace clockwork {

void EventCounts::on_source_added(EventKind kind, const EventSource& /*source*/) {
  if (period_bins_.size() <= kind) period_bins_.resize(std::size_t(kind) + 1, Histogram{});
}

void EventCounts::before_event(const EventNode& event, const EventSource& source) {
  // Read before processing: a source may recycle the slot inside.
  for (Index a : source.stencil_vertices(event.slot)) {
    assert(a < vertex_events_.size() && "EventCounts sized before all vertices were added");
    ++vertex_events_[a];
  }
}

void EventCounts::before_flush(const EventNode& event, double next_time) {
  // Period: to the slot's next occurrence, returned or rescheduled by the source.
  if (!(next_time < kNever)) return;
  const double period = next_time - event.time;
  // floor(10 log10 p) + offset; non-positive periods (a re-fire at the same time) go
  // to the lowest bin.
  int bin = 0;
  if (period > 0.0)
    bin = std::clamp(static_cast<int>(std::floor(kPeriodBinsPerDecade * std::log10(period))) + kPeriodBinOfOne,
                     0, kPeriodBins - 1);
  ++period_bins_[event.kind][static_cast<std::size_t>(bin)];
}

double EventCounts::period_bin_lower(int bin) {
  return std::pow(10.0, double(bin - kPeriodBinOfOne) / kPeriodBinsPerDecade);
}

}  // namespace clockwork
