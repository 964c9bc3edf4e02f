#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "engine/kernel.hpp"
#include "io/run/event_counts.hpp"

using namespace clockwork;

namespace {

/// Slot s acts on vertices {s, s + 1} and recurs with period s + 1 until 10.
class PairTicks final : public EventSource {
 public:
  std::array<std::array<Index, 2>, 3> stencils{{{0, 1}, {1, 2}, {2, 3}}};
  std::string_view name() const override { return "pairs"; }
  std::span<const Index> stencil_vertices(EventSlot slot) const override { return stencils[slot]; }
  double process(EventSlot slot, double time, Kernel&) override {
    const double next = time + slot + 1;
    return next <= 10 ? next : kNever;
  }
};

}  // namespace

TEST_CASE("event counts: every processed event counts once for each vertex of its stencil") {
  Kernel k;
  for (int a = 0; a < 4; ++a) k.state().add(Vec3(a, 0, 0), Vec3::Zero(), 1.0);
  const EventKind kind = k.add_source(std::make_unique<PairTicks>());
  CHECK(k.observer_count() == 0);  // off by default
  EventCounts counts(k.state().size());
  const ScopedObserver counting(k, counts);
  for (EventSlot s = 0; s < 3; ++s) k.schedule(kind, s, 0.0);
  k.run_until(10.0);
  // Slot 0 fires at 0..10 (11 times), slot 1 at 0, 2, .., 10 (6), slot 2 at 0, 3, 6, 9 (4).
  CHECK(counts.vertex_events() == std::vector<std::uint64_t>{11, 17, 10, 4});
  // Periods: the time to the slot's next occurrence; last occurrences have none.
  // Bin floor(10 log10 p) + kPeriodBinOfOne: p = 1 → 140, 2 → 143, 3 → 144.
  const auto& bins = counts.period_histogram(kind);
  std::uint64_t total = 0;
  for (auto n : bins) total += n;
  CHECK(total == 10 + 5 + 3);
  CHECK(bins[EventCounts::kPeriodBinOfOne] == 10);
  CHECK(bins[EventCounts::kPeriodBinOfOne + 3] == 5);
  CHECK(bins[EventCounts::kPeriodBinOfOne + 4] == 3);
  CHECK(EventCounts::period_bin_lower(EventCounts::kPeriodBinOfOne + 3) <= 2.0);
  CHECK(EventCounts::period_bin_lower(EventCounts::kPeriodBinOfOne + 4) > 2.0);
  CHECK(EventCounts::period_bin_lower(EventCounts::kPeriodBinOfOne) == 1.0);
}
