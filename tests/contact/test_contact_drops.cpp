// Contact through whole scenes that fall: a cloth dropped on a sphere and the ground,
// hats on a pole, cards riffled off the thumb — no intersecting triangles in any frame,
// phantom and explicit.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/diagnostics.hpp"
#include "tests/support/contact_scenes.hpp"
#include "tests/support/scenes.hpp"

namespace clockwork {
namespace {

using namespace test;

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
  doc["contact"]["advanced"]["cell_size"] = 0.075;  // one edge, as in the demo
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
    CHECK(scene.bodies_of<PhantomSource>().size() == (phantom ? 3u : 0u));
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
    CHECK(scene.bodies_of<PhantomSource>().size() == (phantom ? 3u : 0u));
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
    CHECK(scene.bodies_of<PhantomSource>().size() == (phantom ? 2u : 0u));
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

}  // namespace
}  // namespace clockwork
