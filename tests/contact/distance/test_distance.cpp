// Closest points of vertex–triangle and edge–edge pairs, degenerate cases included,
// checked against dense sampling and against the optimality conditions.
#include <doctest/doctest.h>

#include <random>

#include "contact/distance/distance.hpp"

namespace clockwork {
namespace {

/// Minimum distance over a dense sampling of both primitives (reference, O(n²)).
double sampled_distance(PairType type, const StencilPositions<4>& x, int n) {
  double best = kNever;
  if (type == PairType::VertexTriangle) {
    for (int i = 0; i <= n; ++i)
      for (int j = 0; i + j <= n; ++j) {
        const double u = double(i) / n, v = double(j) / n;
        const Vec3 q = (1 - u - v) * x.col(1) + u * x.col(2) + v * x.col(3);
        best = std::min(best, (x.col(0) - q).norm());
      }
  } else {
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j) {
        const double s = double(i) / n, t = double(j) / n;
        const Vec3 p = (1 - s) * x.col(0) + s * x.col(1);
        const Vec3 q = (1 - t) * x.col(2) + t * x.col(3);
        best = std::min(best, (p - q).norm());
      }
  }
  return best;
}

StencilPositions<4> random_stencil(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  StencilPositions<4> x;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) x(i, j) = u(rng);
  return x;
}

void check_weights(PairType type, const PairClosest& c) {
  const int split = type == PairType::VertexTriangle ? 1 : 2;
  double sa = 0, sb = 0;
  for (int i = 0; i < 4; ++i) {
    if (i < split) {
      CHECK(c.w[i] >= -1e-15);
      sa += c.w[i];
    } else {
      CHECK(c.w[i] <= 1e-15);
      sb += c.w[i];
    }
  }
  CHECK(sa == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(sb == doctest::Approx(-1.0).epsilon(1e-14));
}

void check_against_sampling(PairType type, const StencilPositions<4>& x) {
  const PairClosest c = pair_closest(type, x);
  check_weights(type, c);
  const int n = 200;
  const double sampled = sampled_distance(type, x, n);
  double size = 0;
  for (int j = 0; j < 4; ++j) size = std::max(size, x.col(j).norm());
  CAPTURE(x);
  // The exact minimum is below every sample and within the sampling resolution of
  // the best sample.
  CHECK(c.distance <= sampled + 1e-12);
  CHECK(c.distance >= sampled - 4.0 * size / n);
  CHECK((x * c.w - c.y).norm() <= 1e-15 * (1 + size));
}

TEST_CASE("pair_closest matches dense sampling on random pairs of both types") {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 200; ++k) {
    const StencilPositions<4> x = random_stencil(rng);
    check_against_sampling(PairType::VertexTriangle, x);
    check_against_sampling(PairType::EdgeEdge, x);
  }
}

TEST_CASE("triangle_pair_gap: the distance of two triangles, checked against dense sampling") {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int n = 60;
  int separated = 0;
  for (int k = 0; separated < 60; ++k) {
    StencilPositions<6> x;
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 3; ++i) x(i, j) = u(rng) + (j >= 3 && i == 2 ? 0.8 : 0.0);
    if (k % 5 == 1) x.col(2) = 0.5 * (x.col(0) + x.col(1));  // degenerate triangle A
    if (k % 5 == 3) x.col(4) = x.col(3), x.col(5) = x.col(3);  // B is a point
    // Sample both triangles on a barycentric grid (n per edge).
    std::vector<Vec3> pa, pb;
    for (int i = 0; i <= n; ++i)
      for (int j = 0; i + j <= n; ++j) {
        const double a = double(i) / n, b = double(j) / n;
        pa.push_back((1 - a - b) * x.col(0) + a * x.col(1) + b * x.col(2));
        pb.push_back((1 - a - b) * x.col(3) + a * x.col(4) + b * x.col(5));
      }
    double sampled = kNever;
    for (const Vec3& p : pa)
      for (const Vec3& q : pb) sampled = std::min(sampled, (p - q).norm());
    const TriangleGap g = triangle_pair_gap(x);
    double size = 0;
    for (int j = 0; j < 6; ++j) size = std::max(size, x.col(j).norm());
    if (sampled < 8.0 * size / n) continue;  // (nearly) intersecting: not a distance
    ++separated;
    CAPTURE(x);
    CHECK(g.distance <= sampled + 1e-12);
    CHECK(g.distance >= sampled - 4.0 * size / n);
    CHECK(g.y.norm() == doctest::Approx(g.distance).epsilon(1e-14));
  }
}

TEST_CASE("vertex-triangle closest feature: face, edge and vertex regions") {
  StencilPositions<4> x;
  x.col(1) = Vec3(0, 0, 0);
  x.col(2) = Vec3(1, 0, 0);
  x.col(3) = Vec3(0, 1, 0);
  SUBCASE("face interior") {
    x.col(0) = Vec3(0.25, 0.25, 0.5);
    const PairClosest c = pair_closest(PairType::VertexTriangle, x);
    CHECK(c.distance == doctest::Approx(0.5));
    CHECK(c.w[1] == doctest::Approx(-0.5));
    CHECK(c.w[2] == doctest::Approx(-0.25));
  }
  SUBCASE("edge region (hypotenuse)") {
    x.col(0) = Vec3(1, 1, 0);
    const PairClosest c = pair_closest(PairType::VertexTriangle, x);
    CHECK(c.distance == doctest::Approx(std::sqrt(0.5)));
    CHECK(c.w[1] == 0.0);
    CHECK(c.w[2] == doctest::Approx(-0.5));
  }
  SUBCASE("vertex region") {
    x.col(0) = Vec3(-1, -2, 2);
    const PairClosest c = pair_closest(PairType::VertexTriangle, x);
    CHECK(c.distance == doctest::Approx(3.0));
    CHECK(c.w[1] == -1.0);
  }
  SUBCASE("collinear (degenerate) triangle") {
    x.col(3) = Vec3(2, 0, 0);
    x.col(0) = Vec3(1.5, 1, 0);
    check_against_sampling(PairType::VertexTriangle, x);
    CHECK(pair_closest(PairType::VertexTriangle, x).distance == doctest::Approx(1.0));
  }
  SUBCASE("triangle collapsed to a point") {
    x.col(2) = x.col(1);
    x.col(3) = x.col(1);
    x.col(0) = Vec3(0, 0, 2);
    CHECK(pair_closest(PairType::VertexTriangle, x).distance == doctest::Approx(2.0));
  }
}

TEST_CASE("edge-edge: crossing, parallel, collinear and zero-length edges") {
  StencilPositions<4> x;
  SUBCASE("skew edges crossing above each other") {
    x << 0, 1, 0.5, 0.5,  //
        0, 0, -1, 1,      //
        0, 0, 0.3, 0.3;
    const PairClosest c = pair_closest(PairType::EdgeEdge, x);
    CHECK(c.distance == doctest::Approx(0.3));
    CHECK(c.w[0] == doctest::Approx(0.5));
    CHECK(c.w[2] == doctest::Approx(-0.5));
  }
  SUBCASE("parallel overlapping edges") {
    x << 0, 1, 0.5, 2,  //
        0, 0, 0.2, 0.2,  //
        0, 0, 0, 0;
    CHECK(pair_closest(PairType::EdgeEdge, x).distance == doctest::Approx(0.2));
    check_against_sampling(PairType::EdgeEdge, x);
  }
  SUBCASE("parallel disjoint edges") {
    x << 0, 1, 2, 3,  //
        0, 0, 1, 1,   //
        0, 0, 0, 0;
    CHECK(pair_closest(PairType::EdgeEdge, x).distance == doctest::Approx(std::sqrt(2.0)));
  }
  SUBCASE("collinear edges with a gap") {
    x << 0, 1, 1.5, 3,  //
        0, 0, 0, 0,     //
        0, 0, 0, 0;
    CHECK(pair_closest(PairType::EdgeEdge, x).distance == doctest::Approx(0.5));
  }
  SUBCASE("zero-length edges") {
    x << 0, 0, 1, 2,  //
        0, 0, 1, 1,   //
        0, 0, 0, 0;
    CHECK(pair_closest(PairType::EdgeEdge, x).distance == doctest::Approx(std::sqrt(2.0)));
    x.col(3) = x.col(2);
    CHECK(pair_closest(PairType::EdgeEdge, x).distance == doctest::Approx(std::sqrt(2.0)));
  }
}

}  // namespace
}  // namespace clockwork
