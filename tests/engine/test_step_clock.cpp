/// StepClock (engine/step_clock.hpp): step times from counts, equal to frame times as
/// doubles wherever they are equal as reals.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>

#include "engine/step_clock.hpp"

using namespace clockwork;

TEST_CASE("step clock: a step at a frame's time is that frame's double") {
  struct Case {
    double h;
    int fps, m;
  };
  for (const Case c : {Case{1.0 / 240.0, 30, 4}, Case{5e-3, 30, 10}, Case{1.0 / 24.0, 24, 7},
                       Case{1e-3, 60, 3}, Case{0.01, 25, 8}}) {
    CAPTURE(c.h);
    const StepClock clock(0.0, c.h);
    const auto rate = static_cast<std::int64_t>(std::llround(1.0 / c.h));
    for (std::int64_t n = 0; n <= 20 * rate; ++n)
      for (int r = 0; r < c.m; ++r) {
        // (m n + r) / (m R) = i / fps exactly when (m n + r) fps is a multiple of m R.
        const std::int64_t num = (c.m * n + r) * c.fps;
        if (num % (c.m * rate) != 0) continue;
        const double frame = double(num / (c.m * rate)) / c.fps;
        REQUIRE(clock.time(std::uint64_t(n), r, c.m) == frame);
        if (r == 0) REQUIRE(clock.time(std::uint64_t(n)) == frame);
      }
  }
}

TEST_CASE("step clock: resumed on the grid it continues the grid, off it t0 + n h") {
  const StepClock whole(0.0, 0.005), resumed(0.5, 0.005);
  for (std::uint64_t n = 0; n < 1000; ++n) CHECK(resumed.time(n) == whole.time(n + 100));
  const StepClock odd(0.0, 3e-3);  // 1/h = 333.3...: no whole rate
  CHECK(odd.time(7) == 7 * 3e-3);
  CHECK(odd.time(7, 1, 2) == 7 * 3e-3 + 1 * (3e-3 / 2));
  const StepClock off(0.1234, 0.005);  // t0 off the grid
  CHECK(off.time(3) == 0.1234 + 3 * 0.005);
}
