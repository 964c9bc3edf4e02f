// Phantom-mesh implicit AVI, whole runs (label `slow`, left out of the sanitizer
// pass): momenta and mismatch through a collision of two phantom cloths, energy over
// 1e4 ticks, stiff cloth at h_imp = 1e-3 s, a hard impact on a pole.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "contact/intersections/intersection_check.hpp"
#include "engine/diagnostics.hpp"
#include "io/mesh/mesh.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "tests/support/phantom_scenes.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork {
namespace {

using test::build;
using test::phantom_spec;
constexpr auto cloth = test::phantom_cloth_spec;

/// Every body's triangles, in global vertex indices (for the intersection checker).
std::vector<std::array<Index, 3>> all_triangles(const Scene& scene) {
  std::vector<std::array<Index, 3>> tris;
  for (const Body& body : scene.bodies)
    for (const auto& t : body.triangles)
      tris.push_back({body.first_vertex + t[0], body.first_vertex + t[1], body.first_vertex + t[2]});
  return tris;
}
using test::hanging_cloth_spec;

/// Two phantom cloths flying at each other, no gravity: they collide through the
/// penalty layers on the primaries.
Scene colliding_cloths(const std::string& solver, bool deformable_contact = false,
                       const std::string& contact_mass = "primary") {
  PhantomSpec ph = phantom_spec(1e-3, solver, 1e-12);
  ph.contact_on_whole = contact_mass == "whole";
  ph.deformables.on = deformable_contact;
  ShellSpec a = cloth("a", 5, 0.2, Vec3(0, 0, 0), 500.0, ph);
  ShellSpec b = cloth("b", 5, 0.2, Vec3(0.03, 0.02, 0.05), 500.0, ph);
  a.velocity = test::velocity({0.0, 0.1, 0.5}, {0.0, 0.0, 3.0});
  b.velocity = test::velocity({0.05, 0.0, -0.5});
  World w = test::world_of("collide", std::move(a));
  w.add_shell(std::move(b));
  ContactSpec contact;
  contact.settings.thickness = 0.004;
  w.enable_contact(contact);
  return build(std::move(w));
}

TEST_CASE("two phantom cloths colliding: momenta conserved, no intersection, mismatch closes") {
  for (const std::string solver : {"newton", "ncg"}) {
    CAPTURE(solver);
    Scene scene = colliding_cloths(solver);
    Kernel& k = *scene.kernel;
    const Diagnostics d0 = measure(k, 0.0);
    double mass_speed = 0.0;  // Σ m |v|: the scale of the momenta
    for (Index a = 0; a < k.state().size(); ++a) mass_speed += 2 * k.state().mass(a) * k.state().velocity(a).norm();
    double worst_p = 0, worst_L = 0, max_mismatch = 0;
    const std::vector<std::array<Index, 3>> tris = all_triangles(scene);
    for (int i = 1; i <= 64; ++i) {
      const double t = 0.0047 * i;  // between ticks too: the mismatch shows there
      k.run_until(t);
      const Diagnostics d = measure(k, t);
      worst_p = std::max(worst_p, (d.linear_momentum - d0.linear_momentum).norm() / mass_speed);
      worst_L = std::max(worst_L, (d.angular_momentum - d0.angular_momentum).norm() / (mass_speed * 0.2));
      for (const PhantomSource* ph : scene.bodies_of<PhantomSource>()) max_mismatch = std::max(max_mismatch, ph->mismatch(k.state(), t));
      std::vector<Vec3> x;
      for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
      REQUIRE(find_intersections(x, tris).empty());
    }
    const ContactCounters c = scene.contact->counters();
    MESSAGE(solver << ": |dp|/sum m|v| " << worst_p << ", |dL| rel " << worst_L << ", layers "
                   << c.layer_activations << ", max mismatch " << max_mismatch);
    CHECK(c.layer_activations > 0);  // they did collide
    CHECK(worst_p <= 1e-10);
    // Angular momentum: the constraint torque of the mismatched copies is cancelled at
    // each tick (phantom_source.hpp); without that it was 7e-6 here.
    CHECK(worst_L <= 1e-10);
    for (const PhantomSource* ph : scene.bodies_of<PhantomSource>()) {
      MESSAGE("torque corrections " << ph->counters().torque_corrections << ", largest "
                                    << ph->counters().max_correction_speed << " m/s");
      CHECK(ph->counters().max_correction_speed <= 1e-4 * 0.5);  // small against the speeds
      CHECK(ph->counters().torque_skipped == 0);  // every one applied: L exact
    }
    CHECK(max_mismatch > 1e-7);  // contact impulses opened a mismatch ...
    // ... which closes once they are apart: after a tick with no explicit force since
    // the previous one, eq. 8 is exact.
    k.run_until(0.6);
    REQUIRE(scene.contact->counters().active_layers == 0);
    for (const PhantomSource* ph : scene.bodies_of<PhantomSource>()) CHECK(ph->mismatch(k.state(), 0.6005) <= 1e-12);
  }
}

/// The colliding cloths through 0.3 s: the largest relative momentum error, phantom
/// mismatch and contact depth.
struct CollisionResult {
  double momentum = 0.0, angular = 0.0, mismatch = 0.0;
  /// Share of the total energy lost, once the cloths are apart (NaN: still in contact).
  double energy_lost = std::numeric_limits<double>::quiet_NaN();
  int deepest_layer = 0;
  std::uint64_t layer_activations = 0, pair_planes = 0, pushing_planes = 0;
};
CollisionResult collide(bool deformable_contact, const std::string& contact_mass = "primary",
                        int instants = 64) {
  Scene scene = colliding_cloths("ncg", deformable_contact, contact_mass);
  Kernel& k = *scene.kernel;
  const Diagnostics d0 = measure(k, 0.0);
  double mass_speed = 0.0;
  for (Index a = 0; a < k.state().size(); ++a) mass_speed += 2 * k.state().mass(a) * k.state().velocity(a).norm();
  const std::vector<std::array<Index, 3>> tris = all_triangles(scene);
  CollisionResult r;
  for (int i = 1; i <= instants; ++i) {
    const double t = 0.0047 * i;
    k.run_until(t);
    const Diagnostics d = measure(k, t);
    r.momentum = std::max(r.momentum, (d.linear_momentum - d0.linear_momentum).norm() / mass_speed);
    r.angular = std::max(r.angular, (d.angular_momentum - d0.angular_momentum).norm() / (mass_speed * 0.2));
    for (const PhantomSource* ph : scene.bodies_of<PhantomSource>()) r.mismatch = std::max(r.mismatch, ph->mismatch(k.state(), t));
    std::vector<Vec3> x;
    for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
    REQUIRE(find_intersections(x, tris).empty());
  }
  const ContactCounters c = scene.contact->counters();
  if (c.active_layers == 0) r.energy_lost = 1.0 - measure(k, k.now()).total() / d0.total();
  r.deepest_layer = c.deepest_layer_ever;
  r.layer_activations = c.layer_activations;
  for (const PhantomSource* ph : scene.bodies_of<PhantomSource>()) {
    r.pair_planes += ph->counters().pair_planes;
    r.pushing_planes += ph->counters().pushing_planes;
    CHECK(ph->counters().unconverged == 0);
  }
  MESSAGE("deformable planes " << deformable_contact << ", contact on the " << contact_mass
                               << " mass: energy lost " << r.energy_lost << ", |dp|/sum m|v| " << r.momentum << ", |dL| rel "
                               << r.angular << ", max mismatch "
                               << r.mismatch << ", layers " << r.layer_activations << " (deepest "
                               << r.deepest_layer << "), pair planes " << r.pair_planes << ", pushing "
                               << r.pushing_planes);
  return r;
}

TEST_CASE("two phantom cloths colliding with the near pairs in their ticks: the phantoms stop too") {
  // Without the pair planes each tick's elastic solution carries the phantoms on
  // through each other while the layers hold the primaries apart: the mismatch grows
  // to the approach distance of a tick and more. With them (docs/phantom.md "Contact in
  // the tick") both bodies' ticks stop the approach at the pair's common velocity.
  const CollisionResult off = collide(false);
  const CollisionResult on = collide(true);
  CHECK(off.pair_planes == 0);
  CHECK(on.pair_planes > 0);
  CHECK(on.pushing_planes > 0);
  CHECK(on.mismatch < 0.5 * off.mismatch);  // measured 3.8e-4 against 1.2e-3 m
  CHECK(on.deepest_layer <= off.deepest_layer);
  CHECK(on.layer_activations < off.layer_activations);
  // Each plane's impulse on one body is given back to the other's two copies.
  CHECK(on.momentum <= 1e-10);
  CHECK(off.momentum <= 1e-10);
  // The pair planes push without the torque correction (phantom_source.hpp): measured
  // 6.2e-8 of the momenta' scale (the body that receives the reactions cancels their
  // torque at its ticks, PhantomSource::receive_impulse; the one whose planes push
  // does not).
  CHECK(on.angular <= 1e-6);
}

TEST_CASE("contact on the whole mass: two phantom cloths bounce off each other elastically") {
  // The paper's penalties act on the primary's half of the mass and reach the phantom
  // through the next tick, which averages the two copies' momenta: a collision shorter
  // than h_imp loses kinetic energy. With "contact_mass": "whole" both copies take
  // every contact impulse (J/m each) and the layers' elastic response is kept.
  const CollisionResult primary = collide(false, "primary", 128);
  const CollisionResult whole = collide(false, "whole", 128);
  CHECK(primary.energy_lost > 0.3);  // measured 0.42
  CHECK(std::abs(whole.energy_lost) < 0.02);  // measured -0.0055
  CHECK(whole.mismatch <= 1e-12);  // the copies never part
  CHECK(primary.momentum <= 1e-10);
  CHECK(whole.momentum <= 1e-10);
  CHECK(primary.angular <= 1e-10);
  // Whole: an impulse on the phantom between its ticks moves the midpoint about which
  // the next tick's elastic impulse is torque-free, which the discrete Noether
  // momentum of docs/phantom.md does not account for (measured 2e-7).
  CHECK(whole.angular <= 1e-6);
}

TEST_CASE("a stiff hat hits a pole off-centre at h_imp = 1e-3 s: no energy gain, no intersection") {
  // One hat of demos/hats.json (scripts/make_hats.py), 3 cm off the pole's axis: the
  // pole's rim strikes the crown at 1.4 m/s. Undamped, or with the torque correction
  // applied whatever its size, this run gained 20-1000x its energy (docs/phantom.md).
  ShellSpec hat;
  hat.name = "hat";
  hat.mesh = make_hat({0.03, 0.0, 0.67}, Vec3::UnitX(), Vec3::UnitY(), 0.04, 0.03, 0.075, 16);
  hat.material = ShellMaterial{.area_density = 0.2, .young = 2e5, .poisson = 0.3, .bending = 2e-3};
  hat.phantom = phantom_spec(1e-3, "ncg", 1e-6);
  hat.phantom->solver.rayleigh_beta = 1e-4;
  World w = test::world_of("hat", std::move(hat), {0, 0, -9.81});
  w.add_obstacle({.name = "pole", .mesh = make_cylinder({0, 0, 0}, Vec3::UnitZ(), 0.012, 0.5, 12, 4, true)});
  ContactSpec contact;
  contact.settings.friction = 0.3;
  w.enable_contact(contact);
  Scene scene = build(std::move(w));
  Kernel& k = *scene.kernel;
  const std::vector<std::array<Index, 3>> tris = all_triangles(scene);
  const double e0 = measure(k, 0.0).total();
  double highest = e0;
  for (int i = 1; i <= 70; ++i) {
    const double t = 0.005 * i;
    k.run_until(t);
    highest = std::max(highest, measure(k, t).total());
    std::vector<Vec3> x;
    for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
    REQUIRE(find_intersections(x, tris).empty());
  }
  const PhantomCounters& c = scene.bodies_of<PhantomSource>()[0]->counters();
  const double e1 = measure(k, 0.35).total();
  MESSAGE("energy " << e0 << " -> " << e1 << " J, highest " << highest << "; layers "
                    << scene.contact->counters().layer_activations << "; torque corrections "
                    << c.torque_corrections << ", skipped " << c.torque_skipped << "; "
                    << double(c.iterations) / double(c.ticks) << " iterations per tick");
  CHECK(scene.contact->counters().layer_activations > 0);  // it hit the pole
  // Measured 0.13 % at the instant of impact (energy sampled between ticks, while the
  // primary presses into the layers); the failures this guards against were 20-1000x.
  CHECK(highest <= e0 * (1.0 + 5e-3));
  CHECK(e1 < e0);  // the impact dissipated (damping, the inelastic tick)
  CHECK(c.unconverged == 0);
  // At the impact the torque correction would be a large rotation: skipped, counted.
  CHECK(c.torque_skipped > 0);
  CHECK(c.max_correction_speed <= 1e-3 * 1.5);  // what was applied stayed small
}

TEST_CASE("a bent card let go by its thumb: its energy stays bounded, and falls with backward Euler ticks") {
  // The top card of demos/cards.json alone (scripts/make_cards.py): back rows clamped,
  // front rows lifted 1.5 cm into an S and released at 0.15 s; card stock. Nothing
  // drives the free card, so its energy should only fall.
  // - Midpoint ticks damped as the demo (NCG, rayleigh_beta 1e-4, D = β K_mat held
  //   between preconditioner refreshes): bounded. (Projected Newton, which evaluates D
  //   at every tick, takes this card from 6 mJ to 1e26 J within 0.1 s: docs/phantom.md,
  //   "Damping"; not asserted here.)
  // - Backward Euler ticks, undamped: the energy falls, and Newton and NCG agree (the
  //   same problem; the damped midpoint runs of the two part within a few ticks).
  std::vector<Index> pins, front;
  for (Index k = 0; k < 18; ++k) pins.push_back(k), front.push_back(k);
  for (Index k = 81; k < 99; ++k) pins.push_back(k);
  const auto run = [&](const PhantomSpec& phantom, std::vector<double>& energy) {
    ShellSpec card = test::cloth_spec("card", 0.064, 0.089, 8, 10, {0, 0, 0},
                                      {.area_density = 0.3, .young = 5e5, .poisson = 0.3, .bending = 5e-3});
    card.pins = pins;
    card.pin_motion = MotionSpec{.moved = front,
                                 .keyframes = {{0.0, Vec3(0, 0, 0)}, {0.1, Vec3(0, 0.001963, 0.015)}},
                                 .release = 0.15};
    card.phantom = phantom;
    Scene scene = build(test::world_of("card", std::move(card), {0, 0, -9.81}));
    Kernel& k = *scene.kernel;
    for (int i = 0; i <= 50; ++i) {
      const double t = 0.15 + 0.002 * i;
      k.run_until(t);
      energy.push_back(measure(k, t).total());
    }
    CHECK(scene.bodies_of<PhantomSource>()[0]->counters().unconverged == 0);
  };
  std::vector<double> midpoint;
  PhantomSpec damped = phantom_spec(1e-3, "ncg", 1e-6);
  damped.solver.rayleigh_beta = 1e-4;
  run(damped, midpoint);
  const double highest = *std::max_element(midpoint.begin() + 1, midpoint.end());
  MESSAGE("midpoint (NCG): energy at the release " << midpoint[0] << " J, highest after " << highest
                                                   << " J, at 0.25 s " << midpoint.back() << " J");
  CHECK(highest <= midpoint[0]);
  CHECK(midpoint.back() < 0.5 * midpoint[0]);  // measured 15 %
  std::vector<double> backward[2];
  int which = 0;
  for (const std::string solver : {"newton", "ncg"}) {
    CAPTURE(solver);
    std::vector<double>& be = backward[which++];
    PhantomSpec backward_euler = phantom_spec(1e-3, solver, 1e-9);
    backward_euler.solver.theta = 1.0;
    run(backward_euler, be);
    // Backward Euler dissipates exactly only for a convex V; the bent card is not (it
    // rose by up to 1.3e-4 J between samples), but it never regains its release energy.
    const double highest_be = *std::max_element(be.begin() + 1, be.end());
    MESSAGE("backward Euler: " << be[0] << " J at the release, highest after " << highest_be << " J, "
                               << be.back() << " J at 0.25 s");
    CHECK(highest_be <= 0.5 * be[0]);
    CHECK(be.back() < 0.1 * be[0]);  // measured 2.6 %
  }
  double differ = 0;
  for (std::size_t i = 0; i < backward[0].size(); ++i) differ = std::max(differ, std::abs(backward[0][i] - backward[1][i]));
  MESSAGE("backward Euler, Newton against NCG: energies differ by at most " << differ << " J");
  CHECK(differ <= 1e-6 * backward[0][0]);
}

TEST_CASE("undamped phantom cloth: energy oscillates without drift over 1e4 implicit ticks") {
  // Released at an angle (axes [1, 0, 0] and [0, 0.6, 0.8]): it swings.
  Scene scene = build(test::hanging_world(hanging_cloth_spec(500.0, 6, "ncg", Vec3(0, 0.6, 0.8))));
  Kernel& k = *scene.kernel;
  const double swing = measure(k, 0.0).potential;  // scale: the initial potential energy
  std::vector<double> total;
  for (int i = 0; i <= 1000; ++i) {
    k.run_until(0.01 * i);
    total.push_back(measure(k, 0.01 * i).total());
  }
  REQUIRE(scene.bodies_of<PhantomSource>()[0]->counters().ticks >= 10000);
  const auto mean = [&](std::size_t from, std::size_t to) {
    double s = 0;
    for (std::size_t i = from; i < to; ++i) s += total[i];
    return s / double(to - from);
  };
  double lo = total[0], hi = total[0];
  for (double e : total) lo = std::min(lo, e), hi = std::max(hi, e);
  const double drift = std::abs(mean(900, 1001) - mean(0, 101)) / std::abs(swing);
  MESSAGE("energy band " << (hi - lo) / std::abs(swing) << ", drift " << drift);
  CHECK(drift < 0.005);
  CHECK((hi - lo) / std::abs(swing) < 0.05);
}

TEST_CASE("stiff cloth: explicit needs h <= 1e-6 s, the phantom is stable at 1e-3 s, strain <= 5%") {
  const double young = 5e7;
  ShellSpec explicit_cloth = hanging_cloth_spec(young, 8, "newton");
  explicit_cloth.phantom.reset();  // explicit AVI
  const Scene explicit_scene = build(test::hanging_world(std::move(explicit_cloth)));
  double h_explicit = kNever;
  for (const TermSummary& t : explicit_scene.terms)
    if (t.kind == "force:membrane") h_explicit = t.min_period;
  MESSAGE("explicit membrane period " << h_explicit << " s");
  CHECK(h_explicit <= 1e-6);

  Scene scene = build(test::hanging_world(hanging_cloth_spec(young, 8, "ncg")));
  Kernel& k = *scene.kernel;
  const Body& b = scene.bodies[0];
  std::vector<double> rest;  // rest lengths of the triangle edges
  std::vector<std::array<Index, 2>> edges;
  for (const auto& t : b.triangles)
    for (int i = 0; i < 3; ++i) edges.push_back({t[i], t[(i + 1) % 3]});
  for (const auto& e : edges)
    rest.push_back((k.state().position_at(b.first_vertex + e[0], 0) - k.state().position_at(b.first_vertex + e[1], 0)).norm());
  double max_strain = 0;
  for (int i = 1; i <= 20; ++i) {
    const double t = 0.05 * i;
    k.run_until(t);
    for (std::size_t j = 0; j < edges.size(); ++j) {
      const double len = (k.state().position_at(b.first_vertex + edges[j][0], t) -
                          k.state().position_at(b.first_vertex + edges[j][1], t)).norm();
      max_strain = std::max(max_strain, std::abs(len / rest[j] - 1.0));
    }
    REQUIRE(std::isfinite(measure(k, t).total()));
  }
  MESSAGE("max strain " << max_strain << " over 1000 ticks, " << scene.bodies_of<PhantomSource>()[0]->counters().iterations
                        << " solver iterations");
  CHECK(max_strain <= 0.05);
  CHECK(scene.bodies_of<PhantomSource>()[0]->counters().unconverged == 0);
  // It hangs: the free corners fell.
  CHECK(k.state().position_at(b.first_vertex, 1.0).z() < 0.9);
}

}  // namespace
}  // namespace clockwork

namespace clockwork {
namespace {

/// A stiff phantom cloth dropped on a ball obstacle at 0.5 m/s, with or without the
/// obstacle planes in its ticks; returns the largest edge strain over 0.3 s and checks
/// every 10 ms that no triangles intersect.
struct DrapeResult {
  double strain = 0.0;
  int deepest_layer = 0;
  double pushing_planes_per_tick = 0.0;
};
DrapeResult drape_on_ball(bool obstacle_contact) {
  PhantomSpec ph = phantom_spec(1e-3, "ncg", 1e-6);
  ph.solver.rayleigh_beta = 1e-4;
  ph.obstacles.on = obstacle_contact;
  ShellSpec body = test::phantom_cloth_spec("cloth", 16, 0.3, Vec3(0, 0, 0.09), 5e4, ph);
  std::get<ShellMaterial>(body.material).bending = 1e-3;
  body.velocity = test::velocity({0.0, 0.0, -0.5});
  World w = test::world_of("drape", std::move(body), {0, 0, -9.81});
  w.add_obstacle({.name = "ball", .mesh = make_sphere({0, 0, 0}, 0.08, 2)});
  ContactSpec contact;
  contact.settings.friction = 0.3;
  w.enable_contact(contact);
  Scene scene = build(std::move(w));
  Kernel& k = *scene.kernel;
  const std::vector<std::array<Index, 3>> tris = all_triangles(scene);
  const Body& cloth_body = scene.bodies[0];
  std::vector<std::pair<Index, Index>> edges;
  std::vector<double> rest;
  for (const auto& t : cloth_body.triangles)
    for (int e = 0; e < 3; ++e) {
      const Index a = t[e], b = t[(e + 1) % 3];
      edges.emplace_back(a, b);
      rest.push_back((k.state().position(a) - k.state().position(b)).norm());
    }
  DrapeResult r;
  for (int i = 1; i <= 30; ++i) {
    const double t = 0.01 * i;
    k.run_until(t);
    std::vector<Vec3> x;
    for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
    REQUIRE(find_intersections(x, tris).empty());
    for (std::size_t e = 0; e < edges.size(); ++e)
      r.strain = std::max(r.strain, (x[edges[e].first] - x[edges[e].second]).norm() / rest[e] - 1.0);
  }
  const PhantomCounters& c = scene.bodies_of<PhantomSource>()[0]->counters();
  CHECK(c.unconverged == 0);
  r.deepest_layer = scene.contact->counters().deepest_layer_ever;
  r.pushing_planes_per_tick = double(c.pushing_planes) / double(c.ticks);
  MESSAGE("obstacle planes " << obstacle_contact << ": strain " << r.strain << ", deepest layer "
                             << r.deepest_layer << ", pushing planes per tick " << r.pushing_planes_per_tick
                             << ", " << double(c.iterations) / double(c.ticks) << " iterations per tick");
  return r;
}

TEST_CASE("a stiff cloth dropped on a ball: obstacle planes in the tick keep it from kinking on the layers") {
  // The tick's elastic solution ignores obstacles unless told (docs/phantom.md
  // "Obstacles in the tick"): it drapes the phantom through the ball, the layers push
  // the half-mass primary back out every tick, and the cloth kinks where they fight
  // (measured 4.5 % edge strain, layer 4). With the planes the landing points stay
  // 2 η(1) off the ball: 0.15 %, no layer needed.
  const DrapeResult off = drape_on_ball(false);
  const DrapeResult on = drape_on_ball(true);
  CHECK(on.pushing_planes_per_tick > 1.0);  // the ball was met
  CHECK(on.strain < 0.005);
  CHECK(on.deepest_layer <= 1);
  CHECK(off.strain > 5.0 * on.strain);
  CHECK(off.deepest_layer > on.deepest_layer);
}

/// A phantom cloth dropped 1 mm onto the ground, contact on the primary (the paper's);
/// the largest mismatch max |q − q̃| sampled every 1e-5 s over [0.4, 0.5] s, once it
/// rests.
double resting_mismatch(double h_imp) {
  World w = test::world_of("rest", cloth("c", 5, 0.2, Vec3(0, 0, 3e-3), 500.0, phantom_spec(h_imp, "", 1e-9)),
                           {0, 0, -9.81});
  w.add_obstacle(test::ground_spec({0, 0, 0}, 0.5));
  ContactSpec contact;
  contact.settings.thickness = 2e-3;
  w.enable_contact(contact);
  Scene scene = build(std::move(w));
  double worst = 0.0;
  for (int i = 0; i <= 10000; ++i) {
    const double t = 0.4 + 1e-5 * i;
    scene.kernel->run_until(t);
    worst = std::max(worst, scene.bodies_of<PhantomSource>()[0]->mismatch(scene.kernel->state(), t));
  }
  // At rest: the rattle in the layers (~1e-7 J) against the drop (~1e-5 J) and the height.
  CHECK(measure(*scene.kernel, 0.5).kinetic < 5e-3 * measure(*scene.kernel, 0.0).potential);
  return worst;
}

TEST_CASE("a phantom cloth resting on the ground: the coupling carries its weight through a mismatch ~ g h^2") {
  // docs/phantom.md "Contact force and the step": the eq.-8 coupling carries a contact
  // force F on a vertex of mass m (acting on the primary) through a mismatch of order
  // F h²/m between the copies; resting, F = m g, so g h² whatever the mass.
  const double h1 = 1e-3, h2 = 5e-4;
  const double d1 = resting_mismatch(h1), d2 = resting_mismatch(h2);
  MESSAGE("resting mismatch " << d1 << " m at h = 1 ms (" << d1 / (9.81 * h1 * h1) << " g h^2), " << d2
                              << " m at 0.5 ms (" << d2 / (9.81 * h2 * h2) << " g h^2)");
  // Measured 2.1 and 1.3 g h² (the largest over an interval; the ratio 6.4).
  for (const auto& [d, h] : {std::pair{d1, h1}, std::pair{d2, h2}}) {
    CHECK(d >= 9.81 * h * h);
    CHECK(d <= 3.0 * 9.81 * h * h);
  }
  CHECK(d1 / d2 >= 3.0);  // at least as h²
}

}  // namespace
}  // namespace clockwork
