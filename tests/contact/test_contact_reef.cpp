// Contact through the reef knot (demos/reef.json, reef_fine.json): the ends pull the
// bights together with no intersecting triangles — shortened, resumed in contact, with
// position envelopes, and at the paper's scale.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "contact/intersections/intersection_check.hpp"
#include "tests/support/contact_scenes.hpp"
#include "tests/support/scenes.hpp"

namespace clockwork {
namespace {

using namespace test;

TEST_CASE("reef knot demo, shortened: the ends pull the bights together, no intersecting triangles, phantom and explicit") {
  // demos/reef.json (scripts/make_reef.py): two ribbons tied loosely in a reef knot
  // (two interlocking bights), their ends pulled apart by their scripts. Shortened to
  // kSpan (the ribbons first touch at 0.07 s; explicit AVI takes most of the ~30 s): the
  // full run pulls the knot until it jams and holds it (minutes; docs/performance.md).
  constexpr double kSpan = 0.24, kRate = 25;  // 7 frames; the ends pulled by 2.4 cm each
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    const nlohmann::json doc = shortened_demo("reef.json", phantom, kSpan, kRate);
    REQUIRE(doc["bodies"].size() == 2u);
    Scene scene = build(doc);
    CHECK(scene.bodies_of<PhantomSource>().size() == (phantom ? 2u : 0u));
    const VertexState& s = scene.kernel->state();
    // Each ribbon is a strip 3 vertices across; the middle of its middle row is the
    // turning point of its bight (make_reef.py).
    const auto tip = [&](const Body& b) { return b.first_vertex + (b.vertex_count / 3) / 2 * 3 + 1; };
    const Index a = tip(scene.bodies[0]), b = tip(scene.bodies[1]);
    REQUIRE(s.position(a).x() > 0.05);   // A's bight turns at +x
    REQUIRE(s.position(b).x() < -0.05);  // B's at -x
    const double d0 = (s.position(a) - s.position(b)).norm();
    run_without_intersections(scene, phantom ? "reef_phantom" : "reef_explicit", 7);
    const double d1 = (s.position_at(a, kSpan) - s.position_at(b, kSpan)).norm();
    MESSAGE("bights' turning points " << d0 << " m -> " << d1 << " m apart, layer activations "
                                      << scene.contact->counters().layer_activations << ", deepest layer "
                                      << scene.contact->counters().deepest_layer_ever);
    CHECK(d1 < d0 - 0.01);  // the bights were drawn into each other
    CHECK(scene.contact->counters().layer_activations > 0);  // the ribbons pressed on each other
  }
}

TEST_CASE("reef knot resumed in contact (phantom): layers rebuilt, no intersecting triangles, the pull goes on") {
  // `clockwork run --resume` from frame 9 (0.3 s: the ribbons pressed together, ~70
  // layers active) to 0.4 s, against the run that was not interrupted.
  nlohmann::json doc = demo_json("reef.json");
  doc["end_time"] = 0.4;
  const auto scene_file = test::fresh_dir("reef_resume_scene") / "reef.json";
  std::ofstream(scene_file) << doc.dump();
  const auto run = [&](const std::filesystem::path& out, double until, const std::string& resume) {
    Scene scene = load_scene(scene_file.string(), resume);
    RunOptions options;
    options.out_dir = out.string();
    options.until = until;
    run_scene(scene, options);
    return scene.contact->counters();
  };
  const auto first = test::fresh_dir("reef_resume_a"), whole = test::fresh_dir("reef_resume_whole"),
             resumed = test::fresh_dir("reef_resume_b");
  CHECK(run(first, 0.3, "").active_layers > 0);  // in contact at the resumed frame
  run(whole, 0.4, "");
  const ContactCounters c = run(resumed, 0.4, first.string());
  CHECK(c.layer_activations > 0);
  const auto checked = check_frames(resumed.string());
  REQUIRE(checked.size() == 13u);
  for (const auto& f : checked) {
    CAPTURE(f.frame);
    CHECK(f.pairs.empty());
  }
  // The phantom copies are restored, not reset onto the primaries: the resumed frame's
  // constraint mismatch (the last diagnostics column) is the uninterrupted run's.
  const auto mismatch_at_frame_9 = [](const std::filesystem::path& out) {
    return diagnostics_field(out, 10, 20);  // phantom_mismatch
  };
  const double mismatch = mismatch_at_frame_9(whole);
  MESSAGE("phantom mismatch at 0.3 s: " << mismatch << " m uninterrupted, " << mismatch_at_frame_9(resumed)
                                        << " m resumed");
  CHECK(mismatch > 1e-7);  // measured 7.3e-7 m
  CHECK(mismatch_at_frame_9(resumed) == doctest::Approx(mismatch).epsilon(1e-9));
  // The bights' turning points (the middle of each ribbon's middle row) at 0.4 s: as
  // close as in the run that went on (layers and phantom ticks restart in another
  // phase: the tips measured 11 and 4 µm from the uninterrupted run's, 8.66 cm apart).
  const auto tips = [](const std::filesystem::path& out) {
    std::array<Vec3, 2> p;
    for (int r = 0; r < 2; ++r) {
      const auto v = read_obj(frame_path(out.string(), r == 0 ? "ribbonA" : "ribbonB", 12, "obj")).vertices;
      p[std::size_t(r)] = v[(v.size() / 3) / 2 * 3 + 1];
    }
    return p;
  };
  const auto a = tips(whole), b = tips(resumed);
  const double gap_whole = (a[0] - a[1]).norm(), gap_resumed = (b[0] - b[1]).norm();
  MESSAGE("turning points at 0.4 s: " << gap_whole << " m apart uninterrupted, " << gap_resumed
                                       << " m resumed; tips moved by " << (a[0] - b[0]).norm() << ", "
                                       << (a[1] - b[1]).norm() << " m");
  CHECK((a[0] - b[0]).norm() < 1e-4);
  CHECK((a[1] - b[1]).norm() < 1e-4);
  CHECK(std::abs(gap_resumed - gap_whole) < 1e-4);
}

TEST_CASE("reef knot with position envelopes (phantom): every far certificate holds between events, no intersection") {
  // demos/reef.json with "position_slack" η1/10 (docs/contact.md "Position envelopes")
  // and a far slack of 0.01 m/s (cap 0.08 m/s, which the pressed vertices leave),
  // pulled to 0.5 s (the ribbons pressed together from 0.07 s): vertices go into balls,
  // and at every 2 ms every collapsed triangle pair's slab and every grid range holds
  // for the actual positions (brute force over all of them), and no triangles cross.
  nlohmann::json doc = demo_json("reef.json");
  doc["contact"]["advanced"]["position_slack"] = 0.1 * doc["contact"]["thickness"].get<double>();
  doc["contact"]["advanced"]["slack_far"] = 0.01;
  Scene scene = build(doc);
  Kernel& k = *scene.kernel;
  std::vector<std::array<Index, 3>> triangles;
  for (const Body& b : scene.bodies)
    for (const auto& t : b.triangles) triangles.push_back({b.first_vertex + t[0], b.first_vertex + t[1], b.first_vertex + t[2]});
  double worst = -kNever;
  std::size_t crossings = 0;
  for (int i = 1; i <= 250; ++i) {
    const double t = 0.002 * i;
    k.run_until(t);
    worst = std::max(worst, scene.contact->far_certificate_violation(t));
    std::vector<Vec3> x;
    for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
    crossings += find_intersections(x, triangles).size();
  }
  MESSAGE("ball entries " << scene.contact->contingency().ball_entries() << ", exits " << scene.contact->contingency().ball_exits() << ", largest far violation "
                          << worst << ", deepest layer " << scene.contact->counters().deepest_layer_ever);
  CHECK(scene.contact->contingency().ball_entries() > 10);
  CHECK(scene.contact->contingency().ball_exits() > 0);
  CHECK(worst <= 1e-12);
  CHECK(crossings == 0);
}

/// demos/reef_fine.json (scripts/make_reef.py --fine): 10714 vertices, the ribbon softened
/// until explicit AVI's step is the paper's (Table 1, Reef: 4.61e-5 s), to kSpan: the
/// ribbons first press on each other at ~0.1 s. The whole runs (minutes) are reported in
/// docs/performance.md. One test case a variant: CTest runs them side by side.
void check_reef_fine(bool phantom) {
  constexpr double kSpan = 0.1, kRate = 30;  // 4 frames
  CAPTURE(phantom);
  const nlohmann::json doc = shortened_demo("reef_fine.json", phantom, kSpan, kRate);
  Scene scene = build(doc);  // build() refuses intersecting input
  REQUIRE(scene.bodies.size() == 2u);
  CHECK(scene.bodies[0].vertex_count + scene.bodies[1].vertex_count == 10714);
  CHECK(scene.bodies_of<PhantomSource>().size() == (phantom ? 2u : 0u));
  if (!phantom) {
    double step = kNever;
    for (const auto& t : scene.terms) step = std::min(step, t.min_period);
    MESSAGE("explicit step " << step << " s (the paper's 4.61e-5 s)");
    CHECK(step == doctest::Approx(4.61e-5).epsilon(0.02));  // measured 4.56e-5 s
  }
  // Each ribbon is a strip 11 vertices across; the middle of its middle row is the
  // turning point of its bight (make_reef.py).
  const VertexState& s = scene.kernel->state();
  const auto tip = [&](const Body& b) { return b.first_vertex + (b.vertex_count / 11) / 2 * 11 + 5; };
  const Index a = tip(scene.bodies[0]), b = tip(scene.bodies[1]);
  const double d0 = (s.position(a) - s.position(b)).norm();
  run_without_intersections(scene, phantom ? "reef_fine_phantom" : "reef_fine_explicit", 4);
  const double d1 = (s.position_at(a, kSpan) - s.position_at(b, kSpan)).norm();
  MESSAGE("bights' turning points " << d0 << " m -> " << d1 << " m apart, layer activations "
                                    << scene.contact->counters().layer_activations);
  CHECK(d1 < d0 - 0.003);  // pulled 1 cm per end: measured 16.04 -> 15.53 cm (phantom), 15.33 cm
  CHECK(scene.contact->counters().layer_activations > 0);  // the ribbons pressed on each other
}

TEST_CASE("reef knot at the paper's scale, shortened: the ribbons meet, no intersecting triangles, phantom") {
  check_reef_fine(true);
}

TEST_CASE("reef knot at the paper's scale, shortened: the paper's explicit step, the ribbons meet, no intersecting triangles, explicit") {
  check_reef_fine(false);
}

}  // namespace
}  // namespace clockwork
