// The independent intersection checker: exact predicates on inputs that defeat plain
// floating point, closed triangle–triangle tests in every configuration, and the
// broad phase against brute force.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "contact/intersections/intersection_check.hpp"

namespace clockwork {
namespace {

TEST_CASE("orient3d is exact where floating point is not") {
  const double s = std::ldexp(1.0, -40);
  const Vec3 A(s, 0, 0), B(0, s, 0), C(0, 0, s);
  // Exactly coplanar large-offset points: (M+1, M, M), (M, M+1, M), (M, M, M+1) and
  // (M + 1/2, M + 1/2, M) lie on x + y + z = 3M + 1 (M = 2^30, all exact doubles).
  const double M = std::ldexp(1.0, 30);
  const Vec3 P(M + 1, M, M), Q(M, M + 1, M), R(M, M, M + 1), S(M + 0.5, M + 0.5, M);
  CHECK(orient3d_sign(P, Q, R, S) == 0);
  const Vec3 S_above(M + 0.5, M + 0.5, std::nextafter(M, 2 * M));
  const Vec3 S_below(M + 0.5, M + 0.5, std::nextafter(M, 0.0));
  CHECK(orient3d_sign(P, Q, R, S_above) == -orient3d_sign(P, Q, R, S_below));
  CHECK(orient3d_sign(P, Q, R, S_above) != 0);
  // Sign convention: d below the counter-clockwise plane a, b, c is positive.
  CHECK(orient3d_sign(A, B, C, Vec3::Zero()) == 1);
  CHECK(orient3d_sign(A, B, C, Vec3(s, s, s)) == -1);
  // 2D: three collinear points with coordinates 0.1 apart (not representable).
  const Eigen::Vector2d u(0.1, 0.1), v(0.2, 0.2), w(0.30000000000000004, 0.30000000000000004);
  CHECK(orient2d_sign(u, v, w) == 0);
  CHECK(orient2d_sign(u, v, Eigen::Vector2d(0.3, std::nextafter(0.3, 1.0))) ==
        -orient2d_sign(u, v, Eigen::Vector2d(std::nextafter(0.3, 1.0), 0.3)));
}

TEST_CASE("triangle-triangle: crossing, separated, touching, coplanar, degenerate") {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 1, 0);
  SUBCASE("piercing") {
    CHECK(triangles_intersect(a, b, c, Vec3(0.2, 0.2, -1), Vec3(0.3, 0.2, 1), Vec3(0.2, 0.3, 1)));
  }
  SUBCASE("separated by 1e-12") {
    const double e = 1e-12;
    CHECK_FALSE(triangles_intersect(a, b, c, Vec3(0, 0, e), Vec3(1, 0, e), Vec3(0, 1, 1)));
  }
  SUBCASE("touching at a vertex, along an edge, vertex on face") {
    CHECK(triangles_intersect(a, b, c, Vec3(1, 0, 0), Vec3(2, 0, 1), Vec3(2, 1, 0)));
    CHECK(triangles_intersect(a, b, c, Vec3(0, 0, 0.0), Vec3(1, 0, 0), Vec3(0, -1, 1)));
    CHECK(triangles_intersect(a, b, c, Vec3(0.25, 0.25, 0), Vec3(0.3, 0.3, 1), Vec3(0.2, 0.4, 1)));
  }
  SUBCASE("coplanar overlapping, contained and disjoint") {
    CHECK(triangles_intersect(a, b, c, Vec3(0.5, 0.5, 0), Vec3(-0.5, 0.2, 0), Vec3(0.2, -0.5, 0)));
    CHECK(triangles_intersect(a, b, c, Vec3(0.1, 0.1, 0), Vec3(0.2, 0.1, 0), Vec3(0.1, 0.2, 0)));
    CHECK(triangles_intersect(Vec3(0.1, 0.1, 0), Vec3(0.2, 0.1, 0), Vec3(0.1, 0.2, 0), a, b, c));
    CHECK_FALSE(triangles_intersect(a, b, c, Vec3(1, 1, 0), Vec3(2, 1, 0), Vec3(1, 2, 0)));
  }
  SUBCASE("degenerate triangles: a segment through a face, a point on a face") {
    CHECK(triangles_intersect(a, b, c, Vec3(0.2, 0.2, -1), Vec3(0.2, 0.2, 0), Vec3(0.2, 0.2, 1)));
    CHECK_FALSE(triangles_intersect(a, b, c, Vec3(2, 2, -1), Vec3(2, 2, 0), Vec3(2, 2, 1)));
    CHECK(triangles_intersect(a, b, c, Vec3(0.3, 0.3, 0), Vec3(0.3, 0.3, 0), Vec3(0.3, 0.3, 0)));
    CHECK_FALSE(triangles_intersect(a, b, c, Vec3(0.3, 0.3, 1e-300), Vec3(0.3, 0.3, 1e-300),
                                    Vec3(0.3, 0.3, 1e-300)));
    // Two collinear degenerate triangles overlapping on their common line.
    CHECK(triangles_intersect(a, b, Vec3(2, 0, 0), Vec3(1.5, 0, 0), Vec3(3, 0, 0), Vec3(4, 0, 0)));
    CHECK_FALSE(triangles_intersect(a, b, Vec3(2, 0, 0), Vec3(2.5, 0, 0), Vec3(3, 0, 0),
                                    Vec3(4, 0, 0)));
  }
}

std::set<std::pair<std::size_t, std::size_t>> brute_force(
    const std::vector<Vec3>& x, const std::vector<std::array<Index, 3>>& t) {
  std::set<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t j = i + 1; j < t.size(); ++j) {
      bool shared = false;
      for (Index a : t[i])
        for (Index b : t[j]) shared = shared || a == b;
      if (!shared && triangles_intersect(x[t[i][0]], x[t[i][1]], x[t[i][2]], x[t[j][0]],
                                         x[t[j][1]], x[t[j][2]]))
        out.emplace(i, j);
    }
  return out;
}

std::set<std::pair<std::size_t, std::size_t>> as_set(const std::vector<IntersectingPair>& v) {
  std::set<std::pair<std::size_t, std::size_t>> out;
  for (const auto& p : v) out.emplace(p.a, p.b);
  return out;
}

TEST_CASE("find_intersections: a flat grid is clean, a piercing triangle is found") {
  std::vector<Vec3> x;
  std::vector<std::array<Index, 3>> t;
  const int n = 10;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) x.emplace_back(0.1 * i, 0.1 * j, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const Index v0 = j * (n + 1) + i, v1 = v0 + 1, v2 = v0 + n + 1, v3 = v2 + 1;
      t.push_back({v0, v1, v3});
      t.push_back({v0, v3, v2});
    }
  CHECK(find_intersections(x, t).empty());
  const Index base = static_cast<Index>(x.size());
  x.emplace_back(0.33, 0.47, -0.5);
  x.emplace_back(0.36, 0.47, 0.5);
  x.emplace_back(0.61, 0.52, 0.5);
  t.push_back({base, base + 1, base + 2});
  const auto found = find_intersections(x, t);
  CHECK(!found.empty());
  CHECK(as_set(found) == brute_force(x, t));
  for (const auto& p : found) CHECK(p.b == t.size() - 1);
}

TEST_CASE("find_intersections equals brute force on a random soup of 300 triangles") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0), small(-0.08, 0.08);
  std::vector<Vec3> x;
  std::vector<std::array<Index, 3>> t;
  for (Index i = 0; i < 300; ++i) {
    const Vec3 c(u(rng), u(rng), u(rng));
    for (int k = 0; k < 3; ++k) x.push_back(c + Vec3(small(rng), small(rng), small(rng)));
    t.push_back({3 * i, 3 * i + 1, 3 * i + 2});
  }
  const auto expected = brute_force(x, t);
  CHECK(expected.size() > 10);
  CHECK(as_set(find_intersections(x, t)) == expected);
}

}  // namespace
}  // namespace clockwork
