#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <system_error>
#include <vector>

#include "engine/diagnostics.hpp"
#include "engine/kernel.hpp"
#include "engine/kinematic_script.hpp"

using namespace clockwork;

namespace {

/// Records (time, slot) of every event; slot s recurs with period s + 1, until 10.
class Recorder final : public EventSource {
 public:
  std::string_view name() const override { return "recorder"; }
  std::vector<std::pair<double, EventSlot>> log;
  double process(EventSlot slot, double time, Kernel&) override {
    log.emplace_back(time, slot);
    const double next = time + slot + 1;
    return next <= 10 ? next : kNever;
  }
};

/// Slot 0 cancels slot 1 and reschedules itself through the kernel.
class SelfManaging final : public EventSource {
 public:
  EventKind kind = 0;
  int runs = 0;
  std::string_view name() const override { return "self"; }
  double process(EventSlot slot, double time, Kernel& k) override {
    ++runs;
    REQUIRE(slot == 0);
    k.cancel(kind, 1);
    if (time < 3) k.reschedule(kind, 0, time + 1);
    return kNever;
  }
};

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
  k.finalize_vertices();
  const EventKind kind = k.add_source(std::make_unique<PairTicks>());
  CHECK(k.vertex_events().empty());  // off by default
  k.enable_event_counts(true);
  for (EventSlot s = 0; s < 3; ++s) k.schedule(kind, s, 0.0);
  k.run_until(10.0);
  // Slot 0 fires at 0..10 (11 times), slot 1 at 0, 2, .., 10 (6), slot 2 at 0, 3, 6, 9 (4).
  CHECK(k.vertex_events() == std::vector<std::uint64_t>{11, 17, 10, 4});
  // Periods: the time to the slot's next occurrence; last occurrences have none.
  // Bin floor(10 log10 p) + kPeriodBinOfOne: p = 1 → 140, 2 → 143, 3 → 144.
  const auto& bins = k.period_histogram(kind);
  std::uint64_t total = 0;
  for (auto n : bins) total += n;
  CHECK(total == 10 + 5 + 3);
  CHECK(bins[Kernel::kPeriodBinOfOne] == 10);
  CHECK(bins[Kernel::kPeriodBinOfOne + 3] == 5);
  CHECK(bins[Kernel::kPeriodBinOfOne + 4] == 3);
  CHECK(Kernel::period_bin_lower(Kernel::kPeriodBinOfOne + 3) <= 2.0);
  CHECK(Kernel::period_bin_lower(Kernel::kPeriodBinOfOne + 4) > 2.0);
  CHECK(Kernel::period_bin_lower(Kernel::kPeriodBinOfOne) == 1.0);
}

TEST_CASE("events run in time order, ties in scheduling order, up to and including t_end") {
  Kernel k;
  auto owned = std::make_unique<Recorder>();
  Recorder& r = *owned;
  const EventKind kind = k.add_source(std::move(owned));
  for (EventSlot s = 0; s < 3; ++s) k.schedule(kind, s, 0.0);
  k.run_until(4.0);
  CHECK(k.now() == 4.0);
  const std::vector<std::pair<double, EventSlot>> expected = {
      {0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 1}, {2, 0}, {3, 2}, {3, 0}, {4, 1}, {4, 0}};
  CHECK(r.log == expected);
  CHECK(k.stats(kind).processed == expected.size());
  CHECK(k.scheduled(kind, 2));
  CHECK(k.scheduled_time(kind, 2) == 6.0);
}

TEST_CASE("a source may reschedule itself and cancel others while it runs") {
  Kernel k;
  auto owned = std::make_unique<SelfManaging>();
  SelfManaging& s = *owned;
  s.kind = k.add_source(std::move(owned));
  k.schedule(s.kind, 0, 0.0);
  k.schedule(s.kind, 1, 0.5);
  k.run_until(100.0);
  CHECK(s.runs == 4);  // t = 0, 1, 2, 3
  CHECK(!k.scheduled(s.kind, 1));
  CHECK(k.empty());
}

TEST_CASE("reschedule_no_later moves an event earlier or schedules it, never later") {
  Kernel k;
  auto owned = std::make_unique<Recorder>();
  Recorder& r = *owned;
  const EventKind kind = k.add_source(std::move(owned));
  k.reschedule_no_later(kind, 0, 4.0);  // idle: scheduled
  REQUIRE(k.scheduled(kind, 0));
  CHECK(k.scheduled_time(kind, 0) == 4.0);
  k.reschedule_no_later(kind, 0, 7.0);  // later: left where it is, counted as kept
  CHECK(k.scheduled_time(kind, 0) == 4.0);
  CHECK(k.stats(kind).rescheduled == 1);
  CHECK(k.stats(kind).kept == 1);
  k.reschedule_no_later(kind, 0, 2.5);  // earlier: moved
  CHECK(k.scheduled_time(kind, 0) == 2.5);
  CHECK(k.stats(kind).rescheduled == 2);
  CHECK(k.stats(kind).kept == 1);
  k.run_until(3.0);
  REQUIRE(r.log.size() == 1);  // fired once, at the earliest time it was given
  CHECK(r.log[0].first == 2.5);
}

TEST_CASE("a kinematic script moves vertices along piecewise-linear keyframes") {
  Kernel k;
  const Index a = k.state().add(Vec3(1, 0, 0), Vec3::Zero(), kNever);
  k.finalize_vertices();
  auto owned = std::make_unique<KinematicScriptSource>();
  KinematicScriptSource& script = *owned;
  script.add(ScriptGroup{{a}, {Vec3(1, 0, 0)}, {{0.0, Vec3::Zero()}, {1.0, Vec3(0, 2, 0)}, {3.0, Vec3(0, 2, 4)}}});
  const EventKind kind = k.add_source(std::move(owned));
  script.start(kind, k);
  k.run_until(0.5);
  CHECK(k.state().position_at(a, 0.5).isApprox(Vec3(1, 1, 0)));
  k.run_until(2.0);
  CHECK(k.state().position_at(a, 2.0).isApprox(Vec3(1, 2, 2)));
  k.run_until(10.0);
  CHECK(k.state().position_at(a, 10.0).isApprox(Vec3(1, 2, 4)));
  CHECK(k.state().velocity(a) == Vec3::Zero());
}

TEST_CASE("the trace writes one JSON object per event, the chrome export is one JSON document") {
  const auto dir = std::filesystem::temp_directory_path() / "clockwork_test_trace";
  std::filesystem::create_directories(dir);
  for (auto format : {TraceFormat::kJsonLines, TraceFormat::kChrome}) {
    const std::string path = (dir / (format == TraceFormat::kChrome ? "t.json" : "t.jsonl")).string();
    {
      Kernel k;
      auto owned = std::make_unique<Recorder>();
      const EventKind kind = k.add_source(std::move(owned));
      Trace trace(path, format);
      k.set_trace(&trace);
      k.schedule(kind, 0, 0.0);
      k.schedule(kind, 1, 0.0);
      k.run_until(3.0);
      k.set_trace(nullptr);
    }
    std::ifstream in(path);
    if (format == TraceFormat::kJsonLines) {
      std::string line;
      std::vector<nlohmann::json> records;
      while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line));
      REQUIRE(records.size() == 6);  // slot 0 at 0,1,2,3; slot 1 at 0,2
      CHECK(records[0]["kind"] == "recorder");
      CHECK(records[0]["t"] == 0.0);
      CHECK(records[1]["slot"] == 1);
      CHECK(records[5]["t"] == 3.0);
      for (const auto& r : records)
        for (const char* key : {"t", "seq", "kind", "slot", "stencil", "created", "rescheduled",
                                "destroyed", "wall_us"})
          CHECK(r.contains(key));
    } else {
      const nlohmann::json doc = nlohmann::json::parse(in);
      const auto& events = doc.at("traceEvents");
      int instants = 0;
      for (const auto& e : events) instants += e.at("ph") == "i";
      CHECK(instants == 6);
      CHECK(events[0].at("ph") == "M");  // track name
    }
  }
}

TEST_CASE("diagnostics read positions at the observer time without syncing") {
  Kernel k;
  k.state().add(Vec3(1, 0, 0), Vec3(0, 2, 0), 3.0);
  k.state().add(Vec3(0, 0, 0), Vec3(0, 0, 0), kNever);  // kinematic: excluded
  const Diagnostics d = measure(k, 0.5);
  CHECK(d.linear_momentum.isApprox(Vec3(0, 6, 0)));
  CHECK(d.angular_momentum.isApprox(Vec3(1, 1, 0).cross(Vec3(0, 6, 0))));
  CHECK(d.kinetic == doctest::Approx(6.0));
  CHECK(k.state().clock(0) == 0.0);
}

TEST_CASE("diagnostics: a row that cannot be written names the file and stops the run") {
  // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
  std::string what = "(no error)";
  try {
    DiagnosticsCsv csv("/dev/full");
    Kernel k;
    k.state().add(Vec3::Zero(), Vec3::Zero(), 1.0);
    csv.write(measure(k, 0.0), 0);
  } catch (const std::system_error& e) {
    what = e.what();
  }
  CHECK(what == "/dev/full: cannot write: No space left on device");
}
