#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "io/mesh/mesh.hpp"

using namespace clockwork;

namespace {
/// Every triangle has positive area and the normal +axis_u × axis_v; every interior
/// edge is used once in each direction (consistent orientation, manifold).
void check_oriented_surface(const TriangleMesh& m, const Vec3& normal) {
  std::map<std::pair<Index, Index>, int> directed;
  for (const auto& t : m.triangles) {
    const Vec3 n = (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]);
    CHECK(n.dot(normal) > 0);
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  }
  for (const auto& [e, count] : directed) CHECK(count == 1);
}
}  // namespace

TEST_CASE("grid: vertex numbering, counts, orientation, hinges") {
  const TriangleMesh m = make_grid(2.0, 1.0, 4, 2, Vec3(0, 0, 1), Vec3::UnitX(), Vec3::UnitY());
  CHECK(m.vertices.size() == 15);
  CHECK(m.triangles.size() == 16);
  CHECK(m.vertices[0].isApprox(Vec3(-1, -0.5, 1)));
  CHECK(m.vertices[14].isApprox(Vec3(1, 0.5, 1)));
  check_oriented_surface(m, Vec3::UnitZ());
  // Interior edges: E = 3F/2 − boundary/2; boundary edges 2(4 + 2) = 12 → (48 − 12)/2.
  CHECK(interior_hinges(m).size() == 18);
  for (const auto& h : interior_hinges(m)) {
    // x2 is opposite the edge (x0, x1) in a counter-clockwise triangle (x0, x1, x2).
    const Vec3 n = (m.vertices[h[1]] - m.vertices[h[0]]).cross(m.vertices[h[2]] - m.vertices[h[0]]);
    CHECK(n.z() > 0);
  }
}

TEST_CASE("disk: ring structure, Euler characteristic 1, orientation") {
  const TriangleMesh m = make_disk(0.5, 5, Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY());
  CHECK(m.vertices.size() == 1 + 3 * 5 * 6);  // 1 + Σ 6r
  check_oriented_surface(m, Vec3::UnitZ());
  const std::size_t boundary = 30, interior = interior_hinges(m).size();
  const long long euler = static_cast<long long>(m.vertices.size()) -
                          static_cast<long long>(boundary + interior) +
                          static_cast<long long>(m.triangles.size());
  CHECK(euler == 1);
}

TEST_CASE("hat: profile rings, a disk's topology, outward normals, no degenerate triangle") {
  // Crown radius 0.1, height 0.08, brim 0.18, 12 segments: arc 0.0524 m, so the top
  // has 2 rings, the wall 2 and the brim 2 (lengths 0.1, 0.08, 0.08).
  const Vec3 c(1, 2, 3);
  const TriangleMesh m = make_hat(c, Vec3::UnitX(), Vec3::UnitY(), 0.1, 0.08, 0.18, 12);
  CHECK(m.vertices.size() == 1 + 12 * 6);
  CHECK(m.triangles.size() == 12 + 2 * 12 * 5);
  CHECK(m.vertices[0].isApprox(c + Vec3(0, 0, 0.08)));  // the pole: top centre
  // Every vertex lies on the profile: top (z = 0.08, r <= 0.1), wall (r = 0.1) or
  // brim (z = 0, r >= 0.1).
  for (const Vec3& x : m.vertices) {
    const double r = std::hypot(x.x() - c.x(), x.y() - c.y()), z = x.z() - c.z();
    const bool top = std::abs(z - 0.08) < 1e-12 && r <= 0.1 + 1e-12;
    const bool wall = std::abs(r - 0.1) < 1e-12 && z >= -1e-12 && z <= 0.08 + 1e-12;
    const bool brim = std::abs(z) < 1e-12 && r >= 0.1 - 1e-12 && r <= 0.18 + 1e-12;
    CHECK((top || wall || brim));
  }
  std::map<std::pair<Index, Index>, int> directed;
  double min_area = 1.0;
  for (const auto& t : m.triangles) {
    const Vec3 a = m.vertices[t[0]], b = m.vertices[t[1]], d = m.vertices[t[2]];
    const Vec3 n = (b - a).cross(d - a);
    min_area = std::min(min_area, 0.5 * n.norm());
    // Outward: up on the top and brim, away from the axis on the wall.
    const Vec3 mid = (a + b + d) / 3.0 - c;
    const Vec3 radial(mid.x(), mid.y(), 0.0);
    CHECK(n.dot(Vec3::UnitZ()) + n.dot(radial.normalized()) > 0);
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  }
  for (const auto& [e, count] : directed) CHECK(count == 1);  // consistently oriented
  CHECK(min_area > 1e-4);
  const std::size_t boundary = 12, interior = interior_hinges(m).size();
  const long long euler = static_cast<long long>(m.vertices.size()) -
                          static_cast<long long>(boundary + interior) +
                          static_cast<long long>(m.triangles.size());
  CHECK(euler == 1);  // a disk: one boundary loop (the brim's rim)
}

TEST_CASE("chain: segments and edges") {
  const TriangleMesh m = make_chain(Vec3::Zero(), Vec3(3, 0, 0), 3);
  CHECK(m.vertices.size() == 4);
  CHECK(m.edges.size() == 3);
  CHECK(m.vertices[2].isApprox(Vec3(2, 0, 0)));
}
