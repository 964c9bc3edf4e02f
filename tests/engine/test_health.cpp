/// The kernel's health check (engine/health.hpp): a state outside the limits stops the
/// run at the event that made it, naming the event kind, the time and the vertex.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "engine/kernel.hpp"
#include "tests/support/errors.hpp"

using namespace clockwork;

namespace {

/// Every tick (period 0.1 s) multiplies vertex 1's velocity by `gain` (an unstable
/// explicit step in miniature); `poison` makes the tick at t >= 0.5 write a NaN.
class Amplifier final : public EventSource {
 public:
  double gain = 10.0;
  bool poison = false;
  int ticks = 0;
  std::string_view name() const override { return "force:amplifier"; }
  double process(EventSlot, double time, Kernel& k) override {
    ++ticks;
    k.state().sync(1, time);
    Vec3& v = k.state().velocity_ref(1);
    v = poison && time >= 0.5 ? Vec3(std::nan(""), 0, 0) : Vec3(gain * v);
    k.velocity_changed(1);
    return time + 0.1;
  }
};

struct Setup {
  Kernel k;
  Amplifier* source = nullptr;
  explicit Setup(double gain, bool poison = false) {
    k.state().add(Vec3(0, 0, 0), Vec3::Zero(), 1.0);
    k.state().add(Vec3(1, 0, 0), Vec3(1, 0, 0), 1.0);
    auto s = std::make_unique<Amplifier>();
    s->gain = gain;
    s->poison = poison;
    source = s.get();
    const EventKind kind = k.add_source(std::move(s));
    k.schedule(kind, 0, 0.0);
  }
};

}  // namespace

TEST_CASE("health: a speed above max_speed stops the run at the event that made it") {
  Setup s(10.0);  // speeds 10, 100, ..., 1e5 m/s at the ticks t = 0, 0.1, ..., 0.4
  NumericalFailure failure("", "", 0, 0, "");
  bool thrown = false;
  try {
    s.k.run_until(10.0);
  } catch (const NumericalFailure& e) {
    failure = e;
    thrown = true;
  }
  REQUIRE(thrown);
  CHECK(s.source->ticks == 5);
  CHECK(failure.event_kind == "force:amplifier");
  CHECK(failure.time == doctest::Approx(0.4));
  CHECK(failure.vertex == 1);
  CHECK(std::string(failure.what()) ==
        "numerical failure at t = 0.4 s in a force:amplifier event: vertex 1: speed 100000 m/s is "
        "above the health limit max_speed = 10000 m/s");
}

TEST_CASE("health: a non-finite velocity stops the run, whatever the limits") {
  Setup s(1.0, true);
  HealthLimits loose;
  loose.max_speed = std::numeric_limits<double>::max();
  loose.max_extent = std::numeric_limits<double>::max();
  s.k.set_health_limits(loose);
  const std::string what = test::what_thrown([&] { s.k.run_until(10.0); });
  CHECK(what == "numerical failure at t = 0.5 s in a force:amplifier event: vertex 1: velocity (nan, "
                "0, 0) m/s is not finite");
  CHECK(s.source->ticks == 6);
}

TEST_CASE("health: a position beyond max_extent is named (frames check it, not every event)") {
  Setup s(1.0);  // 1 m/s along x from x = 1
  HealthLimits limits;
  limits.max_extent = 1.25;
  s.k.set_health_limits(limits);
  s.k.run_until(0.3);  // a finite velocity: the events run on
  CHECK(s.k.health_problem(1, 0.2).empty());
  CHECK(s.k.health_problem(1, 0.3) ==
        "position (1.3, 0, 0) m is 1.3 m from the origin, beyond the health limit max_extent = 1.25 m");
}

TEST_CASE("health: a healthy run is untouched and the poll hook can stop it") {
  Setup s(1.0);
  int polls = 0;
  s.k.set_poll([&] { return ++polls == 3; }, 4);
  s.k.run_until(100.0);
  CHECK(s.k.stopped());
  CHECK(polls == 3);
  CHECK(s.source->ticks == 12);  // polled after events 4, 8 and 12
  s.k.set_poll({});
  s.k.run_until(2.0);
  CHECK_FALSE(s.k.stopped());
  CHECK(s.k.now() == 2.0);
}
