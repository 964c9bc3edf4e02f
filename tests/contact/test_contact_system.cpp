// The contact system on bare kernels: the hash grid creates pairs for primitives
// that approach from far apart, penalty layers stop them before they touch, every
// impulse conserves momentum, and separating pairs retire their layers.
#include <doctest/doctest.h>

#include "contact/contact_system.hpp"
#include "contact/distance/distance.hpp"
#include "contact/intersections/intersection_check.hpp"
#include "integrators/avi/force_source.hpp"
#include "integrators/energy/spring_energy.hpp"

namespace clockwork {
namespace {

struct TwoTriangles {
  Kernel kernel;
  std::unique_ptr<ContactSystem> contact;

  /// Triangle A at z = 0 moving up at `speed`, triangle B at z = gap moving down,
  /// B rotated so that vertex–triangle and edge–edge contacts both occur. Stiff
  /// edge springs keep both nearly rigid.
  TwoTriangles(double gap, double speed, double mass, const ContactParameters& p) {
    VertexState& s = kernel.state();
    s.add(Vec3(0, 0, 0), Vec3(0, 0, speed), mass);
    s.add(Vec3(1, 0, 0), Vec3(0, 0, speed), mass);
    s.add(Vec3(0, 1, 0), Vec3(0, 0, speed), mass);
    s.add(Vec3(0.3, 0.3, gap), Vec3(0, 0, -speed), mass);
    s.add(Vec3(-0.4, 0.5, gap + 0.1), Vec3(0, 0, -speed), mass);
    s.add(Vec3(0.6, -0.3, gap + 0.05), Vec3(0, 0, -speed), mass);
    Contingency& contingency = Contingency::install(kernel);
    auto springs = std::make_unique<ForceSource<SpringEnergy>>("force:spring");
    for (Index t = 0; t < 2; ++t)
      for (Index k = 0; k < 3; ++k) {
        const Index i = 3 * t + k, j = 3 * t + (k + 1) % 3;
        SpringEnergy e;
        e.stiffness = 100.0;
        e.rest_length = (s.position(i) - s.position(j)).norm();
        springs->add({i, j}, e, 2e-3);
      }
    ForceSource<SpringEnergy>& ref = *springs;
    ref.start(kernel.add_source(std::move(springs)), kernel);
    contact = std::make_unique<ContactSystem>(kernel, contingency, p);
    contact->add_triangle({0, 1, 2});
    contact->add_triangle({3, 4, 5});
    contact->start();
  }

  Vec3 momentum() const {
    Vec3 p = Vec3::Zero();
    for (Index a = 0; a < 6; ++a) p += kernel.state().mass(a) * kernel.state().velocity(a);
    return p;
  }
  Vec3 angular_momentum(double t) const {
    Vec3 L = Vec3::Zero();
    for (Index a = 0; a < 6; ++a)
      L += kernel.state().position_at(a, t).cross(kernel.state().mass(a) * kernel.state().velocity(a));
    return L;
  }
  bool intersect(double t) const {
    std::vector<Vec3> x;
    for (Index a = 0; a < 6; ++a) x.push_back(kernel.state().position_at(a, t));
    return !find_intersections(x, {{0, 1, 2}, {3, 4, 5}}).empty();
  }
};

ContactParameters params() {
  ContactParameters p;
  p.eta1 = 0.02;
  p.r1 = 500.0;
  p.h1 = 0.2 * 2.0 / std::sqrt(2.0 * p.r1 / 0.01);
  p.cell_size = 0.25;
  return p;
}

TEST_CASE("approaching triangles: the grid creates their pairs, layers stop them, momenta kept") {
  TwoTriangles s(3.0, 1.0, 0.01, params());
  Kernel& k = s.kernel;
  CHECK(s.contact->counters().live_pairs == 0);  // 3 m apart: no shared cell
  const Vec3 p0 = s.momentum();
  const Vec3 L0 = s.angular_momentum(0.0);
  const double ke0 = 6 * 0.5 * 0.01 * 1.0;
  std::size_t max_pairs = 0;
  for (int i = 1; i <= 400; ++i) {
    const double t = 3.0 * i / 400;
    k.run_until(t);
    max_pairs = std::max(max_pairs, s.contact->counters().live_pairs);
    REQUIRE_FALSE(s.intersect(t));
    CHECK((s.momentum() - p0).norm() <= 1e-15);
    CHECK((s.angular_momentum(t) - L0).norm() <= 1e-14);
  }
  CHECK(max_pairs > 0);
  // They bounced: A moves down, B up, kinetic energy nearly restored (the layers
  // are conservative springs, integrated variationally).
  double vz_a = 0, vz_b = 0, ke = 0;
  for (Index a = 0; a < 6; ++a) {
    const Vec3 v = k.state().velocity(a);
    (a < 3 ? vz_a : vz_b) += v.z() / 3;
    ke += 0.5 * 0.01 * v.squaredNorm();
  }
  CHECK(vz_a < -0.2);  // part of the translation became spin: the hit is off-centre
  CHECK(vz_b > 0.2);
  CHECK(ke == doctest::Approx(ke0).epsilon(0.05));
  // Separated: the layers retired and the grid released the pairs.
  const ContactCounters c = s.contact->counters();
  CHECK(c.active_layers == 0);
  CHECK(c.live_pairs == 0);
  CHECK(c.deepest_layer_ever >= 1);
  CHECK(c.slab_evaluations > 0);
}

TEST_CASE("friction impulses keep every velocity inside the envelopes its certificates assume") {
  // The triangles meet while sliding across each other, so the layers' friction
  // impulses change the tangential velocities. A certificate with an envelope is
  // conservative only while its vertices' velocities stay within the slack of the
  // envelope's centre: every velocity change, friction's too, must be reported.
  ContactParameters p = params();
  p.friction = 0.5;
  p.slack_near = 0.02;
  p.slack_far = 0.05;
  TwoTriangles s(0.3, 1.0, 0.01, p);
  Kernel& k = s.kernel;
  for (Index a = 0; a < 3; ++a) {  // sliding along x
    k.state().velocity_ref(a).x() = 0.8;
    k.velocity_changed(a);
  }
  k.flush_velocity_watch();
  int friction_events = 0, checked = 0;
  double worst = 0.0;  // the largest |v − u| / δ_a over the enveloped vertices
  while (k.now() < 0.6 && k.step()) {
    for (Index a = 0; a < 6; ++a)
      for (int l = 1; l < kEnvelopeLevels; ++l) {
        if (s.contact->contingency().dependents(a, l).empty()) continue;
        ++checked;
        worst = std::max(worst, (k.state().velocity(a) - s.contact->contingency().envelope_velocity(l, a)).norm() /
                                   s.contact->contingency().velocity_slack(l, a));
      }
    friction_events += s.contact->counters().active_layers > 0;
  }
  MESSAGE("events with active layers " << friction_events << ", largest |v - u| / slack " << worst);
  REQUIRE(s.contact->counters().deepest_layer_ever >= 1);
  REQUIRE(checked > 0);
  CHECK(worst <= 1.0 + 1e-12);
}

/// Every millisecond kicks triangle A's vertices along z by +0.25 m/s, then by −0.5,
/// +0.5, … : a rattle of ±0.25 m/s (a quarter of a millimetre) about its approach.
class Rattle final : public EventSource {
 public:
  std::string_view name() const override { return "rattle"; }
  double process(EventSlot, double t, Kernel& k) override {
    const double dv = first_ ? 0.25 : (sign_ = -sign_) * 0.5;
    first_ = false;
    for (Index a = 0; a < 3; ++a) {
      k.state().sync(a, t);
      k.state().velocity_ref(a).z() += dv;
      k.velocity_changed(a);
    }
    return t + 1e-3;
  }

 private:
  bool first_ = true;
  double sign_ = 1.0;
};

TEST_CASE("position envelopes: a rattling triangle's far certificates are never late") {
  // Triangle A rattles (±0.25 m/s, kicks of 0.5 m/s every ms, beyond the far slack's
  // cap of 0.4 m/s) while the triangles close at 0.1 m/s: A's vertices go into balls of
  // 2 mm and re-anchor as they approach. Brute force at every event: each far
  // certificate's claim (slab, grid range) holds for the actual positions, and while
  // the pair is not expanded the triangles are farther than η1 apart.
  ContactParameters p = params();
  p.slack_near = 0.05;
  p.slack_far = 0.05;
  p.position_slack = 0.1 * p.eta1;
  TwoTriangles s(0.3, 0.05, 0.01, p);
  Kernel& k = s.kernel;
  const EventKind rattle = k.add_source(std::make_unique<Rattle>());
  k.schedule(rattle, 0, 0.0);
  double closest_collapsed = kNever, worst_violation = -kNever;
  bool expanded = false;
  while (k.now() < 4.0 && k.step()) {
    worst_violation = std::max(worst_violation, s.contact->far_certificate_violation(k.now()));
    const ContactCounters c = s.contact->counters();
    StencilPositions<6> x;
    for (Index a = 0; a < 6; ++a) x.col(a) = k.state().position_at(a, k.now());
    const double d = triangle_pair_gap(x).distance;
    if (c.expanded_pairs == 0) closest_collapsed = std::min(closest_collapsed, d);
    else expanded = true;
    REQUIRE(d > 0.0);
  }
  MESSAGE("ball entries " << s.contact->contingency().ball_entries() << ", exits " << s.contact->contingency().ball_exits()
                          << ", closest collapsed pair " << closest_collapsed
                          << ", largest far-certificate violation " << worst_violation);
  CHECK(worst_violation <= 1e-12);  // every slab and grid range held between events
  CHECK(s.contact->contingency().ball_entries() >= 3);
  CHECK(s.contact->contingency().ball_exits() > 3);  // re-anchored on the way
  CHECK(expanded);            // they came within 1.25 η1 ...
  CHECK(closest_collapsed > p.eta1);  // ... and were never that close while collapsed
  CHECK(s.contact->counters().deepest_layer_ever >= 1);
}

TEST_CASE("a fast head-on impact activates deeper layers and still never touches") {
  TwoTriangles s(1.0, 20.0, 0.01, params());
  for (int i = 1; i <= 200; ++i) {
    const double t = 0.2 * i / 200;
    s.kernel.run_until(t);
    REQUIRE_FALSE(s.intersect(t));
  }
  CHECK(s.contact->counters().deepest_layer_ever > 1);
}

TEST_CASE("a pair resting just outside a layer activates it early: no impulse, few slab failures") {
  // A vertex at rest 2 % outside η1: its slab certifies a hundredth of η1 per side, which
  // a velocity envelope of 1 m/s spends in 2e-4 s, over and over. Activating layer 1 a
  // little early (kActivateMargin) leaves the slab η(2)'s wider margin, and the layer
  // ticks without pushing, since the vertex is outside it.
  ContactParameters p = params();
  p.slack_near = 1.0;
  p.slack_far = 1.0;
  const auto run = [&](double gap) {
    auto s = std::make_unique<TwoTriangles>(gap, 0.0, 0.01, p);
    s->kernel.run_until(0.1);
    for (Index a = 0; a < 6; ++a) CHECK(s->kernel.state().velocity(a) == Vec3::Zero());
    return s->contact->counters();
  };
  const ContactCounters hovering = run(1.02 * p.eta1);
  CHECK(hovering.active_layers == 1);
  CHECK(hovering.deepest_layer_ever == 1);
  // Without early activation: 0.1 s / 2e-4 s = 500 failures of the vertex's slab alone.
  MESSAGE("slab failures while hovering: " << hovering.slab_failures);
  CHECK(hovering.slab_failures < 100);
  // Beyond the margin nothing activates.
  const ContactCounters clear = run(1.2 * p.eta1);
  CHECK(clear.active_layers == 0);
  CHECK(clear.deepest_layer_ever == 0);
}

}  // namespace
}  // namespace clockwork
