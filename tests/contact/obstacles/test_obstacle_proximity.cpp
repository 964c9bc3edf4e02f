// The obstacle features an implicit tick sees (contact/obstacles/obstacle_proximity.hpp),
// cross-checked by brute force: every feature pair of a surface triangle and an
// obstacle triangle within reach — surface vertex–obstacle face, obstacle vertex–
// surface face, edge–edge — is reported once, with the same closest points, and
// nothing else is; a moving obstacle is found where it is at the queried time.
// Flat obstacle edges and vertices (coplanar neighbours) bring no pairs of their own:
// on a tessellated ground every pair is vertical and every point within reach has one,
// while a box's ridges and corners keep their slanted pairs.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "contact/distance/distance.hpp"
#include "contact/obstacles/obstacle_proximity.hpp"

namespace clockwork {
namespace {

using Tris = std::vector<std::array<Index, 3>>;

/// A surface point, an obstacle point, and the surface's weights: one contact.
struct Pair {
  std::array<Index, 3> vertices;
  Vec3 weights, point;
};

/// The surface point as (vertex, weight) pairs with non-zero weight, sorted.
std::vector<std::pair<Index, double>> surface_point(const std::array<Index, 3>& v, const Vec3& w) {
  std::vector<std::pair<Index, double>> out;
  for (int i = 0; i < 3; ++i)
    if (w[i] != 0.0) out.emplace_back(v[i], w[i]);
  std::sort(out.begin(), out.end());
  return out;
}

/// The same contact: the same surface point (whichever feature pair found it) and the
/// same obstacle point.
bool same(const std::array<Index, 3>& va, const Vec3& wa, const Vec3& pa, const std::array<Index, 3>& vb,
          const Vec3& wb, const Vec3& pb) {
  if ((pa - pb).norm() > 1e-10) return false;
  const auto a = surface_point(va, wa), b = surface_point(vb, wb);
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || std::abs(a[i].second - b[i].second) > 1e-12) return false;
  return true;
}

/// Every feature pair within reach by brute force over all triangle pairs, features
/// shared by triangles counted once (by their vertices and closest points).
std::vector<Pair> brute_force_pairs(const VertexState& s, double t, const Tris& surface, const Tris& obstacle,
                              double reach) {
  std::vector<Pair> all;
  const auto at = [&](Index a) { return s.position_at(a, t); };
  const auto add = [&](Pair p) {
    for (const Pair& q : all)
      if (same(q.vertices, q.weights, q.point, p.vertices, p.weights, p.point)) return;
    all.push_back(p);
  };
  for (const auto& S : surface)
    for (const auto& O : obstacle) {
      for (int k = 0; k < 3; ++k) {
        const Vec3 w = closest_point_triangle(at(S[k]), at(O[0]), at(O[1]), at(O[2]));
        const Vec3 p = w[0] * at(O[0]) + w[1] * at(O[1]) + w[2] * at(O[2]);
        if ((at(S[k]) - p).norm() <= reach) add({{S[k], S[k], S[k]}, Vec3(1, 0, 0), p});
        const Vec3 u = closest_point_triangle(at(O[k]), at(S[0]), at(S[1]), at(S[2]));
        const Vec3 y = u[0] * at(S[0]) + u[1] * at(S[1]) + u[2] * at(S[2]);
        if ((y - at(O[k])).norm() <= reach) add({S, u, at(O[k])});
      }
      for (int e = 0; e < 3; ++e)
        for (int f = 0; f < 3; ++f) {
          const Index a = S[e], b = S[(e + 1) % 3];
          const Vec3 oa = at(O[f]), ob = at(O[(f + 1) % 3]);
          // Each edge once, in the orientation of its first triangle (as owned).
          const Eigen::Vector2d st = closest_segment_segment(at(a), at(b), oa, ob);
          const Vec3 y = (1 - st[0]) * at(a) + st[0] * at(b);
          const Vec3 p = (1 - st[1]) * oa + st[1] * ob;
          if ((y - p).norm() <= reach) add({{a, b, b}, Vec3(1 - st[0], st[0], 0), p});
        }
    }
  return all;
}

TEST_CASE("obstacle proximity: every feature pair within reach once, as brute force finds them") {
  VertexState s;
  // Obstacle: an octahedron of radius 5 cm moving at 0.5 m/s, and a ground of two huge
  // triangles below it (kept out of the grid's bins).
  Tris obstacle;
  const Vec3 centre(0.0, 0.0, 0.0), v(0.5, 0.0, 0.0);
  const Index o = s.add(centre + Vec3(0.05, 0, 0), v, kNever);
  s.add(centre + Vec3(-0.05, 0, 0), v, kNever);
  s.add(centre + Vec3(0, 0.05, 0), v, kNever);
  s.add(centre + Vec3(0, -0.05, 0), v, kNever);
  s.add(centre + Vec3(0, 0, 0.05), v, kNever);
  s.add(centre + Vec3(0, 0, -0.05), v, kNever);
  for (const auto& f : std::vector<std::array<Index, 3>>{{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                                         {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}})
    obstacle.push_back({o + f[0], o + f[1], o + f[2]});
  const Index g = s.add(Vec3(-50, -50, -0.052), Vec3::Zero(), kNever);
  s.add(Vec3(50, -50, -0.052), Vec3::Zero(), kNever);
  s.add(Vec3(0, 50, -0.052), Vec3::Zero(), kNever);
  obstacle.push_back({g, g + 1, g + 2});
  // Surface: a 7 × 7 grid of 1 cm cells over the octahedron's top and one side,
  // randomly perturbed, plus a strip near the ground.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-2e-3, 2e-3);
  Tris surface;
  const auto grid = [&](const Vec3& origin, const Vec3& ex, const Vec3& ey) {
    const Index first = s.size();
    for (int j = 0; j < 7; ++j)
      for (int i = 0; i < 7; ++i)
        s.add(origin + 0.01 * i * ex + 0.01 * j * ey + Vec3(u(rng), u(rng), u(rng)), Vec3::Zero(), 1e-4);
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 6; ++i) {
        const Index a = first + 7 * j + i;
        surface.push_back({a, a + 1, a + 8});
        surface.push_back({a, a + 8, a + 7});
      }
  };
  grid(Vec3(-0.03, -0.03, 0.053), Vec3::UnitX(), Vec3::UnitY());
  grid(Vec3(0.054, -0.03, -0.03), Vec3::UnitY(), Vec3::UnitZ());
  grid(Vec3(0.2, 0.2, -0.049), Vec3::UnitX(), Vec3::UnitY());
  const double reach = 0.008;
  ObstacleProximity proximity(obstacle, reach);
  const OwnedTriangles owned(surface);
  std::vector<ObstacleContact> found;
  for (const double t : {0.0, 0.004}) {  // the octahedron moves 2 mm between the queries
    CAPTURE(t);
    proximity.find(s, t, owned, reach, found);
    const std::vector<Pair> expected = brute_force_pairs(s, t, surface, obstacle, reach);
    CHECK(found.size() == expected.size());
    CHECK(expected.size() > 50);
    int vertex_face = 0, face_vertex = 0, edge_edge = 0, ground = 0;
    for (const Pair& p : expected) {
      int matches = 0;
      for (const ObstacleContact& c : found)
        matches += same(c.vertices, c.weights, c.point, p.vertices, p.weights, p.point);
      CAPTURE(p.point.transpose());
      CHECK(matches == 1);
      const int used = (p.weights.array() != 0.0).count();
      vertex_face += used == 1;
      edge_edge += used == 2;
      face_vertex += used == 3;
      ground += p.point.z() < -0.0515;
    }
    CHECK(vertex_face > 0);
    CHECK(edge_edge > 0);
    CHECK(face_vertex > 0);
    CHECK(ground > 0);
    for (const ObstacleContact& c : found) {
      Vec3 y = Vec3::Zero();
      for (int i = 0; i < 3; ++i) y += c.weights[i] * s.position_at(c.vertices[i], t);
      CHECK((y - c.point).norm() <= reach);
      // The obstacle point moves with the octahedron (or rests on the ground).
      CHECK((c.velocity - (c.point.z() < -0.0515 ? Vec3::Zero() : v)).norm() <= 1e-12);
    }
  }
  CHECK(proximity.max_speed() == doctest::Approx(0.5));
}

/// The unit normal of a contact, from the obstacle point to the surface point.
Vec3 contact_normal(const VertexState& s, const ObstacleContact& c) {
  Vec3 y = Vec3::Zero();
  for (int i = 0; i < 3; ++i) y += c.weights[i] * s.position_at(c.vertices[i], 0.0);
  return (y - c.point).normalized();
}

/// Whether `c` is vertex `v` against the obstacle.
bool is_vertex(const ObstacleContact& c, Index v) {
  return c.vertices == std::array<Index, 3>{v, v, v} && c.weights == Vec3(1, 0, 0);
}

TEST_CASE("obstacle proximity: a flat ground of several triangles gives only vertical pairs, and one to every point within reach") {
  VertexState s;
  // A 4 × 4-cell ground at z = 0.3 over [-1, 1]², two triangles a cell, diagonals
  // alternating (interior vertices of 4 and 8 triangles), every third triangle wound
  // the other way (flatness does not depend on winding).
  Tris ground;
  const double z0 = 0.3;
  for (int j = 0; j <= 4; ++j)
    for (int i = 0; i <= 4; ++i) s.add(Vec3(-1.0 + 0.5 * i, -1.0 + 0.5 * j, z0), Vec3::Zero(), kNever);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) {
      const Index a = 5 * j + i, b = a + 1, c = a + 6, d = a + 5;
      if ((i + j) % 2 == 0) {
        ground.push_back({a, b, c});
        ground.push_back({a, c, d});
      } else {
        ground.push_back({a, b, d});
        ground.push_back({b, c, d});
      }
    }
  for (std::size_t t = 0; t < ground.size(); t += 3) std::swap(ground[t][1], ground[t][2]);
  // Surface: a soup of tilted triangles over the ground's middle (kept a reach away
  // from its boundary, whose edges and corners are real features), some corners
  // exactly over interior vertices and edges.
  const double reach = 0.2;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> across(-0.6, 0.6), height(z0 + 0.01, z0 + 0.3), side(-0.15, 0.15);
  Tris surface;
  std::vector<Vec3> over_features = {Vec3(0, 0, 0), Vec3(0.5, 0, 0), Vec3(0.25, 0.25, 0), Vec3(-0.25, 0.25, 0),
                                     Vec3(0.5, 0.5, 0), Vec3(0.5, 0.1, 0), Vec3(0.3, 0, 0), Vec3(-0.2, -0.3, 0)};
  for (int t = 0; t < 300; ++t) {
    Vec3 a(across(rng), across(rng), height(rng));
    if (t < static_cast<int>(over_features.size())) {
      a.head<2>() = over_features[t].head<2>();
      a.z() = z0 + (t % 2 ? 1e-3 : 0.05);
    }
    const Index first = s.add(a, Vec3::Zero(), 1e-3);
    for (int k = 0; k < 2; ++k) {
      const Vec3 b(a.x() + side(rng), a.y() + side(rng), height(rng));
      s.add(b, Vec3::Zero(), 1e-3);
    }
    surface.push_back({first, first + 1, first + 2});
  }
  ObstacleProximity proximity(ground, reach);
  const OwnedTriangles owned(surface);
  std::vector<ObstacleContact> found;
  proximity.find(s, 0.0, owned, reach, found);
  REQUIRE(found.size() > 300);
  for (const ObstacleContact& c : found) {
    CAPTURE(c.point.transpose());
    CHECK((contact_normal(s, c) - Vec3::UnitZ()).norm() <= 1e-12);
  }
  // Every surface vertex within reach has its vertical pair, its foot on the ground.
  int within = 0;
  for (const auto& tri : surface)
    for (const Index v : tri) {
      const Vec3 x = s.position(v);
      if (x.z() - z0 > reach) continue;
      ++within;
      int pairs = 0;
      for (const ObstacleContact& c : found)
        pairs += is_vertex(c, v) && (c.point - Vec3(x.x(), x.y(), z0)).norm() <= 1e-12;
      CAPTURE(x.transpose());
      CHECK(pairs == 1);
    }
  CHECK(within > 500);
  // Without the rule the same query has slanted pairs: the check above sees them.
  int slanted = 0;
  for (const Pair& p : brute_force_pairs(s, 0.0, surface, ground, reach)) {
    Vec3 y = Vec3::Zero();
    for (int i = 0; i < 3; ++i) y += p.weights[i] * s.position(p.vertices[i]);
    slanted += ((y - p.point).normalized() - Vec3::UnitZ()).norm() > 1e-6;
  }
  CHECK(slanted > 100);
}

TEST_CASE("obstacle proximity: a box's ridges and corners keep their slanted pairs, its face diagonals give none") {
  VertexState s;
  // The unit box, 12 triangles: each face's diagonal is a flat edge, its 12 edges
  // ridges, its 8 corners corners.
  for (int k = 0; k < 8; ++k) s.add(Vec3(k & 1, (k >> 1) & 1, (k >> 2) & 1), Vec3::Zero(), kNever);
  const Tris box = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                    {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  // One surface triangle reaching over the top face's y = 0 ridge, a corner over
  // the top face's diagonal; another with a corner beside the box's corner (1, 0, 1).
  const Index a = s.add(Vec3(0.4, -0.03, 1.04), Vec3::Zero(), 1e-3);
  s.add(Vec3(0.5, 0.5, 1.05), Vec3::Zero(), 1e-3);
  s.add(Vec3(0.6, 0.3, 1.06), Vec3::Zero(), 1e-3);
  const Index corner = s.add(Vec3(1.02, -0.03, 1.04), Vec3::Zero(), 1e-3);
  s.add(Vec3(1.3, -0.1, 1.2), Vec3::Zero(), 1e-3);
  s.add(Vec3(1.2, 0.1, 1.3), Vec3::Zero(), 1e-3);
  // And a triangle facing the corner (1, 0, 1) along (1, -1, 1), 5 cm off it.
  const Vec3 n = Vec3(1, -1, 1).normalized(), q = Vec3(1, 0, 1) + 0.05 * n;
  const Vec3 u = Vec3(1, 1, 0).normalized(), w = n.cross(u);
  const Index facing = s.size();
  for (int k = 0; k < 3; ++k) {
    const double angle = 2.0 * std::numbers::pi * k / 3.0;
    s.add(q + 0.1 * (std::cos(angle) * u + std::sin(angle) * w), Vec3::Zero(), 1e-3);
  }
  const Tris surface = {{a, a + 1, a + 2}, {corner, corner + 1, corner + 2}, {facing, facing + 1, facing + 2}};
  const double reach = 0.1;
  ObstacleProximity proximity(box, reach);
  const OwnedTriangles owned(surface);
  std::vector<ObstacleContact> found;
  proximity.find(s, 0.0, owned, reach, found);
  const auto count = [&](Index v, const Vec3& foot, const Vec3& normal) {
    int pairs = 0;
    for (const ObstacleContact& c : found)
      pairs += is_vertex(c, v) && (c.point - foot).norm() <= 1e-12 && (contact_normal(s, c) - normal).norm() <= 1e-12;
    return pairs;
  };
  CHECK(count(a, Vec3(0.4, 0, 1), Vec3(0, -0.6, 0.8)) == 1);       // beside the ridge
  CHECK(count(a + 1, Vec3(0.5, 0.5, 1), Vec3::UnitZ()) == 1);      // over the diagonal
  CHECK(count(a + 2, Vec3(0.6, 0.3, 1), Vec3::UnitZ()) == 1);      // over the face
  CHECK(count(corner, Vec3(1, 0, 1), Vec3(0.02, -0.03, 0.04).normalized()) == 1);
  // The surface edge over the ridge meets it (edge–edge), the box's corner meets the
  // lone triangle's face; nothing lands on the top face off the vertical.
  int ridge = 0, box_corner = 0;
  for (const ObstacleContact& c : found) {
    const int used = (c.weights.array() != 0.0).count();
    ridge += used == 2 && std::abs(c.point.y()) <= 1e-12 && std::abs(c.point.z() - 1) <= 1e-12;
    box_corner += used == 3 && (c.point - Vec3(1, 0, 1)).norm() <= 1e-12 &&
                  (contact_normal(s, c) - n).norm() <= 1e-12;
    const bool top_inside = std::abs(c.point.z() - 1) <= 1e-12 && (c.point.head<2>().array() > 1e-9).all() &&
                            (c.point.head<2>().array() < 1 - 1e-9).all();
    if (top_inside) CHECK((contact_normal(s, c) - Vec3::UnitZ()).norm() <= 1e-12);
  }
  CHECK(ridge >= 1);
  CHECK(box_corner == 1);
}

}  // namespace
}  // namespace clockwork
