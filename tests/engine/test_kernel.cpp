#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "engine/diagnostics.hpp"
#include "engine/kernel.hpp"
#include "engine/kinematic_script.hpp"
#include "engine/trace.hpp"

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

/// Logs every hook it hears, one line each.
class HookLog final : public KernelObserver {
 public:
  explicit HookLog(unsigned hooks) : hooks_(hooks) {}
  std::vector<std::string> log;
  unsigned hooks() const override { return hooks_; }
  void on_source_added(EventKind kind, const EventSource& source) override {
    log.push_back(fmt::format("source {} {}", kind, source.name()));
  }
  void before_event(const EventNode& e, const EventSource& source) override {
    log.push_back(fmt::format("before t={} {} slot {}", e.time, source.name(), e.slot));
  }
  void after_process(const EventNode& e) override { log.push_back(fmt::format("process t={} slot {}", e.time, e.slot)); }
  void before_flush(const EventNode& e, double next) override {
    log.push_back(fmt::format("flush t={} slot {} next {}", e.time, e.slot, next));
  }
  void after_event(const EventNode& e, const EventSource&) override {
    log.push_back(fmt::format("after t={} slot {}", e.time, e.slot));
  }
  void on_queue_change(EventKind kind, EventSlot slot, QueueChange what) override {
    const char* name = what == QueueChange::created ? "created" : what == QueueChange::rescheduled ? "rescheduled" : "destroyed";
    log.push_back(fmt::format("queue {} {} {}", kind, slot, name));
  }

 private:
  unsigned hooks_;
};

}  // namespace

TEST_CASE("observers hear the hooks they asked for, in order, while attached") {
  Kernel k;
  const EventKind rec = k.add_source(std::make_unique<Recorder>());
  HookLog all(KernelObserver::kBeforeEvent | KernelObserver::kAfterProcess | KernelObserver::kBeforeFlush |
              KernelObserver::kAfterEvent | KernelObserver::kQueueChanges);
  HookLog late(KernelObserver::kAfterEvent);
  k.add_observer(all);
  k.add_observer(late);
  auto owned = std::make_unique<SelfManaging>();
  SelfManaging& self = *owned;
  self.kind = k.add_source(std::move(owned));  // announced to both
  k.schedule(rec, 2, 0.0);                     // returns its next time (period 3)
  k.schedule(self.kind, 0, 0.0);               // reschedules itself, cancels slot 1
  k.schedule(self.kind, 1, 0.5);
  k.run_until(1.0);
  const std::vector<std::string> expected = {
      "source 0 recorder", "source 1 self",
      "queue 0 2 created", "queue 1 0 created", "queue 1 1 created",
      "before t=0 recorder slot 2", "process t=0 slot 2", "flush t=0 slot 2 next 3", "after t=0 slot 2",
      "before t=0 self slot 0", "queue 1 1 destroyed", "queue 1 0 rescheduled", "process t=0 slot 0",
      "flush t=0 slot 0 next 1", "after t=0 slot 0",
      "before t=1 self slot 0", "queue 1 0 rescheduled", "process t=1 slot 0", "flush t=1 slot 0 next 2",
      "after t=1 slot 0"};
  CHECK(all.log == expected);
  CHECK(late.log == std::vector<std::string>{"source 0 recorder", "source 1 self", "after t=0 slot 2",
                                             "after t=0 slot 0", "after t=1 slot 0"});
  k.remove_observer(all);
  CHECK(k.observer_count() == 1);
  k.run_until(2.0);
  CHECK(all.log == expected);  // detached: hears nothing more
  CHECK(late.log.back() == "after t=2 slot 0");
  {
    const ScopedObserver again(k, all);
    CHECK(k.observer_count() == 2);
  }
  CHECK(k.observer_count() == 1);
  k.remove_observer(late);
  CHECK(k.observer_count() == 0);
  CHECK(self.runs == 3);
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
      const ScopedObserver tracing(k, trace);
      k.schedule(kind, 0, 0.0);
      k.schedule(kind, 1, 0.0);
      k.run_until(3.0);
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
