#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

#include "io/frame_io.hpp"
#include "io/profile.hpp"
#include "io/run.hpp"
#include "io/scene.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {
RunSummary run_demo(const std::string& demo, const fs::path& out, double until) {
  Scene scene = load_scene(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/" + demo);
  RunOptions options;
  options.out_dir = out.string();
  options.until = until;
  return run_scene(scene, options);
}
}  // namespace

TEST_CASE("two runs of the same scene write bit-identical files") {
  const fs::path a = test::fresh_dir("run_a"), b = test::fresh_dir("run_b");
  const RunSummary sa = run_demo("hanging_cloth.json", a, 0.2);
  const RunSummary sb = run_demo("hanging_cloth.json", b, 0.2);
  CHECK(sa.events == sb.events);
  CHECK(sa.events > 10000);
  CHECK(sa.frames == 7);  // frames 0..6 at 30 frames/s
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(a)) {
    if (!entry.is_regular_file()) continue;
    const fs::path other = b / fs::relative(entry.path(), a);
    CAPTURE(entry.path().string());
    REQUIRE(fs::exists(other));
    CHECK(test::read_file(entry.path()) == test::read_file(other));
    ++compared;
  }
  CHECK(compared == 2 + 2 * 7);  // diagnostics.csv, bodies.json, OBJ and PLY per frame
}

TEST_CASE("frames hold the simulated state: PLY round-trips positions, velocities, masses") {
  const fs::path out = test::fresh_dir("run_ply");
  run_demo("hanging_cloth.json", out, 0.1);
  const auto frame0 = read_ply(frame_path(out.string(), "cloth", 0, "ply"));
  const auto frame3 = read_ply(frame_path(out.string(), "cloth", 3, "ply"));
  REQUIRE(frame0.size() == 625);
  REQUIRE(frame3.size() == 625);
  // Pinned corners (u0v1 = 600, u1v1 = 624) stay put with infinite mass; the free
  // cloth falls.
  CHECK(std::isinf(frame3[600].mass));
  CHECK(frame3[624].x == frame0[624].x);
  double mean_dz = 0;
  for (std::size_t a = 0; a < frame0.size(); ++a) mean_dz += (frame3[a].x - frame0[a].x).z() / 625;
  CHECK(mean_dz < -0.01);
  CHECK(frame0[0].mass > 0);
}

TEST_CASE("profiling: per-kind times and the Table 1 shares add up to at most the wall time") {
  Scene scene = load_scene(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/cloth_drop.json");
  Kernel& k = *scene.kernel;
  SUBCASE("off by default: nothing is timed") {
    k.run_until(0.002);
    for (std::size_t i = 0; i < k.source_count(); ++i) CHECK(k.stats(static_cast<EventKind>(i)).seconds == 0.0);
    CHECK(k.contingency_seconds() == 0.0);
  }
  SUBCASE("on") {
    k.enable_profiling(true);
    const auto start = std::chrono::steady_clock::now();
    k.run_until(0.02);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const TimeShares s = time_shares(k, wall);
    MESSAGE(describe(s));
    CHECK(s.elastic > 0.0);             // membrane, bending and gravity events
    CHECK(s.certificate_events > 0.0);  // grid and triangle-pair certificates
    CHECK(s.penalties >= 0.0);
    CHECK(s.rescheduling >= 0.0);
    // Sampled estimates (one light event in 16, weighted 16) of times inside the run.
    CHECK(s.elastic + s.penalties + s.certificates() <= 1.05);
    CHECK(s.other() >= -0.05);
  }
}
