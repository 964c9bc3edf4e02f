#include "contact/obstacle_proximity.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include "contact/distance.hpp"

namespace clockwork {

namespace {

/// One representation per surface point: the vertices with non-zero weight in
/// increasing order, then the last of them repeated with weight 0. A surface vertex
/// reached as a triangle's corner, an edge's end or itself is then the same contact.
ObstacleContact canonical(const std::array<Index, 3>& vertices, const Vec3& weights, const Vec3& point,
                          const Vec3& velocity) {
  std::array<std::pair<Index, double>, 3> used{};
  int n = 0;
  for (int i = 0; i < 3; ++i)
    if (weights[i] != 0.0) used[n++] = {vertices[i], weights[i]};
  for (int i = 1; i < n; ++i)  // insertion sort of at most three
    for (int j = i; j > 0 && used[j].first < used[j - 1].first; --j) std::swap(used[j], used[j - 1]);
  ObstacleContact c;
  for (int i = 0; i < 3; ++i) {
    const auto& [v, w] = used[std::min(i, n - 1)];
    c.vertices[i] = v;
    c.weights[i] = i < n ? w : 0.0;
  }
  c.point = point;
  c.velocity = velocity;
  return c;
}

}  // namespace

OwnedTriangles::OwnedTriangles(std::vector<std::array<Index, 3>> t) : triangles(std::move(t)) {
  owns.assign(triangles.size(), 0);
  std::vector<bool> vertex_seen;
  std::map<std::pair<Index, Index>, bool> edge_seen;
  for (std::size_t i = 0; i < triangles.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      const Index a = triangles[i][k], b = triangles[i][(k + 1) % 3];
      if (a >= vertex_seen.size()) vertex_seen.resize(a + 1, false);
      if (!vertex_seen[a]) {
        vertex_seen[a] = true;
        owns[i] |= std::uint8_t(1u << k);
      }
      if (edge_seen.emplace(std::minmax(a, b), true).second) owns[i] |= std::uint8_t(8u << k);
    }
}

ObstacleProximity::ObstacleProximity(std::vector<std::array<Index, 3>> triangles, double reach)
    : obstacles_(std::move(triangles)), cell_(reach) {
  assert(reach > 0.0);
  corners_.resize(3 * obstacles_.triangles.size());
  bins_.reserve(8 * obstacles_.triangles.size());
}

std::uint64_t ObstacleProximity::key(const Eigen::Vector3i& c) const {
  constexpr std::uint64_t kMask = (1u << 21) - 1;  // 2²¹ cells per axis, wrapping
  return ((static_cast<std::uint64_t>(c.x()) & kMask) << 42) |
         ((static_cast<std::uint64_t>(c.y()) & kMask) << 21) |
         (static_cast<std::uint64_t>(c.z()) & kMask);
}

Eigen::Vector3i ObstacleProximity::cell_of(const Vec3& p) const {
  return (p / cell_).array().floor().cast<int>();
}

void ObstacleProximity::rebuild(const VertexState& s, double t) {
  const auto& tris = obstacles_.triangles;
  if (!built_ && !tris.empty()) {
    // The median edge: a few huge triangles (a ground) must not coarsen the grid.
    std::vector<double> edges;
    for (const auto& tri : tris)
      for (int k = 0; k < 3; ++k) edges.push_back((s.position(tri[k]) - s.position(tri[(k + 1) % 3])).norm());
    std::nth_element(edges.begin(), edges.begin() + edges.size() / 2, edges.end());
    cell_ = std::max(cell_, edges[edges.size() / 2]);
  }
  built_ = true;
  built_at_ = t;
  bins_.clear();
  large_.clear();
  max_speed_ = 0.0;
  for (std::size_t i = 0; i < tris.size(); ++i) {
    Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
    for (int k = 0; k < 3; ++k) {
      const Vec3 x = s.position_at(tris[i][k], t);
      corners_[3 * i + k] = x;
      lo = lo.cwiseMin(x);
      hi = hi.cwiseMax(x);
      max_speed_ = std::max(max_speed_, s.velocity(tris[i][k]).norm());
    }
    const Eigen::Vector3i a = cell_of(lo), b = cell_of(hi);
    const Eigen::Vector3d span = (b - a).cast<double>().array() + 1.0;
    if (span.prod() > kLargeCells) {  // a ground: tested against every query's box
      large_.push_back({lo, hi, static_cast<std::uint32_t>(i)});
      continue;
    }
    for (int x = a.x(); x <= b.x(); ++x)
      for (int y = a.y(); y <= b.y(); ++y)
        for (int z = a.z(); z <= b.z(); ++z)
          bins_.emplace_back(key({x, y, z}), static_cast<std::uint32_t>(i));
  }
  std::sort(bins_.begin(), bins_.end());
}

void ObstacleProximity::candidates(const Vec3& lo, const Vec3& hi) {
  candidates_.clear();
  const Eigen::Vector3i a = cell_of(lo), b = cell_of(hi);
  for (int x = a.x(); x <= b.x(); ++x)
    for (int y = a.y(); y <= b.y(); ++y)
      for (int z = a.z(); z <= b.z(); ++z) {
        const std::uint64_t k = key({x, y, z});
        for (auto it = std::lower_bound(bins_.begin(), bins_.end(), std::make_pair(k, std::uint32_t{0}));
             it != bins_.end() && it->first == k; ++it)
          candidates_.push_back(it->second);
      }
  for (const LargeTriangle& t : large_)
    if ((t.lo.array() <= hi.array()).all() && (lo.array() <= t.hi.array()).all())
      candidates_.push_back(t.index);
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
}

void ObstacleProximity::pair_features(const VertexState& s, const std::array<Index, 3>& surface,
                                      std::uint8_t surface_owns, const StencilPositions<3>& x,
                                      std::uint32_t j, double reach,
                                      std::vector<ObstacleContact>& out) const {
  const auto& obstacle = obstacles_.triangles[j];
  const std::uint8_t obstacle_owns = obstacles_.owns[j];
  const Vec3* P = &corners_[3 * j];
  const auto velocity = [&](int k) { return s.velocity(obstacle[k]); };
  // Surface vertex – obstacle face.
  for (int k = 0; k < 3; ++k) {
    if (!(surface_owns & (1u << k))) continue;
    const Vec3 w = closest_point_triangle(x.col(k), P[0], P[1], P[2]);
    const Vec3 p = w[0] * P[0] + w[1] * P[1] + w[2] * P[2];
    if ((x.col(k) - p).norm() > reach) continue;
    out.push_back(canonical({surface[k], surface[k], surface[k]}, Vec3(1.0, 0.0, 0.0), p,
                            w[0] * velocity(0) + w[1] * velocity(1) + w[2] * velocity(2)));
  }
  // Obstacle vertex – surface face.
  for (int k = 0; k < 3; ++k) {
    if (!(obstacle_owns & (1u << k))) continue;
    const Vec3 w = closest_point_triangle(P[k], x.col(0), x.col(1), x.col(2));
    if ((x * w - P[k]).norm() > reach) continue;
    out.push_back(canonical(surface, w, P[k], velocity(k)));
  }
  // Edge–edge.
  for (int e = 0; e < 3; ++e) {
    if (!(surface_owns & (8u << e))) continue;
    const int e1 = (e + 1) % 3;
    for (int f = 0; f < 3; ++f) {
      if (!(obstacle_owns & (8u << f))) continue;
      const int f1 = (f + 1) % 3;
      const Eigen::Vector2d st = closest_segment_segment(x.col(e), x.col(e1), P[f], P[f1]);
      const Vec3 y = (1.0 - st[0]) * x.col(e) + st[0] * x.col(e1);
      const Vec3 p = (1.0 - st[1]) * P[f] + st[1] * P[f1];
      if ((y - p).norm() > reach) continue;
      Vec3 w = Vec3::Zero();
      w[0] = 1.0 - st[0];
      w[1] = st[0];
      out.push_back(canonical({surface[e], surface[e1], surface[e1]}, w, p,
                              (1.0 - st[1]) * velocity(f) + st[1] * velocity(f1)));
    }
  }
}

void ObstacleProximity::find(const VertexState& s, double t, const OwnedTriangles& surface,
                             double reach, std::vector<ObstacleContact>& out) {
  out.clear();
  if (obstacles_.triangles.empty()) return;
  if (!built_ || t != built_at_) rebuild(s, t);
  for (std::size_t i = 0; i < surface.triangles.size(); ++i) {
    const auto& tri = surface.triangles[i];
    StencilPositions<3> x;
    for (int k = 0; k < 3; ++k) x.col(k) = s.position_at(tri[k], t);
    const Vec3 margin = Vec3::Constant(reach);
    candidates(x.rowwise().minCoeff() - margin, x.rowwise().maxCoeff() + margin);
    for (const std::uint32_t j : candidates_) pair_features(s, tri, surface.owns[i], x, j, reach, out);
  }
  // A surface vertex or edge closest to an obstacle edge or corner finds the same point
  // through every face sharing it, and as more than one kind of feature pair (a
  // surface corner against an obstacle corner is vertex–face, face–vertex and
  // edge–edge at once): one contact.
  const auto order = [](const ObstacleContact& a, const ObstacleContact& b) {
    if (a.vertices != b.vertices) return a.vertices < b.vertices;
    for (int k = 0; k < 3; ++k)
      if (a.weights[k] != b.weights[k]) return a.weights[k] < b.weights[k];
    for (int k = 0; k < 3; ++k)
      if (a.point[k] != b.point[k]) return a.point[k] < b.point[k];
    return false;
  };
  std::sort(out.begin(), out.end(), order);
  const double same = 1e-9 * cell_;
  out.erase(std::unique(out.begin(), out.end(),
                        [same](const ObstacleContact& a, const ObstacleContact& b) {
                          return a.vertices == b.vertices && (a.weights - b.weights).norm() <= 1e-12 &&
                                 (a.point - b.point).norm() <= same;
                        }),
            out.end());
}

}  // namespace clockwork
