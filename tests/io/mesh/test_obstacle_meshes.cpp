// Obstacle meshes: closed, consistently outward-oriented, on their surfaces, with the
// analytic volume to the tessellation's accuracy; bad arguments are named.
#include <doctest/doctest.h>

#include <map>
#include <numbers>
#include <stdexcept>

#include "io/mesh/obstacle_meshes.hpp"
#include "tests/support/errors.hpp"

namespace clockwork {
namespace {

/// Every directed edge appears once and its reverse once: closed and consistently
/// oriented.
bool watertight(const TriangleMesh& m) {
  std::map<std::pair<Index, Index>, int> directed;
  for (const auto& t : m.triangles)
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  for (const auto& [e, count] : directed)
    if (count != 1 || directed.count({e.second, e.first}) != 1) return false;
  return true;
}

double volume(const TriangleMesh& m) {
  double v = 0;
  for (const auto& t : m.triangles)
    v += m.vertices[t[0]].dot(m.vertices[t[1]].cross(m.vertices[t[2]])) / 6.0;
  return v;
}

constexpr double pi = std::numbers::pi;

TEST_CASE("sphere: closed, outward, on the sphere, volume within 2%") {
  const Vec3 c(0.3, -0.2, 1.0);
  const TriangleMesh m = make_sphere(c, 0.5, 3);
  CHECK(m.triangles.size() == 20 * 64);
  CHECK(m.vertices.size() == 642);
  CHECK(watertight(m));
  for (const Vec3& x : m.vertices) CHECK((x - c).norm() == doctest::Approx(0.5));
  CHECK(volume(m) == doctest::Approx(4.0 / 3.0 * pi * 0.125).epsilon(0.02));
}

TEST_CASE("cylinder: capped is closed with volume within 2%, every vertex at the radius") {
  const Vec3 base(1, 2, 3), axis = Vec3(1, 1, 0).normalized();
  const TriangleMesh m = make_cylinder(base, axis, 0.2, 1.5, 48, 3, true);
  CHECK(watertight(m));
  CHECK(volume(m) == doctest::Approx(pi * 0.04 * 1.5).epsilon(0.02));
  for (const Vec3& x : m.vertices) {
    const Vec3 r = (x - base) - (x - base).dot(axis) * axis;
    CHECK((r.norm() == doctest::Approx(0.2) || r.norm() < 1e-12));
  }
  const TriangleMesh open = make_cylinder(base, axis, 0.2, 1.5, 16, 2, false);
  CHECK(open.triangles.size() == 2 * 16 * 2);
  CHECK_FALSE(watertight(open));
}

TEST_CASE("capsule: closed, outward, volume within 2%") {
  const Vec3 a(0, 0, 0), b(0, 0, 1);
  const TriangleMesh m = make_capsule(a, b, 0.25, 48, 12);
  CHECK(watertight(m));
  const double exact = pi * 0.0625 * 1.0 + 4.0 / 3.0 * pi * 0.25 * 0.25 * 0.25;
  CHECK(volume(m) == doctest::Approx(exact).epsilon(0.02));
  for (const Vec3& x : m.vertices) {
    const double t = std::clamp(x.z(), 0.0, 1.0);
    CHECK((x - Vec3(0, 0, t)).norm() == doctest::Approx(0.25));
  }
}

TEST_CASE("ground: the square's area, normals up") {
  const TriangleMesh m = make_ground(Vec3(0, 0, -1), 2.0, 5);
  double area = 0;
  for (const auto& t : m.triangles) {
    const Vec3 n = (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]);
    CHECK(n.z() > 0);
    area += 0.5 * n.norm();
  }
  CHECK(area == doctest::Approx(16.0));
  for (const Vec3& x : m.vertices) CHECK(x.z() == -1.0);
}

TEST_CASE("bad obstacle arguments name the parameter and the value") {
  CHECK(test::what_thrown([] { make_sphere(Vec3::Zero(), -1.0, 2); }) == "radius: must be > 0, got -1");
  CHECK(test::what_thrown([] { make_ground(Vec3::Zero(), 1.0, 0); }) == "divisions: must be >= 1, got 0");
  CHECK(test::what_thrown([] { make_cylinder(Vec3::Zero(), Vec3::UnitZ(), 1, 0.0, 8, 1, true); }) ==
        "length: must be > 0, got 0");
  CHECK(test::what_thrown([] { make_cylinder(Vec3::Zero(), Vec3::UnitZ(), 1, 1, 2, 1, true); }) ==
        "segments: must be >= 3, got 2");
  CHECK(test::what_thrown([] { make_capsule(Vec3::Zero(), Vec3::Zero(), 1, 8, 2); }).find("b: must differ") == 0);
}

}  // namespace
}  // namespace clockwork
