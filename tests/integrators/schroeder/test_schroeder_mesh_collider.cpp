// The triangle-mesh §6 collider (contact/obstacles/mesh_collider.hpp): its tree
// query against an independent scan of every triangle (contact/distance's closest
// point), its sign against the inside of convex closed meshes (behind every face
// plane) and the one-sided rule of an open sheet, its offset surface, and its refusals.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <memory>
#include <random>
#include <string>

#include "contact/distance/distance.hpp"
#include "contact/obstacles/mesh_collider.hpp"
#include "io/mesh/mesh.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "tests/support/errors.hpp"

namespace clockwork {
namespace {

/// The nearest surface distance by a scan of every triangle, and whether x is behind
/// every face's plane (inside a convex closed mesh).
struct MeshTruth {
  double distance = kNever;
  bool behind_all = true;
};

MeshTruth mesh_truth(const TriangleMesh& m, const Vec3& x) {
  MeshTruth t;
  for (const auto& tri : m.triangles) {
    const Vec3 &a = m.vertices[tri[0]], &b = m.vertices[tri[1]], &c = m.vertices[tri[2]];
    const Vec3 w = closest_point_triangle(x, a, b, c);  // barycentric
    t.distance = std::min(t.distance, (w[0] * a + w[1] * b + w[2] * c - x).norm());
    t.behind_all = t.behind_all && (b - a).cross(c - a).dot(x - a) < 0.0;
  }
  return t;
}

/// A closed cube [lo, hi], triangles counter-clockwise seen from outside; each face
/// with its own four corners (as an OBJ with split corners: the collider welds them).
TriangleMesh split_cube(const Vec3& lo, const Vec3& hi) {
  TriangleMesh m;
  const auto corner = [&](int i) { return Vec3(i & 1 ? hi.x() : lo.x(), i & 2 ? hi.y() : lo.y(), i & 4 ? hi.z() : lo.z()); };
  // Faces as corner quadruples, counter-clockwise from outside.
  const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& f : faces) {
    const Index first = static_cast<Index>(m.vertices.size());
    for (int k : f) m.vertices.push_back(corner(k));
    m.triangles.push_back({first, first + 1, first + 2});
    m.triangles.push_back({first, first + 2, first + 3});
  }
  return m;
}

MeshCollider collider_of(const TriangleMesh& m, double band = 0.0) {
  return MeshCollider(m.vertices, m.triangles, band);
}

/// The answer's own consistency: a unit normal and x = point + distance · normal.
void check_consistent(const StaticCollider::Closest& c, const Vec3& x) {
  CHECK(std::abs(c.normal.norm() - 1.0) < 1e-12);
  CHECK((c.point + c.distance * c.normal - x).norm() < 1e-12);
}

}  // namespace

TEST_CASE("mesh collider: closed sphere and cube meshes match brute force, signed by their inside") {
  const TriangleMesh sphere = make_sphere(Vec3(0.1, -0.2, 0.3), 0.25, 3);
  const TriangleMesh cube = split_cube(Vec3(-0.2, -0.1, 0.0), Vec3(0.3, 0.2, 0.15));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.7);
  for (const TriangleMesh* m : {&sphere, &cube}) {
    const MeshCollider c = collider_of(*m);
    CHECK(c.closed());
    int inside = 0;
    for (int i = 0; i < 3000; ++i) {
      // Every third point near the surface: a random surface point nudged by ±1 mm.
      Vec3 x(u(rng), u(rng), u(rng));
      if (i % 3 == 0) {
        const auto& tri = m->triangles[rng() % m->triangles.size()];
        const double s = 0.5 * (u(rng) + 0.5) / 1.2, t = 0.5 * (u(rng) + 0.5) / 1.2;
        x = m->vertices[tri[0]] + s * (m->vertices[tri[1]] - m->vertices[tri[0]]) +
            t * (m->vertices[tri[2]] - m->vertices[tri[0]]) + 1e-3 * Vec3(u(rng), u(rng), u(rng));
      }
      CAPTURE(x.transpose());
      const MeshTruth truth = mesh_truth(*m, x);
      const StaticCollider::Closest got = c.closest(x);
      CHECK(std::abs(std::abs(got.distance) - truth.distance) < 1e-12);
      CHECK((got.distance < 0.0) == truth.behind_all);
      CHECK(std::abs(got.distance - c.closest_brute_force(x).distance) < 1e-12);
      check_consistent(got, x);
      inside += truth.behind_all;
    }
    CHECK(inside > 300);  // both signs were tried
  }
}

TEST_CASE("mesh collider: a closed mesh facing inward is turned outward") {
  TriangleMesh cube = split_cube(Vec3::Zero(), Vec3::Ones());
  const MeshCollider outward = collider_of(cube);
  for (auto& t : cube.triangles) std::swap(t[1], t[2]);
  const MeshCollider inward = collider_of(cube);
  CHECK(inward.closed());
  for (const Vec3& x : {Vec3(0.5, 0.5, 0.4), Vec3(0.5, 0.5, 1.2), Vec3(0.98, 0.02, 0.5), Vec3(1.1, 1.1, 1.1)}) {
    CAPTURE(x.transpose());
    CHECK(inward.closest(x).distance == doctest::Approx(outward.closest(x).distance).epsilon(1e-14));
    CHECK((inward.closest(x).normal - outward.closest(x).normal).norm() < 1e-12);
  }
  CHECK(outward.closest(Vec3(0.5, 0.5, 0.4)).distance == doctest::Approx(-0.4));
  // Under an edge, inside: the nearer face's normal.
  CHECK((outward.closest(Vec3(0.98, 0.5, 0.01)).normal - Vec3(0, 0, -1)).norm() < 1e-12);
}

TEST_CASE("mesh collider: an open grid is one-sided along its normals within its band") {
  // 1 m × 1 m at z = 0.2, normal +z; its band: half its largest extent (0.5 m).
  const TriangleMesh grid = make_grid(1.0, 1.0, 7, 5, Vec3(0, 0, 0.2), Vec3::UnitX(), Vec3::UnitY());
  const MeshCollider c = collider_of(grid);
  CHECK_FALSE(c.closed());
  CHECK(c.band() == doctest::Approx(0.5));
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.8, 0.8);
  int behind = 0, beyond = 0;
  for (int i = 0; i < 3000; ++i) {
    const Vec3 x(u(rng), u(rng), 0.2 + u(rng));
    CAPTURE(x.transpose());
    const MeshTruth truth = mesh_truth(grid, x);
    const StaticCollider::Closest got = c.closest(x);
    CHECK(std::abs(std::abs(got.distance) - truth.distance) < 1e-12);
    CHECK(std::abs(got.distance - c.closest_brute_force(x).distance) < 1e-12);
    check_consistent(got, x);
    // Inside: under the sheet (over its square, not beside it), at most the band deep.
    const bool over = std::abs(x.x()) < 0.5 && std::abs(x.y()) < 0.5;
    const bool expected = over && x.z() < 0.2 && 0.2 - x.z() <= 0.5;
    CHECK((got.distance < 0.0) == expected);
    if (expected) CHECK((got.normal - Vec3::UnitZ()).norm() < 1e-12);  // pushed up
    behind += expected;
    beyond += over && x.z() < -0.3;
  }
  CHECK(behind > 300);
  CHECK(beyond > 50);
  // A given band.
  CHECK(collider_of(grid, 0.05).closest(Vec3(0.1, 0.1, 0.1)).distance == doctest::Approx(0.1));
  CHECK(collider_of(grid, 0.15).closest(Vec3(0.1, 0.1, 0.1)).distance == doctest::Approx(-0.1));
}

TEST_CASE("mesh collider: grown, its offset surface, and as a StaticCollider") {
  const TriangleMesh cube = split_cube(Vec3::Zero(), Vec3::Ones());
  const StaticCollider body = StaticCollider::from_mesh(std::make_shared<const MeshCollider>(collider_of(cube)), 0.3);
  validate_static_collider(body);
  CHECK(body.shape_name() == "mesh");
  const StaticCollider grown = body.grown(0.01);
  CHECK(grown.friction == 0.3);
  for (const Vec3& x : {Vec3(0.5, 0.5, 1.005), Vec3(0.5, 0.5, 0.9), Vec3(1.005, 1.005, 1.005), Vec3(2, 0.5, 0.5)}) {
    CAPTURE(x.transpose());
    const StaticCollider::Closest a = body.closest(x), b = grown.closest(x);
    CHECK(b.distance == doctest::Approx(a.distance - 0.01).epsilon(1e-14));
    CHECK((b.normal - a.normal).norm() < 1e-12);
    check_consistent(b, x);
  }
  // 5 mm above the top, inside the grown body by 5 mm: pushed up to z = 1.01.
  CHECK(grown.closest(Vec3(0.5, 0.5, 1.005)).point.z() == doctest::Approx(1.01));
  // Beside a corner: the grown body is rounded there.
  const StaticCollider::Closest corner = grown.closest(Vec3(1.005, 1.005, 1.005));
  CHECK((corner.normal - Vec3::Ones().normalized()).norm() < 1e-9);
  CHECK(corner.distance == doctest::Approx(std::sqrt(3.0) * 0.005 - 0.01));
}

TEST_CASE("mesh collider: bad meshes are refused with the problem named") {
  const std::vector<Vec3> x = {Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY()};
  const auto error = [](std::vector<Vec3> v, std::vector<std::array<Index, 3>> t, double band = 0.0) {
    return test::what_thrown([&] { MeshCollider(std::move(v), t, band); });
  };
  CHECK(error(x, {}) == "mesh collider: no triangle");
  CHECK(error(x, {{0, 1, 3}}) == "mesh collider: triangle 0 holds vertex 3, out of range (0..3)");
  CHECK(error({Vec3::Zero(), Vec3(NAN, 0, 0), Vec3::UnitY()}, {{0, 1, 2}}) ==
        "mesh collider: vertex 1 has a non-finite coordinate");
  CHECK(error({Vec3::Zero(), Vec3::UnitX(), Vec3(2, 0, 0)}, {{0, 1, 2}}) ==
        "mesh collider: every triangle is degenerate (zero area)");
  StaticCollider empty = StaticCollider::from_mesh(nullptr);
  CHECK(test::what_thrown([&] { validate_static_collider(empty); }) == "mesh collider without a mesh");
  StaticCollider shrunk = StaticCollider::from_mesh(std::make_shared<const MeshCollider>(x, std::vector<std::array<Index, 3>>{{0, 1, 2}}));
  shrunk.radius = -1.0;
  CHECK(test::what_thrown([&] { validate_static_collider(shrunk); }) ==
        "mesh collider grown by -1 (must be non-negative)");
  // A degenerate triangle among good ones is left out, not refused.
  CHECK(MeshCollider({Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY(), Vec3(2, 0, 0)}, {{0, 1, 2}, {0, 1, 3}})
            .triangle_count() == 1);
}

}  // namespace clockwork
