// Schroeder et al. §6 collisions with static bodies (contact/obstacles/static_collider.hpp):
// the colliders' closest points against brute force and their validation. The
// contacts as constraints of whole implicit runs are in
// test_schroeder_contact_runs.cpp (label `slow`).
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "contact/obstacles/static_collider.hpp"
#include "tests/support/errors.hpp"

namespace clockwork {
namespace {

std::string error_of(const StaticCollider& c) {
  return test::what_thrown([&] { validate_static_collider(c); });
}

/// |signed distance| from x to the surface of `c` by brute force: the capsule from
/// 4001 points along its segment, the sphere and the box from points on their surface
/// (~2 mm apart for the sizes below).
double brute_distance(const StaticCollider& c, const Vec3& x) {
  double nearest = kNever;
  const int n = 200;
  switch (c.shape) {
    case StaticCollider::Shape::Sphere:
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 2 * n; ++j) {
          const double th = M_PI * (i + 0.5) / n, ph = M_PI * j / n;
          const Vec3 d(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
          nearest = std::min(nearest, (c.a + c.radius * d - x).norm());
        }
      return nearest;
    case StaticCollider::Shape::Capsule:
      for (int i = 0; i <= 4000; ++i)
        nearest = std::min(nearest, (c.a + (c.b - c.a) * (i / 4000.0) - x).norm());
      return std::abs(nearest - c.radius);
    case StaticCollider::Shape::Box:
      for (int k = 0; k < 3; ++k)
        for (int side = 0; side < 2; ++side)
          for (int i = 0; i <= n; ++i)
            for (int j = 0; j <= n; ++j) {
              Vec3 p;
              const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
              p[k] = side ? c.b[k] : c.a[k];
              p[k1] = c.a[k1] + (c.b[k1] - c.a[k1]) * i / n;
              p[k2] = c.a[k2] + (c.b[k2] - c.a[k2]) * j / n;
              nearest = std::min(nearest, (p - x).norm());
            }
      return nearest;
    case StaticCollider::Shape::Plane:
    case StaticCollider::Shape::Mesh: break;
  }
  return nearest;
}

bool inside(const StaticCollider& c, const Vec3& x) {
  if (c.shape == StaticCollider::Shape::Box)
    return (x.array() > c.a.array()).all() && (x.array() < c.b.array()).all();
  if (c.shape == StaticCollider::Shape::Sphere) return (x - c.a).norm() < c.radius;
  double nearest = kNever;  // capsule
  for (int i = 0; i <= 4000; ++i)
    nearest = std::min(nearest, (c.a + (c.b - c.a) * (i / 4000.0) - x).norm());
  return nearest < c.radius;
}

}  // namespace

TEST_CASE("static colliders: closest points agree with brute force") {
  const std::vector<StaticCollider> shapes = {
      StaticCollider::sphere(Vec3(0.1, -0.2, 0.3), 0.25),
      StaticCollider::capsule(Vec3(-0.2, 0, 0.1), Vec3(0.3, 0.1, 0.2), 0.1),
      StaticCollider::box(Vec3(-0.2, -0.1, 0.0), Vec3(0.3, 0.2, 0.15))};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  for (const StaticCollider& c : shapes) {
    CAPTURE(c.shape_name());
    CHECK(error_of(c) == "(no error)");
    for (int trial = 0; trial < 100; ++trial) {
      const Vec3 x(u(rng), u(rng), u(rng));
      const StaticCollider::Closest cl = c.closest(x);
      // The point is on the surface, the normal unit, x = point + distance · normal.
      CHECK(std::abs(c.closest(cl.point).distance) < 1e-12);
      CHECK(cl.normal.norm() == doctest::Approx(1.0).epsilon(1e-12));
      CHECK((cl.point + cl.distance * cl.normal - x).norm() < 1e-12);
      // |distance| is the distance to the surface (to the sampling resolution), and
      // negative inside.
      CHECK(std::abs(std::abs(cl.distance) - brute_distance(c, x)) < 4e-3);
      CHECK((cl.distance < 0.0) == inside(c, x));
    }
  }
  // A plane: signed distance along its normal.
  const StaticCollider plane = StaticCollider::plane(Vec3(0, 0, 1), Vec3(0, 0.6, 0.8));
  const StaticCollider::Closest cl = plane.closest(Vec3(1, 1, 1));
  CHECK(cl.distance == doctest::Approx(0.6).epsilon(1e-14));
  CHECK((cl.point - Vec3(1, 0.64, 0.52)).norm() < 1e-14);
}

TEST_CASE("static colliders: bad shapes are named") {
  CHECK(error_of(StaticCollider::plane(Vec3::Zero(), Vec3(0, 0, 2))) ==
        "collision plane normal (0, 0, 2) is not a unit vector");
  CHECK(error_of(StaticCollider::sphere(Vec3::Zero(), -1.0)) ==
        "sphere radius -1 must be positive");
  CHECK(error_of(StaticCollider::capsule(Vec3(1, 2, 3), Vec3(1, 2, 3), 0.1)) ==
        "capsule ends (1, 2, 3) and (1, 2, 3) coincide");
  CHECK(error_of(StaticCollider::box(Vec3(0, 0, 0), Vec3(1, 0, 1))) ==
        "box min (0, 0, 0) is not below max (1, 0, 1) in every coordinate");
  CHECK(error_of(StaticCollider::sphere(Vec3::Zero(), 1.0, -0.5)) ==
        "friction -0.5 must be non-negative");
  CHECK(error_of(StaticCollider::sphere(Vec3(0, NAN, 0), 1.0)) ==
        "sphere has a non-finite coordinate");
}

}  // namespace clockwork
