// Schroeder et al. §6 collisions with static bodies as constraints of the implicit
// solves, over whole drops (CTest label `slow`, with test_schroeder_runs): a resting
// ball is in static equilibrium, the friction cone holds, nothing enters a collider.
// The colliders' geometry is tested in test_schroeder_contact.cpp.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <numeric>

#include "integrators/schroeder/schroeder_scheme.hpp"
#include "contact/obstacles/static_collider.hpp"
#include "tests/support/schroeder_ball.hpp"

namespace clockwork {
namespace {

using test::Ball;
using test::kGravity;
using test::make_ball;
using test::stacked;

struct Rest {
  double reaction = 0.0;   ///< Σ over particles on the plane of −(f + m g)·n, / weight
  double worst = 0.0;      ///< max over the other particles of |f + m g|, / weight
  double kinetic = 0.0;    ///< J
  double extent = 0.0;     ///< vertical extent, m
};

/// Drops the ball 5 cm onto the plane z = ground with the fully-implicit scheme at
/// Δt = 1/24 s and lets it settle for 3 s; the static balance at the end.
Rest settle(FemKind kind, bool constrain) {
  const Ball b = make_ball(kind);
  SchroederSettings s;
  s.scheme = SchroederScheme::FullyImplicit;
  s.frame_dt = 1.0 / 24.0;
  s.rayleigh_beta = 2e-3;
  s.constrain_collisions = constrain;
  const double ground = 0.9 - 0.05;
  s.colliders.push_back(StaticCollider::plane(Vec3(0, 0, ground), Vec3::UnitZ(), 0.3));
  SchroederStepper st(*b.model, b.materials, b.surface, {}, kGravity, s);
  Eigen::VectorXd x = stacked(b.mesh.vertices), v = Eigen::VectorXd::Zero(x.size()), f;
  for (int i = 0; i < 72; ++i) st.step(x, v);
  b.model->gradient(x, f);
  Rest r;
  double weight = 0.0, lo = kNever, hi = -kNever;
  for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
    const double m = b.model->lumped_mass()[a];
    const Vec3 net = -f.segment<3>(3 * a) + m * kGravity;  // f = ∇E
    weight += m * kGravity.norm();
    r.kinetic += 0.5 * m * v.segment<3>(3 * a).squaredNorm();
    lo = std::min(lo, x[3 * a + 2]);
    hi = std::max(hi, x[3 * a + 2]);
    if (x[3 * a + 2] < ground + 1e-9)
      r.reaction -= net.z();
    else
      r.worst = std::max(r.worst, net.norm());
  }
  r.reaction /= weight;
  r.worst /= weight;
  r.extent = hi - lo;
  return r;
}

Vec3 centre_velocity(const Ball& b, const Eigen::VectorXd& v) {
  const auto& m = b.model->lumped_mass();
  return test::momentum(*b.model, v) / std::accumulate(m.begin(), m.end(), 0.0);
}

}  // namespace

TEST_CASE("schroeder §6 constraints: a ball resting on the ground at frame steps is in static "
          "equilibrium") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    CAPTURE(static_cast<int>(kind));
    const Rest r = settle(kind, true);
    CAPTURE(r.extent);
    // The ground carries the weight, every other particle is balanced, nothing moves.
    CHECK(r.reaction == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(r.worst < 1e-6);
    CHECK(r.kinetic < 1e-12);
    CHECK(r.extent > 0.195);  // 200 mm across at rest: a few mm of squash
    // The response of §6 as printed (after the solve) does not rest: at 1/24 s the
    // solve lets the bottom particles sink into the ground every frame and the ball
    // ends flattened and out of balance (the linear ball 138 mm high).
    const Rest paper = settle(kind, false);
    CAPTURE(paper.extent);
    CHECK(std::abs(paper.reaction - 1.0) > 0.1);
    CHECK(paper.worst > 0.01);
  }
}

TEST_CASE("schroeder §6 constraints: landing exactly, inside the friction cone") {
  const Ball b = make_ball(FemKind::Corotational);
  SchroederSettings s;
  s.scheme = SchroederScheme::SemiImplicit;
  s.frame_dt = 1.0 / 24.0;
  s.rayleigh_beta = 2e-3;
  const double ground = 0.9 - 0.001;
  const double mu = 0.3;
  s.colliders.push_back(StaticCollider::plane(Vec3(0, 0, ground), Vec3::UnitZ(), mu));
  SchroederStepper st(*b.model, b.materials, b.surface, {}, kGravity, s);
  Eigen::VectorXd x = stacked(b.mesh.vertices), v = Eigen::VectorXd::Zero(x.size()), w;
  for (Eigen::Index i = 0; i < x.size(); i += 3) {
    v[i] = 1.5;  // sliding along x, 1 mm above the ground
  }
  int sticking = 0, sliding = 0, held = 0;
  double held_ratio = 0.0;  // the largest |J_t| / μ J_n of a held contact
  const int steps = static_cast<int>(0.5 / st.substep());
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t limit = st.counters().contact_round_limit;
    st.position_update(x, v, w);
    // (An update that stopped at the round limit leaves its last changes unsolved.)
    for (const auto& k : st.counters().contact_round_limit == limit
                             ? st.contacts()
                             : std::vector<SchroederStepper::Contact>{}) {
      const Vec3 end = x.segment<3>(3 * k.vertex) + st.substep() * w.segment<3>(3 * k.vertex);
      CHECK(std::abs(end.z() - ground) < 1e-12);  // lands on the plane
      CHECK(k.impulse >= 0.0);  // pushes
      if (k.stick) {
        ++sticking;
        // A contact held after its kinetic friction reversed its slide sticks for the
        // rest of the update, maybe beyond the cone (docs/schroeder.md,
        // decision 11).
        if (k.held) {
          ++held;
          held_ratio = std::max(held_ratio, k.tangential.norm() / (mu * k.impulse));
        } else {
          CHECK(k.tangential.norm() <= mu * k.impulse * (1 + 1e-9) + 1e-18);
        }
        CHECK(w.segment<2>(3 * k.vertex).norm() < 1e-12);  // no tangential drift
      } else if (k.friction != Vec3::Zero()) {
        ++sliding;
        // μ J_n, J_n of the previous round (it lags one solve).
        CHECK(k.friction.norm() == doctest::Approx(mu * k.impulse).epsilon(0.05));
        // Kinetic friction opposes the slide.
        CHECK(k.friction.dot(w.segment<3>(3 * k.vertex)) <= 1e-15);
      }
    }
    x += st.substep() * w;
    st.velocity_update(x, v);
    // While it slides (a rigid ball starts rolling after 2 v₀ / 7 μ g = 0.146 s) the
    // friction impulse is μ times the normal one: Δv_x = −μ (g t + Δv_z).
    if (step == static_cast<int>(0.1 / st.substep())) {
      const Vec3 vc = centre_velocity(b, v);
      const double t = (step + 1) * st.substep();
      CHECK(vc.x() == doctest::Approx(1.5 - mu * (9.81 * t + vc.z())).epsilon(0.01));
    }
    for (Eigen::Index a = 0; a < x.size() / 3; ++a) CHECK(x[3 * a + 2] >= ground - 1e-12);
  }
  CHECK(sticking > 0);
  CHECK(sliding > 0);
  MESSAGE(fmt::format("{} sticking contacts, {} held, |J_t| ≤ {:.3f} μ J_n; {} sliding", sticking, held,
                      held_ratio, sliding));
  // Measured: 32 of 1721 held, at most 1.42 μ J_n — J_n of the round before, which the
  // sliding solve's friction used, was larger.
  CHECK(held < sticking / 20);
  CHECK(held_ratio < 1.5);
  CHECK(st.counters().contact_round_limit < steps / 100);
  // Friction turned the slide into rolling: at most 5/7 of the 1.5 m/s are left (a
  // rigid ball keeps 5/7; this faceted, soft one loses more, rolling over its facets).
  CHECK(centre_velocity(b, v).x() < 1.5 * 5.0 / 7.0);
}

TEST_CASE("schroeder §6: a ball dropped on a sphere, a capsule and a box stays outside them") {
  const std::vector<StaticCollider> bodies = {
      StaticCollider::sphere(Vec3(0.3, -0.2, 0.6), 0.2, 0.5),
      StaticCollider::capsule(Vec3(0.0, -0.25, 0.75), Vec3(0.6, -0.15, 0.75), 0.05, 0.5),
      StaticCollider::box(Vec3(0.1, -0.4, 0.5), Vec3(0.5, 0.0, 0.85), 0.5)};
  for (const StaticCollider& body : bodies) {
    for (SchroederScheme scheme : {SchroederScheme::FullyImplicit, SchroederScheme::Asynchronous}) {
      // (the asynchronous scheme's substeps on one shape: they cost the test's time)
      if (scheme == SchroederScheme::Asynchronous && body.shape != StaticCollider::Shape::Sphere)
        continue;
      CAPTURE(body.shape_name());
      CAPTURE(static_cast<int>(scheme));
      const Ball b = make_ball(FemKind::Corotational);
      SchroederSettings s;
      s.scheme = scheme;
      s.frame_dt = 1.0 / 24.0;
      s.rayleigh_beta = 2e-3;
      s.colliders = {body};
      SchroederStepper st(*b.model, b.materials, b.surface, {}, kGravity, s);
      Eigen::VectorXd x = stacked(b.mesh.vertices), v = Eigen::VectorXd::Zero(x.size());
      double deepest = kNever, centre_gap = kNever;
      const int steps = static_cast<int>(std::lround(0.4 / st.substep()));
      for (int i = 0; i < steps; ++i) {
        st.step(x, v);
        Vec3 c = Vec3::Zero();
        for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
          deepest = std::min(deepest, body.closest(x.segment<3>(3 * a)).distance);
          c += x.segment<3>(3 * a);
        }
        centre_gap = std::min(centre_gap, body.closest(c / double(x.size() / 3)).distance);
      }
      CHECK(st.counters().collisions > 0);
      CHECK(deepest > -1e-12);  // never inside
      // Held off: the ball's centre stays well away from the surface, squashed by the
      // landing (the asynchronous ball's core lags: up to 37 % here) but not pushed
      // through (it may roll off the sphere and the bar: balanced on top is unstable).
      CHECK(centre_gap > 0.05);
    }
  }
}

}  // namespace clockwork
