// Contact through whole scenes: momentum through a chain reaction, energy with walls,
// a cloth dropped on obstacles, hats on a pole, a cape in wind, a squeeze that leaves no
// room, and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "contact/intersection_check.hpp"
#include "engine/diagnostics.hpp"
#include "io/check_frames.hpp"
#include "io/json_reader.hpp"
#include "io/mesh.hpp"
#include "io/run.hpp"
#include "io/scene.hpp"
#include "tests/support/scenes.hpp"
#include "tests/support/files.hpp"

namespace clockwork {
namespace {

/// Runs `scene` to its end writing frames to a fresh folder `name`; checks that it
/// wrote `frames` frames, none with an intersecting triangle pair. Returns the folder.
std::filesystem::path run_without_intersections(Scene& scene, const std::string& name,
                                                std::size_t frames) {
  const auto out = test::fresh_dir(name);
  RunOptions options;
  options.out_dir = out.string();
  run_scene(scene, options);
  const auto checked = check_frames(out.string());
  REQUIRE(checked.size() == frames);
  for (const auto& f : checked) {
    CAPTURE(f.frame);
    CHECK(f.pairs.empty());
  }
  return out;
}

/// Largest edge strain of `body` over frames 0 .. frames − 1 of a run, against frame 0
/// (a flat grid's rest shape).
double max_edge_strain(const std::filesystem::path& out, const std::string& body, int frames) {
  const TriangleMesh rest = read_obj(frame_path(out.string(), body, 0, "obj"));
  std::vector<std::array<Index, 2>> edges;
  for (const auto& t : rest.triangles)
    for (int i = 0; i < 3; ++i) edges.push_back({std::min(t[i], t[(i + 1) % 3]), std::max(t[i], t[(i + 1) % 3])});
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  double strain = 0.0;
  for (int i = 0; i < frames; ++i) {
    const TriangleMesh now = read_obj(frame_path(out.string(), body, i, "obj"));
    for (const auto& e : edges)
      strain = std::max(strain, (now.vertices[e[1]] - now.vertices[e[0]]).norm() /
                                    (rest.vertices[e[1]] - rest.vertices[e[0]]).norm() - 1.0);
  }
  return strain;
}

/// Field `column` (0-based) of diagnostics.csv's row `row` (0: the header) in `out`.
double diagnostics_field(const std::filesystem::path& out, int row, int column) {
  std::ifstream in(out / "diagnostics.csv");
  std::string line;
  for (int r = 0; r <= row; ++r) std::getline(in, line);
  std::size_t at = 0;
  for (int c = 0; c < column; ++c) at = line.find(',', at) + 1;
  return std::stod(line.substr(at));
}

nlohmann::json demo_json(const std::string& name) {
  return parse_json_file(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/" + name);
}

/// demos/NAME run to `span` at `rate` frames per second; explicit AVI (the phantom
/// keys removed, as bench/table1.py does) unless `phantom`.
nlohmann::json shortened_demo(const std::string& name, bool phantom, double span, double rate) {
  nlohmann::json doc = demo_json(name);
  if (!phantom)
    for (auto& b : doc["bodies"]) b.erase("integrator"), b.erase("phantom");
  doc["end_time"] = span;
  doc["frame_rate"] = rate;
  return doc;
}

using test::build;
using test::error_of;

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

TEST_CASE("cloth dropped on a sphere and the ground, folding onto itself: no intersection in any frame") {
  // The demo at 12 x 12 instead of 24 x 24 (docs/performance.md has the full run):
  // the cloth falls edge-first onto the ball, slides off onto the ground and folds.
  nlohmann::json doc = demo_json("cloth_drop.json");
  auto& shape = doc["bodies"][0]["shape"];
  shape["resolution"] = {12, 12};
  shape["size"] = {0.9, 0.9};
  shape["center"] = {0.05, 0.12, 1.1};
  doc["obstacles"][0]["shape"]["subdivisions"] = 2;
  doc["obstacles"][1]["shape"]["divisions"] = 4;
  doc["contact"]["cell_size"] = 0.075;  // one edge, as in the demo
  doc["end_time"] = 1.5;
  doc["frame_rate"] = 20;
  Scene scene = build(doc);
  run_without_intersections(scene, "cloth_drop", 31);
  const ContactCounters c = scene.contact->counters();
  MESSAGE("deepest layer ever " << c.deepest_layer_ever << ", activations " << c.layer_activations
                                << ", cloth-cloth " << c.deformable_activations);
  CHECK(c.layer_activations > 100);      // it landed on the ball and the ground
  CHECK(c.deformable_activations > 20);  // and folded onto itself
  CHECK(c.deepest_layer_ever <= 8);      // docs/contact.md: the documented bound
  // On the obstacles, not through them: every cloth vertex above the ground and
  // outside the ball (centre (0, 0, 0.3), radius 0.3, inscribed facets: 0.3 cos 36°/2).
  const Body& cloth = scene.bodies[0];
  for (Index a = 0; a < cloth.vertex_count; ++a) {
    const Vec3 x = scene.kernel->state().position_at(cloth.first_vertex + a, 1.5);
    CHECK(x.z() > 0.0);
    CHECK((x - Vec3(0, 0, 0.3)).norm() > 0.25);
  }
}

TEST_CASE("hats demo, shortened: no intersecting triangles in any frame, phantom and explicit") {
  // demos/hats.json (scripts/make_hats.py) with its first three hats, to 0.22 s: the
  // first lands on the pole at 0.13 s, the second (tipped, off-centre) on the first.
  // The full runs are reported in docs/performance.md.
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    nlohmann::json doc = shortened_demo("hats.json", phantom, 0.22, 50);
    doc["bodies"] = nlohmann::json::array({doc["bodies"][0], doc["bodies"][1], doc["bodies"][2]});
    Scene scene = build(doc);
    CHECK(scene.phantoms.size() == (phantom ? 3u : 0u));
    const double e0 = measure(*scene.kernel, 0.0).total();
    run_without_intersections(scene, phantom ? "hats_phantom" : "hats_explicit", 12);
    const double e1 = measure(*scene.kernel, 0.22).total();
    MESSAGE("energy " << e0 << " -> " << e1 << " J, layer activations "
                      << scene.contact->counters().layer_activations);
    CHECK(scene.contact->counters().layer_activations > 0);  // landed
    CHECK(e1 <= e0 * (1.0 + 1e-3));
  }
}

/// The top `count` cards of a riffle demo (scripts/make_cards.py) on a faster script:
/// the thumb's keyframes compressed from 0.1 s into 0.03 s, the cards let go from 0.035 s
/// every 10 ms, top first; with `phantom` false, explicit AVI (the phantom keys removed).
nlohmann::json shortened_riffle(const std::string& demo, int count, bool phantom, double span, double rate) {
  nlohmann::json doc = demo_json(demo);
  REQUIRE(doc["bodies"].size() == 8u);
  nlohmann::json cards = nlohmann::json::array();
  for (int i = 8 - count; i < 8; ++i) {
    nlohmann::json card = doc["bodies"][i];
    for (auto& key : card["pin_motion"]["keyframes"]) key["time"] = 0.3 * key["time"].get<double>();
    card["pin_motion"]["release"] = 0.035 + 0.01 * (7 - i);
    if (!phantom) card.erase("integrator"), card.erase("phantom");
    cards.push_back(card);
  }
  doc["bodies"] = cards;
  doc["end_time"] = span;
  doc["frame_rate"] = rate;
  return doc;
}

TEST_CASE("cards demo, shortened: three cards riffled off the thumb, no intersecting triangles, phantom and explicit") {
  // demos/cards.json (scripts/make_cards.py) with its top three cards on a faster
  // script: the thumb lifts the front ends in 0.03 s (not 0.1), and lets the cards go
  // at 0.035, 0.045 and 0.055 s, top first; each flattens onto the still bent card
  // below. Explicit AVI takes ~25 s of the ~27. The full runs: docs/performance.md.
  constexpr double kSpan = 0.07, kRate = 100;  // 8 frames
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    const nlohmann::json doc = shortened_riffle("cards.json", 3, phantom, kSpan, kRate);
    Scene scene = build(doc);
    CHECK(scene.phantoms.size() == (phantom ? 3u : 0u));
    const VertexState& s = scene.kernel->state();
    const Body& top = scene.bodies[2];
    const Index front = top.first_vertex + 4;  // middle of the front edge (row 0)
    const Index back = top.first_vertex + top.vertex_count - 5;  // middle of the back edge
    REQUIRE(s.kinematic(front));
    const double lifted = s.position(front).z() + doc["bodies"][2]["pin_motion"]["keyframes"].back()["offset"][2].get<double>();
    run_without_intersections(scene, phantom ? "cards_phantom" : "cards_explicit", 8);
    MESSAGE("top card's front edge at " << s.position_at(front, kSpan).z() << " m (lifted to " << lifted
                                        << "), layer activations " << scene.contact->counters().layer_activations
                                        << ", deepest layer " << scene.contact->counters().deepest_layer_ever);
    for (const Body& b : scene.bodies) {
      CHECK(!s.kinematic(b.first_vertex));                       // the thumb let go
      CHECK(s.kinematic(b.first_vertex + b.vertex_count - 1));   // the fingers did not
    }
    CHECK(s.kinematic(back));
    CHECK(scene.contact->counters().layer_activations > 0);  // the cards met
    // Sprang back down: explicit AVI by ~2 cm; the phantom cards by ~4 mm, their
    // stiffness-proportional damping (rayleigh_beta, which keeps the midpoint rule
    // stable on these curved stiff shells) slows the snap (docs/phantom.md).
    CHECK(s.position_at(front, kSpan).z() < lifted - 0.003);
  }
}

TEST_CASE("stiff cards demo, shortened: two cards riffled off the thumb, no intersecting triangles, phantom and explicit") {
  // demos/cards_stiff.json (scripts/make_cards.py --stiff): the membrane 84 times card
  // stock's, backward Euler ticks. Its top two cards on a faster script: the thumb's
  // keyframes compressed into 0.03 s (not 0.1), the cards let go at 0.035 and 0.045 s.
  // Explicit AVI (periods 2.2e-7 s) takes most of the time. The full runs:
  // bench/results/history_cards.md, "The card riffle".
  constexpr double kSpan = 0.06, kRate = 100;  // 7 frames, 0 to 0.06 s
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    const nlohmann::json doc = shortened_riffle("cards_stiff.json", 2, phantom, kSpan, kRate);
    Scene scene = build(doc);
    CHECK(scene.phantoms.size() == (phantom ? 2u : 0u));
    const VertexState& s = scene.kernel->state();
    const Body& top = scene.bodies[1];
    const Index front = top.first_vertex + 4;  // middle of the front edge (row 0)
    REQUIRE(s.kinematic(front));
    const double lifted = s.position(front).z() + doc["bodies"][1]["pin_motion"]["keyframes"].back()["offset"][2].get<double>();
    const auto out = run_without_intersections(scene, phantom ? "cards_stiff_phantom" : "cards_stiff_explicit", 7);
    // Total energy (column 9) at 0.03 s, the thumb still, and at the end.
    const double e_lifted = diagnostics_field(out, 4, 9), e_end = diagnostics_field(out, 7, 9);
    MESSAGE("top card's front edge at " << s.position_at(front, kSpan).z() << " m (lifted to " << lifted
                                        << "), energy " << e_lifted << " -> " << e_end << " J, layer activations "
                                        << scene.contact->counters().layer_activations << ", deepest layer "
                                        << scene.contact->counters().deepest_layer_ever);
    for (const Body& b : scene.bodies) CHECK(!s.kinematic(b.first_vertex));  // the thumb let go
    CHECK(scene.contact->counters().layer_activations > 0);  // the cards met
    CHECK(s.position_at(front, kSpan).z() < lifted - 0.003);  // sprang back down
    if (phantom) {
      CHECK(e_end < 0.5 * e_lifted);  // backward Euler ticks dissipate (measured 22 % left)
    } else {
      CHECK(std::abs(e_end - e_lifted) <= 0.03 * e_lifted);  // AVI's band (measured +1.4 %)
    }
  }
}

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
    CHECK(scene.phantoms.size() == (phantom ? 2u : 0u));
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
  doc["contact"]["position_slack"] = 0.1 * doc["contact"]["thickness"].get<double>();
  doc["contact"]["slack_far"] = 0.01;
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
  MESSAGE("ball entries " << k.ball_entries() << ", exits " << k.ball_exits() << ", largest far violation "
                          << worst << ", deepest layer " << scene.contact->counters().deepest_layer_ever);
  CHECK(k.ball_entries() > 10);
  CHECK(k.ball_exits() > 0);
  CHECK(worst <= 1e-12);
  CHECK(crossings == 0);
}

TEST_CASE("reef knot at the paper's scale, shortened: the paper's explicit step, the ribbons meet, no intersecting triangles, phantom and explicit") {
  // demos/reef_fine.json (scripts/make_reef.py --fine): 10714 vertices, the ribbon
  // softened until explicit AVI's step is the paper's (Table 1, Reef: 4.61e-5 s), to
  // kSpan: the ribbons first press on each other at ~0.1 s. The whole runs (minutes)
  // are reported in docs/performance.md.
  constexpr double kSpan = 0.1, kRate = 30;  // 4 frames
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    const nlohmann::json doc = shortened_demo("reef_fine.json", phantom, kSpan, kRate);
    Scene scene = build(doc);  // build() refuses intersecting input
    REQUIRE(scene.bodies.size() == 2u);
    CHECK(scene.bodies[0].vertex_count + scene.bodies[1].vertex_count == 10714);
    CHECK(scene.phantoms.size() == (phantom ? 2u : 0u));
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
}

TEST_CASE("cape demo, shortened: the whole cape, no intersecting triangles, strain below 5 %, blown behind the character") {
  // demos/cape.json (scripts/make_cape.py) with all its 5852 cape vertices, to 0.02 s
  // (explicit AVI at its 9.5e-6 s periods takes most of the time): the head wind,
  // ~60 Pa on a 0.25 kg/m² sheet, lifts the free edge backwards while the character
  // walks forward. The full runs are reported in docs/performance.md.
  constexpr double kSpan = 0.02, kRate = 250;  // 6 frames
  constexpr double kTorsoRadius = 0.15;        // make_cape.py
  for (const bool phantom : {true, false}) {
    CAPTURE(phantom);
    const nlohmann::json doc = shortened_demo("cape.json", phantom, kSpan, kRate);
    Scene scene = build(doc);
    REQUIRE(scene.bodies[0].name == "cape");
    REQUIRE(scene.bodies[0].vertex_count == 77 * 76);
    CHECK(scene.phantoms.size() == (phantom ? 1u : 0u));
    const auto out = run_without_intersections(scene, phantom ? "cape_phantom" : "cape_explicit", 6);
    constexpr std::size_t kFrames = 6;
    const double strain = max_edge_strain(out, "cape", int(kFrames));
    // Where the cape is relative to the torso (the mean x of the torso's frame is the
    // character's position along the walk).
    const TriangleMesh rest = read_obj(frame_path(out.string(), "cape", 0, "obj"));
    const auto torso_x = [&](int frame) {
      const TriangleMesh torso = read_obj(frame_path(out.string(), "torso", frame, "obj"));
      double x = 0;
      for (const Vec3& p : torso.vertices) x += p.x();
      return x / double(torso.vertices.size());
    };
    // The free edge (hem) is the grid's first row: vertices 0..76.
    const auto hem_x = [](const TriangleMesh& cape) {
      double x = 0;
      for (Index i = 0; i < 77; ++i) x += cape.vertices[i].x();
      return x / 77.0;
    };
    double frontmost = -1e9, hem = hem_x(rest);
    for (int i = 0; i < int(kFrames); ++i) {
      const TriangleMesh cape = read_obj(frame_path(out.string(), "cape", i, "obj"));
      const double cx = torso_x(i);
      for (const Vec3& p : cape.vertices) frontmost = std::max(frontmost, p.x() - cx);
      hem = hem_x(cape);
    }
    const double walked = torso_x(int(kFrames) - 1) - torso_x(0);
    MESSAGE("max edge strain " << strain << ", hem moved " << hem - hem_x(rest)
                               << " m while the character walked " << walked
                               << " m, frontmost cape vertex " << frontmost
                               << " m from the torso's axis, deepest layer "
                               << scene.contact->counters().deepest_layer);
    CHECK(walked > 0.015);                       // the script ran (1 m/s)
    CHECK(strain < 0.05);                        // the paper's bound (§5.2)
    CHECK(frontmost < -kTorsoRadius);            // all of it behind the character's back
    // Blown back: without wind the hem would stay where it was (the pull of the pins
    // has not reached it yet) or follow the walk forward.
    CHECK(hem < hem_x(rest) - 0.02);
  }
}

TEST_CASE("cape on the character, shortened: with the obstacles in its ticks the cape lies on the back, strain below 5 %") {
  // demos/cape_behind.json (scripts/make_cape.py --from-behind): the wind from behind
  // presses the cape onto the torso from ~0.012 s. Without `obstacle_contact` the
  // phantom's edge strain there reached 31 % by 0.032 s (docs/performance.md); with it
  // ~1 %. Phantom only: the explicit run takes ~150 s per 0.03 s.
  constexpr double kSpan = 0.024, kRate = 250;  // 7 frames
  nlohmann::json doc = demo_json("cape_behind.json");
  REQUIRE(doc["bodies"][0]["phantom"]["obstacle_contact"] == true);
  doc["end_time"] = kSpan;
  doc["frame_rate"] = kRate;
  Scene scene = build(doc);
  const auto out = run_without_intersections(scene, "cape_behind", 7);
  const double strain = max_edge_strain(out, "cape", 7);
  const PhantomCounters& c = scene.phantoms[0]->counters();
  const double pushing = double(c.pushing_planes) / double(c.ticks);
  MESSAGE("max edge strain " << strain << ", pushing planes per tick " << pushing << ", deepest layer "
                             << scene.contact->counters().deepest_layer_ever << ", "
                             << double(c.iterations) / double(c.ticks) << " iterations per tick");
  CHECK(pushing > 10.0);  // the cape is on the body
  CHECK(strain < 0.05);   // the paper's bound (§5.2)
  CHECK(c.unconverged == 0);
  CHECK(scene.contact->counters().deepest_layer_ever <= 2);  // the planes kept it off the layers
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
  doc["contact"]["safety"] = 0.1;
  doc["contact"]["friction"] = 0.3;
  doc["contact"]["vertex_periods"] = true;
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
    d["contact"]["stiffness"] = -5;
    CHECK(error_of(d) == "test.json: /contact/stiffness: must be > 0, got -5");
  }
  SUBCASE("negative friction") {
    nlohmann::json d = base;
    d["contact"]["friction"] = -0.1;
    CHECK(error_of(d) == "test.json: /contact/friction: must be >= 0, got -0.1");
  }
  SUBCASE("negative envelope slack") {
    nlohmann::json d = base;
    d["contact"]["slack_far"] = -1;
    CHECK(error_of(d) == "test.json: /contact/slack_far: must be >= 0, got -1");
  }
  SUBCASE("adaptive slack that is not a boolean") {
    nlohmann::json d = base;
    d["contact"]["adaptive_slack"] = "yes";
    CHECK(error_of(d) == "test.json: /contact/adaptive_slack: expected true or false, got \"yes\"");
  }
  SUBCASE("vertex periods that are not a boolean") {
    nlohmann::json d = base;
    d["contact"]["vertex_periods"] = 1;
    CHECK(error_of(d) == "test.json: /contact/vertex_periods: expected true or false, got 1");
  }
  SUBCASE("position envelopes: negative, too wide, or without the adaptive slack") {
    nlohmann::json d = base;
    d["contact"]["thickness"] = 0.01;
    d["contact"]["position_slack"] = -1e-3;
    CHECK(error_of(d) == "test.json: /contact/position_slack: must be >= 0, got -0.001");
    d["contact"]["position_slack"] = 2e-3;
    CHECK(error_of(d) ==
          "test.json: /contact/position_slack: must be below thickness / 8 (0.00125 m), got 0.002");
    d["contact"]["position_slack"] = 1e-3;
    d["contact"]["adaptive_slack"] = false;
    CHECK(error_of(d) ==
          "test.json: /contact/position_slack: needs the adaptive slack (adaptive_slack true), got 0.001");
    d["contact"]["adaptive_slack"] = true;
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
