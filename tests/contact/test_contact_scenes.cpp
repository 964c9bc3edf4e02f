// Contact through whole scenes, what it conserves and guarantees: momentum through a
// chain reaction, energy with walls, a squeeze that leaves no room and one with
// friction, and bad input. The other scenes: test_contact_drops.cpp (cloth, hats and
// cards falling), test_contact_reef.cpp (the reef knot), test_contact_cape.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "contact/intersections/intersection_check.hpp"
#include "engine/diagnostics.hpp"
#include "tests/support/contact_scenes.hpp"
#include "tests/support/scenes.hpp"

namespace clockwork {
namespace {

using namespace test;

/// Intersecting triangle pairs of the colliding bodies at time t (obstacle pairs
/// excluded), by the independent checker.
std::size_t intersections_at(const Scene& scene, double t) {
  const VertexState& s = scene.kernel->state();
  std::vector<Vec3> x;
  for (Index a = 0; a < s.size(); ++a) x.push_back(s.position_at(a, t));
  std::vector<std::array<Index, 3>> tris;
  std::vector<bool> obstacle;
  for (const Body& b : scene.bodies)
    for (const auto& tri : b.triangles) {
      tris.push_back({b.first_vertex + tri[0], b.first_vertex + tri[1], b.first_vertex + tri[2]});
      obstacle.push_back(b.obstacle);
    }
  std::size_t n = 0;
  for (const IntersectingPair& p : find_intersections(x, tris))
    if (!(obstacle[p.a] && obstacle[p.b])) ++n;
  return n;
}

TEST_CASE("dominoes: momenta conserved to 1e-12 through the chain reaction, no intersections") {
  Scene scene = build(demo_json("dominoes.json"));
  Kernel& k = *scene.kernel;
  const Diagnostics d0 = measure(k, 0.0);
  const double p_scale = d0.linear_momentum.norm();
  const double L_scale = d0.angular_momentum.norm();
  REQUIRE(p_scale > 0);
  REQUIRE(L_scale > 0);
  double worst_p = 0, worst_L = 0;
  for (int i = 1; i <= 100; ++i) {
    const double t = scene.end_time * i / 100;
    k.run_until(t);
    const Diagnostics d = measure(k, t);
    worst_p = std::max(worst_p, (d.linear_momentum - d0.linear_momentum).norm() / p_scale);
    worst_L = std::max(worst_L, (d.angular_momentum - d0.angular_momentum).norm() / L_scale);
    REQUIRE(intersections_at(scene, t) == 0);
  }
  MESSAGE("relative momentum error " << worst_p << ", angular " << worst_L << ", "
                                     << k.events_processed() << " events");
  CHECK(worst_p <= 1e-12);
  CHECK(worst_L <= 1e-12);
  // The reaction reached the end of the line: the last domino moves.
  const Body& last = scene.bodies.back();
  double speed = 0;
  for (Index a = 0; a < last.vertex_count; ++a)
    speed = std::max(speed, k.state().velocity(last.first_vertex + a).norm());
  CHECK(speed > 0.05);
  CHECK(scene.contact->counters().layer_activations >= 8);
}

TEST_CASE("FPU chain between walls: total energy stays in a band without drift") {
  nlohmann::json doc = demo_json("fpu_walls.json");
  Scene scene = build(doc);
  Kernel& k = *scene.kernel;
  const double e0 = measure(k, 0.0).total();
  const int samples = 400;
  const double t_end = scene.end_time;  // 200 s, ~2.4 M events
  std::vector<double> e;
  for (int i = 1; i <= samples; ++i) {
    const double t = t_end * i / samples;
    k.run_until(t);
    e.push_back(measure(k, t).total());
  }
  const auto mean = [&](std::size_t from, std::size_t to) {
    double s = 0;
    for (std::size_t i = from; i < to; ++i) s += e[i];
    return s / double(to - from);
  };
  double band = 0;
  for (double v : e) band = std::max(band, std::abs(v - e0) / e0);
  const double first = mean(0, samples / 5), last = mean(samples - samples / 5, samples);
  MESSAGE("E0 " << e0 << ", band " << band << ", first-fifth mean " << first << ", last " << last
                << ", wall hits (layer activations) " << scene.contact->counters().layer_activations);
  CHECK(scene.contact->counters().layer_activations >= 4);  // both walls were hit
  CHECK(band < 0.05);
  CHECK(std::abs(last - first) / e0 < 0.005);
}

TEST_CASE("guaranteed progress: plates close to a gap thinner than 2 eta1, the run finishes") {
  nlohmann::json doc = demo_json("squeeze.json");
  doc["end_time"] = 0.3;  // the plates stop at 0.175 s
  Scene scene = build(doc);
  const auto out = test::fresh_dir("squeeze");
  RunOptions options;
  options.out_dir = out.string();
  const RunSummary summary = run_scene(scene, options);
  CHECK(summary.simulated_seconds == 0.3);
  for (const auto& f : check_frames(out.string())) {
    CAPTURE(f.frame);
    CHECK(f.pairs.empty());
  }
  const double eta1 = scene.contact->params().eta1;
  const double gap = 0.05 - 2 * 0.0175;
  REQUIRE(gap < 2 * eta1);
  // The cloth is held between the plates, 0.0075 m from each: layers 1..3 are active
  // (η(3) = 0.0076 m), and the cloth is still between them.
  CHECK(scene.contact->counters().deepest_layer >= 3);
  const Body& cloth = scene.bodies[0];
  for (Index a = 0; a < cloth.vertex_count; ++a)
    CHECK(std::abs(scene.kernel->state().position_at(cloth.first_vertex + a, 0.3).z()) < 0.0075);
}

/// Largest total energy from `from` to the scene's end over the energy at `from`,
/// sampled every `dt` (docs/contact.md "Stacked layers").
double energy_rise_after(Scene& scene, double from, double dt) {
  Kernel& k = *scene.kernel;
  k.run_until(from);
  const double e0 = measure(k, from).total();
  double most = e0;
  for (double t = from + dt; t <= scene.end_time + 1e-12; t += dt) {
    k.run_until(t);
    most = std::max(most, measure(k, t).total());
  }
  return most / e0;
}

TEST_CASE("stacked layers: a cloth squeezed between plates with friction never gains energy") {
  // The squeeze with its stress settings: layers 1..3 of both plates load each cloth
  // vertex, and friction (μ 0.3) holds it there. With one period per layer, h(l) set
  // for that layer alone, the shallow layers sample the stack's faster motion and the
  // energy jumped 2.6-fold (docs/contact.md); with per-vertex periods friction only
  // takes energy out.
  nlohmann::json doc = demo_json("squeeze.json");
  doc["end_time"] = 2.0;
  doc["contact"]["advanced"]["safety"] = 0.1;
  doc["contact"]["friction"] = 0.3;
  doc["contact"]["advanced"]["vertex_periods"] = true;
  Scene scene = build(doc);
  const double rise = energy_rise_after(scene, 0.4, 0.05);
  const ContactCounters c = scene.contact->counters();
  MESSAGE("largest total energy over 0.4-2 s / its value at 0.4 s: " << rise << ", deepest layer "
                                                                      << c.deepest_layer_ever);
  CHECK(c.deepest_layer_ever >= 3);  // the layers stack
  CHECK(rise < 1.001);
}

TEST_CASE("bad contact input is rejected with the field and the value") {
  const nlohmann::json base = demo_json("cloth_drop.json");
  SUBCASE("negative thickness") {
    nlohmann::json d = base;
    d["contact"]["thickness"] = -0.01;
    CHECK(error_of(d) == "test.json: /contact/thickness: must be > 0, got -0.01");
  }
  SUBCASE("negative stiffness") {
    nlohmann::json d = base;
    d["contact"]["advanced"]["stiffness"] = -5;
    CHECK(error_of(d) == "test.json: /contact/advanced/stiffness: must be > 0, got -5");
  }
  SUBCASE("negative friction") {
    nlohmann::json d = base;
    d["contact"]["friction"] = -0.1;
    CHECK(error_of(d) == "test.json: /contact/friction: must be >= 0, got -0.1");
  }
  SUBCASE("negative envelope slack") {
    nlohmann::json d = base;
    d["contact"]["advanced"]["slack_far"] = -1;
    CHECK(error_of(d) == "test.json: /contact/advanced/slack_far: must be >= 0, got -1");
  }
  SUBCASE("adaptive slack that is not a boolean") {
    nlohmann::json d = base;
    d["contact"]["advanced"]["adaptive_slack"] = "yes";
    CHECK(error_of(d) == "test.json: /contact/advanced/adaptive_slack: expected true or false, got \"yes\"");
  }
  SUBCASE("vertex periods that are not a boolean") {
    nlohmann::json d = base;
    d["contact"]["advanced"]["vertex_periods"] = 1;
    CHECK(error_of(d) == "test.json: /contact/advanced/vertex_periods: expected true or false, got 1");
  }
  SUBCASE("position envelopes: negative, too wide, or without the adaptive slack") {
    nlohmann::json d = base;
    d["contact"]["thickness"] = 0.01;
    d["contact"]["advanced"]["position_slack"] = -1e-3;
    CHECK(error_of(d) == "test.json: /contact/advanced/position_slack: must be >= 0, got -0.001");
    d["contact"]["advanced"]["position_slack"] = 2e-3;
    CHECK(error_of(d) ==
          "test.json: /contact/advanced/position_slack: must be below thickness / 8 (0.00125 m), got 0.002");
    d["contact"]["advanced"]["position_slack"] = 1e-3;
    d["contact"]["advanced"]["adaptive_slack"] = false;
    CHECK(error_of(d) ==
          "test.json: /contact/advanced/position_slack: needs the adaptive slack (adaptive_slack true), got 0.001");
    d["contact"]["advanced"]["adaptive_slack"] = true;
    CHECK(error_of(d) == "(no error)");
  }
  SUBCASE("obstacle mesh with NaN") {
    const auto dir = test::fresh_dir("nan_obstacle");
    std::ofstream(dir / "bad.obj") << "v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n";
    nlohmann::json d = base;
    d["obstacles"][0]["shape"] = {{"type", "obj"}, {"file", (dir / "bad.obj").string()}};
    const std::string e = error_of(d);
    CHECK(e.find("/obstacles/0/shape/file") != std::string::npos);
    CHECK(e.find("bad.obj:2: vertex coordinate is not finite") != std::string::npos);
  }
  SUBCASE("overlapping initial geometry") {
    nlohmann::json d = base;
    d["bodies"][0]["shape"]["center"] = {0, 0, 0.7};  // through the ball
    const std::string e = error_of(d);
    CHECK(e.find("test.json: /bodies/0 and /obstacles/0: the initial geometry intersects") == 0);
    CHECK(e.find("of 'ball'") != std::string::npos);
  }
  SUBCASE("obstacles without contact") {
    nlohmann::json d = base;
    d.erase("contact");
    CHECK(error_of(d).find("/obstacles: obstacles need a \"contact\" object") != std::string::npos);
  }
  SUBCASE("bad obstacle shape") {
    nlohmann::json d = base;
    d["obstacles"][0]["shape"]["radius"] = 0;
    CHECK(error_of(d) == "test.json: /obstacles/0/shape/radius: must be > 0, got 0");
  }
}

}  // namespace
}  // namespace clockwork
