// RigidRotation (integrators/solvers/rigid_rotation.hpp): the rotation ω × (x − C) solved from
// I ω = −excess sets the angular momentum about the mass centre to the target and
// leaves the linear momentum alone, on random point clouds with random masses and
// velocities; likewise on a subset of the points, and (I + B) ω = −excess when the
// rotation also moves later kicks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "integrators/solvers/rigid_rotation.hpp"

namespace clockwork {
namespace {

struct Cloud {
  std::vector<double> m;  ///< kg
  Eigen::VectorXd x, v;   ///< 3n: m, m/s
};

/// n points in a 2 m box around (30, −20, 50) m, masses 0.01 .. 2 kg, velocities up to
/// 3 m/s per component.
Cloud random_cloud(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), mass(0.01, 2.0);
  Cloud c;
  c.x.resize(3 * static_cast<Eigen::Index>(n));
  c.v.resize(c.x.size());
  const Vec3 offset(30.0, -20.0, 50.0);
  for (std::size_t a = 0; a < n; ++a) {
    c.m.push_back(mass(rng));
    for (int i = 0; i < 3; ++i) {
      c.x[3 * a + i] = offset[i] + unit(rng);
      c.v[3 * a + i] = 3.0 * unit(rng);
    }
  }
  return c;
}

struct Momenta {
  Vec3 P = Vec3::Zero();  ///< Σ m v
  Vec3 L = Vec3::Zero();  ///< Σ m (x − C) × v
  double p_scale = 0.0;   ///< Σ m |v|
  double l_scale = 0.0;   ///< Σ |m (x − C) × v|
};

/// The momenta of the points `each` passes, L about `centre`.
template <class ForEach>
Momenta momenta(const Cloud& c, const Vec3& centre, ForEach each) {
  Momenta out;
  each([&](std::size_t a) {
    const Vec3 p = c.m[a] * Vec3(c.v.segment<3>(3 * a));
    const Vec3 l = Vec3(c.x.segment<3>(3 * a) - centre).cross(p);
    out.P += p;
    out.L += l;
    out.p_scale += p.norm();
    out.l_scale += l.norm();
  });
  return out;
}

auto every(std::size_t n) {
  return [n](auto&& f) {
    for (std::size_t a = 0; a < n; ++a) f(a);
  };
}

TEST_CASE("rigid rotation: L about the mass centre becomes the target, P unchanged") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Cloud c = random_cloud(5 + 7 * seed, seed);
    const auto all = every(c.m.size());
    RigidRotation turn;
    REQUIRE(turn.fit(c.m, c.x));
    const Momenta before = momenta(c, turn.centre(), all);
    std::mt19937_64 rng(1000 + seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const Vec3 target = before.l_scale * Vec3(unit(rng), unit(rng), unit(rng));
    REQUIRE(turn.solve(before.L - target));
    turn.add_velocity(c.x, c.v);
    const Momenta after = momenta(c, turn.centre(), all);
    CAPTURE(seed);
    CAPTURE(after.L.transpose());
    CAPTURE(target.transpose());
    // Relative to the largest of the sums involved (their rounding is the floor).
    const double l_scale = std::max({target.norm(), before.l_scale, after.l_scale});
    CHECK((after.L - target).norm() <= 1e-12 * l_scale);
    CHECK((after.P - before.P).norm() <= 1e-12 * std::max(before.p_scale, after.p_scale));
  }
}

TEST_CASE("rigid rotation: on a subset, about its own mass centre, other points untouched") {
  Cloud c = random_cloud(60, 77);
  const auto odd = [](auto&& f) {
    for (std::size_t a = 1; a < 60; a += 2) f(a);
  };
  const Eigen::VectorXd v_before = c.v;
  RigidRotation turn;
  REQUIRE(turn.fit(c.m, c.x, odd));
  const Momenta before = momenta(c, turn.centre(), odd);
  // Target zero: the torque-free change the integrators make of an internal impulse.
  REQUIRE(turn.solve(before.L));
  turn.add_velocity(c.x, c.v, odd);
  const Momenta after = momenta(c, turn.centre(), odd);
  CAPTURE(after.L.transpose());
  CHECK(after.L.norm() <= 1e-12 * std::max(before.l_scale, after.l_scale));
  CHECK((after.P - before.P).norm() <= 1e-12 * std::max(before.p_scale, after.p_scale));
  for (std::size_t a = 0; a < 60; a += 2)
    CHECK(c.v.segment<3>(3 * a) == v_before.segment<3>(3 * a));
}

TEST_CASE("rigid rotation: the pieces agree with fit, and (I + B) omega = -excess") {
  Cloud c = random_cloud(30, 5);
  RigidRotation whole, pieces;
  REQUIRE(whole.fit(c.m, c.x));
  for (std::size_t a = 0; a < c.m.size(); ++a) pieces.add_mass(c.m[a], c.x.segment<3>(3 * a));
  REQUIRE(pieces.set_centre());
  for (std::size_t a = 0; a < c.m.size(); ++a)
    pieces.add_inertia(c.m[a], pieces.arm(c.x.segment<3>(3 * a)));
  CHECK(pieces.centre() == whole.centre());
  CHECK(pieces.inertia() == whole.inertia());
  double total = 0.0;
  for (double m : c.m) total += m;
  CHECK(whole.total_mass() == doctest::Approx(total).epsilon(1e-15));
  // A non-symmetric B of the size of I's terms.
  Mat3 B;
  B << 0.3, -0.1, 0.2, 0.05, -0.2, 0.1, 0.4, 0.0, 0.1;
  B *= whole.inertia().norm();
  const Vec3 excess(1.5, -0.5, 2.0);
  REQUIRE(whole.solve(excess, B));
  CHECK(((whole.inertia() + B) * whole.omega() + excess).norm() <= 1e-12 * excess.norm());
  CHECK(whole.velocity(c.x.segment<3>(0)) ==
        whole.omega().cross(Vec3(c.x.segment<3>(0) - whole.centre())));
}

TEST_CASE("rigid rotation: a massless set has no centre") {
  RigidRotation turn;
  CHECK_FALSE(turn.set_centre());
  const std::vector<double> m(4, 0.0);
  CHECK_FALSE(turn.fit(m, Eigen::VectorXd::Ones(12)));
}

}  // namespace
}  // namespace clockwork
