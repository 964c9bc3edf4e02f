// Phantom-mesh implicit AVI (phantom-mesh paper §3.2; DESIGN §3): the tick's
// minimiser satisfies the paper's update equations, momenta are conserved through
// contact, the mismatch vanishes without explicit forces, energy does not drift,
// stiff cloth is stable at h_imp = 1e-3 s, and bad input is named.
#include <doctest/doctest.h>

#include <random>

#include "contact/intersection_check.hpp"
#include "engine/diagnostics.hpp"
#include "io/scene.hpp"
#include "tests/support/scenes.hpp"
#include "io/scene_error.hpp"

namespace clockwork {
namespace {

using test::build;
using test::error_of;

nlohmann::json cloth(const std::string& name, int res, double size, const Vec3& center,
                     double young, const nlohmann::json& phantom) {
  return {{"name", name},
          {"shape", {{"type", "grid"}, {"size", {size, size}}, {"resolution", {res, res}},
                     {"center", {center.x(), center.y(), center.z()}}}},
          {"material", {{"area_density", 0.1}, {"young", young}, {"poisson", 0.3}, {"bending", 1e-4}}},
          {"integrator", "phantom"},
          {"phantom", phantom}};
}

TEST_CASE("one phantom tick satisfies the constraint and momentum updates (eq. 6-8)") {
  nlohmann::json body = cloth("c", 4, 0.3, Vec3::Zero(), 500.0, {{"h_imp", 1e-3}, {"tolerance", 1e-12}});
  body["velocity"] = {{"random", 0.3}, {"angular", {0.0, 0.0, 2.0}}};
  Scene scene = build({{"name", "tick"}, {"end_time", 1.0}, {"frame_rate", 30}, {"bodies", {body}}});
  REQUIRE(scene.phantoms.size() == 1);
  PhantomSource& ph = *scene.phantoms[0];
  Kernel& k = *scene.kernel;
  const VertexState& s = k.state();
  const std::size_t n = s.size();
  const double h = 1e-3;
  std::vector<Vec3> q(n), v0(n), vt0(n);
  Eigen::VectorXd qt(3 * n);
  for (Index a = 0; a < n; ++a) {
    q[a] = s.position_at(a, 0.0);
    v0[a] = s.velocity(a);
    vt0[a] = ph.phantom_velocity(a);
    qt.segment<3>(3 * a) = ph.phantom_position(a, 0.0);
    CHECK(vt0[a] == v0[a]);  // the phantom starts as a copy
  }
  Eigen::VectorXd g_prev, g, x(3 * n);
  ph.potential().gradient(qt, g_prev);
  REQUIRE(k.step());  // the tick at t = 0
  for (Index a = 0; a < n; ++a) x.segment<3>(3 * a) = ph.phantom_position(a, h);
  ph.potential().gradient(0.5 * (qt + x), g);
  double worst8 = 0, worst7 = 0, scale = 0;
  for (Index a = 0; a < n; ++a) {
    const double m = 2.0 * s.mass(a);  // the kernel holds m/2
    const Vec3 vp = s.velocity(a), vtp = ph.phantom_velocity(a);
    // Eq. 8: both copies reach the same point at the next tick.
    worst8 = std::max(worst8, ((q[a] + h * vp) - (qt.segment<3>(3 * a) + h * vtp)).norm());
    // Eq. 6 defines the constraint impulse on the primary; eq. 7 gives the phantom
    // the opposite impulse plus the midpoint forces.
    const Vec3 lambda_h = 0.5 * m * (vp - v0[a]);
    const Vec3 r7 = 0.5 * m * (vtp - vt0[a]) + lambda_h +
                    0.5 * h * (g.segment<3>(3 * a) + g_prev.segment<3>(3 * a));
    worst7 = std::max(worst7, r7.norm());
    scale = std::max(scale, 0.5 * h * g.segment<3>(3 * a).norm() + lambda_h.norm());
  }
  CHECK(worst8 <= 1e-15);
  CHECK(worst7 <= 1e-9 * scale);
  MESSAGE("eq. 7 residual " << worst7 << " against impulses of " << scale);
}

/// Two phantom cloths flying at each other, no gravity: they collide through the
/// penalty layers on the primaries.
Scene colliding_cloths(const std::string& solver) {
  const nlohmann::json ph = {{"h_imp", 1e-3}, {"tolerance", 1e-12}, {"solver", solver}};
  nlohmann::json a = cloth("a", 5, 0.2, Vec3(0, 0, 0), 500.0, ph);
  nlohmann::json b = cloth("b", 5, 0.2, Vec3(0.03, 0.02, 0.05), 500.0, ph);
  a["velocity"] = {{"linear", {0.0, 0.1, 0.5}}, {"angular", {0.0, 0.0, 3.0}}};
  b["velocity"] = {{"linear", {0.05, 0.0, -0.5}}};
  return build({{"name", "collide"}, {"end_time", 1.0}, {"frame_rate", 30}, {"bodies", {a, b}},
                {"contact", {{"thickness", 0.004}}}});
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
    std::vector<std::array<Index, 3>> tris;
    for (const Body& body : scene.bodies)
      for (const auto& t : body.triangles)
        tris.push_back({body.first_vertex + t[0], body.first_vertex + t[1], body.first_vertex + t[2]});
    for (int i = 1; i <= 64; ++i) {
      const double t = 0.0047 * i;  // between ticks too: the mismatch shows there
      k.run_until(t);
      const Diagnostics d = measure(k, t);
      worst_p = std::max(worst_p, (d.linear_momentum - d0.linear_momentum).norm() / mass_speed);
      worst_L = std::max(worst_L, (d.angular_momentum - d0.angular_momentum).norm() / (mass_speed * 0.2));
      for (const PhantomSource* ph : scene.phantoms) max_mismatch = std::max(max_mismatch, ph->mismatch(k.state(), t));
      std::vector<Vec3> x;
      for (Index a = 0; a < k.state().size(); ++a) x.push_back(k.state().position_at(a, t));
      REQUIRE(find_intersections(x, tris).empty());
    }
    const ContactCounters c = scene.contact->counters();
    MESSAGE(solver << ": |dp|/sum m|v| " << worst_p << ", |dL| rel " << worst_L << ", layers "
                   << c.layer_activations << ", max mismatch " << max_mismatch);
    CHECK(c.layer_activations > 0);  // they did collide
    CHECK(worst_p <= 1e-10);
    // Angular momentum: exact while the copies agree (the spinning cloth below), but
    // the constraint impulses of a mismatched pair exert a torque (phantom_source.hpp):
    // measured 7e-6 here; the 1e-10 is not met through contact.
    CHECK(worst_L <= 1e-4);
    CHECK(max_mismatch > 1e-7);  // contact impulses opened a mismatch ...
    // ... which closes once they are apart: after a tick with no explicit force since
    // the previous one, eq. 8 is exact.
    k.run_until(0.6);
    REQUIRE(scene.contact->counters().active_layers == 0);
    for (const PhantomSource* ph : scene.phantoms) CHECK(ph->mismatch(k.state(), 0.6005) <= 1e-12);
  }
}

nlohmann::json hanging(double young, int res, const std::string& solver) {
  nlohmann::json body = cloth("c", res, 0.5, Vec3(0, 0, 1), young,
                              {{"h_imp", 1e-3}, {"solver", solver}, {"tolerance", 1e-6}});
  body["shape"]["axes"] = {{1, 0, 0}, {0, 0, 1}};
  body["pins"] = {"u0v1", "u1v1"};
  return {{"name", "hang"}, {"end_time", 10.0}, {"frame_rate", 30}, {"gravity", {0, 0, -9.81}}, {"bodies", {body}}};
}

TEST_CASE("a spinning phantom cloth conserves linear and angular momentum to the solver tolerance") {
  nlohmann::json body = cloth("c", 4, 0.3, Vec3::Zero(), 500.0, {{"h_imp", 1e-3}, {"tolerance", 1e-12}});
  body["velocity"] = {{"random", 0.3}, {"angular", {1.0, 0.0, 2.0}}};
  Scene scene = build({{"name", "spin"}, {"end_time", 1.0}, {"frame_rate", 30}, {"bodies", {body}}});
  Kernel& k = *scene.kernel;
  const Diagnostics d0 = measure(k, 0.0);
  double worst_p = 0, worst_L = 0;
  for (int i = 1; i <= 100; ++i) {
    const double t = 0.00237 * i;
    k.run_until(t);
    const Diagnostics d = measure(k, t);
    worst_p = std::max(worst_p, (d.linear_momentum - d0.linear_momentum).norm() / d0.linear_momentum.norm());
    worst_L = std::max(worst_L, (d.angular_momentum - d0.angular_momentum).norm() / d0.angular_momentum.norm());
  }
  MESSAGE("relative |dp| " << worst_p << ", |dL| " << worst_L);
  CHECK(worst_p <= 1e-10);
  CHECK(worst_L <= 1e-10);
}

TEST_CASE("undamped phantom cloth: energy oscillates without drift over 1e4 implicit ticks") {
  nlohmann::json doc = hanging(500.0, 6, "ncg");
  doc["bodies"][0]["shape"]["axes"] = {{1, 0, 0}, {0, 0.6, 0.8}};  // released at an angle: it swings
  Scene scene = build(doc);
  Kernel& k = *scene.kernel;
  const double swing = measure(k, 0.0).potential;  // scale: the initial potential energy
  std::vector<double> total;
  for (int i = 0; i <= 1000; ++i) {
    k.run_until(0.01 * i);
    total.push_back(measure(k, 0.01 * i).total());
  }
  REQUIRE(scene.phantoms[0]->counters().ticks >= 10000);
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
  nlohmann::json explicit_doc = hanging(young, 8, "newton");
  explicit_doc["bodies"][0].erase("integrator");
  explicit_doc["bodies"][0].erase("phantom");
  const Scene explicit_scene = build(explicit_doc);
  double h_explicit = kNever;
  for (const TermSummary& t : explicit_scene.terms)
    if (t.kind == "force:membrane") h_explicit = t.min_period;
  MESSAGE("explicit membrane period " << h_explicit << " s");
  CHECK(h_explicit <= 1e-6);

  Scene scene = build(hanging(young, 8, "ncg"));
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
  MESSAGE("max strain " << max_strain << " over 1000 ticks, " << scene.phantoms[0]->counters().iterations
                        << " solver iterations");
  CHECK(max_strain <= 0.05);
  CHECK(scene.phantoms[0]->counters().unconverged == 0);
  // It hangs: the free corners fell.
  CHECK(k.state().position_at(b.first_vertex, 1.0).z() < 0.9);
}

TEST_CASE("scripted pins move both copies: the phantom follows and the cloth is carried") {
  nlohmann::json doc = hanging(500.0, 6, "newton");
  doc["bodies"][0]["pin_motion"] = {{"keyframes", {{{"time", 0.0}, {"offset", {0, 0, 0}}},
                                                   {{"time", 0.2}, {"offset", {0.1, 0, 0}}}}}};
  Scene scene = build(doc);
  Kernel& k = *scene.kernel;
  const PhantomSource& ph = *scene.phantoms[0];
  const Body& b = scene.bodies[0];
  const Vec3 free0 = k.state().position_at(b.first_vertex, 0.0);  // a free bottom corner
  k.run_until(0.3);
  const Index pin = 6 * 7;  // u0v1: i = 0, j = 6
  REQUIRE(k.state().kinematic(b.first_vertex + pin));
  CHECK((ph.phantom_position(pin, 0.3) - k.state().position_at(b.first_vertex + pin, 0.3)).norm() <= 1e-12);
  CHECK(k.state().position_at(b.first_vertex + pin, 0.3).x() == doctest::Approx(-0.25 + 0.1));
  CHECK(k.state().position_at(b.first_vertex, 0.3).x() > free0.x() + 0.01);  // carried along
}

TEST_CASE("phantom bad input: named errors, and a logged fallback when the solver stops") {
  const nlohmann::json base = hanging(500.0, 4, "newton");
  SUBCASE("h_imp <= 0") {
    nlohmann::json d = base;
    d["bodies"][0]["phantom"]["h_imp"] = 0;
    CHECK(error_of(d) == "test.json: /bodies/0/phantom/h_imp: must be > 0, got 0");
  }
  SUBCASE("unknown solver") {
    nlohmann::json d = base;
    d["bodies"][0]["phantom"]["solver"] = "jacobi";
    CHECK(error_of(d).find("/bodies/0/phantom/solver") != std::string::npos);
  }
  SUBCASE("phantom settings without the phantom integrator") {
    nlohmann::json d = base;
    d["bodies"][0]["integrator"] = "explicit";
    CHECK(error_of(d).find("test.json: /bodies/0/phantom: needs \"integrator\": \"phantom\"") == 0);
  }
  SUBCASE("a solver that cannot converge keeps running, counted") {
    nlohmann::json d = base;
    d["bodies"][0]["phantom"]["max_iterations"] = 1;
    d["bodies"][0]["phantom"]["tolerance"] = 1e-14;
    Scene scene = build(d);
    scene.kernel->run_until(0.05);
    const PhantomCounters& c = scene.phantoms[0]->counters();
    CHECK(c.ticks == 51);
    CHECK(c.unconverged > 0);
    CHECK(std::isfinite(measure(*scene.kernel, 0.05).total()));
  }
}

}  // namespace
}  // namespace clockwork
