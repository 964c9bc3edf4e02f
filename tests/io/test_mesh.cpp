#include <doctest/doctest.h>

#include <map>

#include "io/mesh.hpp"

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

TEST_CASE("chain: segments and edges") {
  const TriangleMesh m = make_chain(Vec3::Zero(), Vec3(3, 0, 0), 3);
  CHECK(m.vertices.size() == 4);
  CHECK(m.edges.size() == 3);
  CHECK(m.vertices[2].isApprox(Vec3(2, 0, 0)));
}
