#pragma once
/// Event counts (docs/viewer.md: the asynchrony heat map), a kernel observer
/// (engine/kernel_observer.hpp): for every vertex, the processed events whose stencil
/// holds it (EventSource::stencil_vertices), and per kind a histogram of event
/// periods: the time from an event to its slot's next occurrence, 10 log-spaced bins
/// per decade. The frames' PLY `events` column and event_periods.csv (io/run/run.cpp).
/// Attached by `clockwork run` unless --no-event-counts (cost: docs/performance.md).
#include <array>
#include <cstdint>
#include <vector>

#include "engine/kernel_observer.hpp"
#include "engine/types.hpp"

namespace clockwork {

class EventCounts final : public KernelObserver {
 public:
  static constexpr int kPeriodBinsPerDecade = 10;
  static constexpr int kPeriodBins = 200;      ///< 1e-14 s .. 1e6 s; the ends absorb the rest
  static constexpr int kPeriodBinOfOne = 140;  ///< the bin whose lower edge is 1 s
  using Histogram = std::array<std::uint64_t, kPeriodBins>;

  /// Counts for vertices 0 .. vertex_count − 1 (the kernel's, once all are added).
  explicit EventCounts(std::size_t vertex_count) : vertex_events_(vertex_count, 0) {}

  unsigned hooks() const override { return kBeforeEvent | kBeforeFlush; }
  void on_source_added(EventKind kind, const EventSource& source) override;
  void before_event(const EventNode& event, const EventSource& source) override;
  void before_flush(const EventNode& event, double next_time) override;

  /// Cumulative events per vertex.
  const std::vector<std::uint64_t>& vertex_events() const { return vertex_events_; }
  /// Lower edge of a period bin, s: 10^((bin − kPeriodBinOfOne) / kPeriodBinsPerDecade).
  static double period_bin_lower(int bin);
  /// The kind's histogram (all zero for a kind never seen).
  const Histogram& period_histogram(EventKind kind) const {
    return kind < period_bins_.size() ? period_bins_[kind] : empty_;
  }

 private:
  std::vector<std::uint64_t> vertex_events_;
  std::vector<Histogram> period_bins_;
  Histogram empty_{};
};

}  // namespace clockwork
