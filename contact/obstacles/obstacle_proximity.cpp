#include "contact/obstacles/obstacle_proximity.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <tuple>

#include "contact/distance/distance.hpp"

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

/// Whether closest-point weights `w` on an obstacle triangle (exactly zero where
/// clamped, as closest_point_triangle returns them) land on an edge or vertex that
/// `flat` (vertex bits 0–2, edge bits 3–5) marks flat.
bool clamped_to_flat(const Vec3& w, std::uint8_t flat) {
  const int zeros = (w.array() == 0.0).count();
  if (zeros == 1) {
    int m = 0;
    while (w[m] != 0.0) ++m;
    return flat & (8u << ((m + 1) % 3));  // the edge opposite corner m
  }
  if (zeros == 2) {
    int m = 0;
    while (w[m] == 0.0) ++m;
    return flat & (1u << m);
  }
  return false;
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
  const auto& tris = obstacles_.triangles;
  const std::size_t n = tris.size();
  corners_.resize(3 * n);
  bins_.reserve(8 * n);
  // Vertices numbered in order of their global index.
  std::vector<Index> vertices;
  for (const auto& tri : tris) vertices.insert(vertices.end(), tri.begin(), tri.end());
  std::sort(vertices.begin(), vertices.end());
  vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
  vertex_of_.resize(n);
  fan_start_.assign(vertices.size() + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const auto v = static_cast<std::uint32_t>(std::lower_bound(vertices.begin(), vertices.end(), tris[i][k]) -
                                                vertices.begin());
      vertex_of_[i][k] = v;
      ++fan_start_[v + 1];
    }
  for (std::size_t v = 0; v < vertices.size(); ++v) fan_start_[v + 1] += fan_start_[v];
  fan_.resize(3 * n);
  std::vector<std::uint32_t> next(fan_start_.begin(), fan_start_.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) fan_[next[vertex_of_[i][k]]++] = static_cast<std::uint32_t>(i);
  // Edges: (low vertex, high vertex, triangle, corner), sorted so that a shared edge's
  // triangles are adjacent.
  std::vector<std::tuple<Index, Index, std::uint32_t, int>> sides;
  sides.reserve(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const auto [a, b] = std::minmax(tris[i][k], tris[i][(k + 1) % 3]);
      sides.emplace_back(a, b, static_cast<std::uint32_t>(i), k);
    }
  std::sort(sides.begin(), sides.end());
  edge_of_.resize(n);
  for (std::size_t i = 0; i < sides.size(); ++i) {
    const auto& [a, b, tri, k] = sides[i];
    if (i == 0 || std::get<0>(sides[i - 1]) != a || std::get<1>(sides[i - 1]) != b)
      edge_triangles_.emplace_back();
    EdgeTriangles& e = edge_triangles_.back();
    if (e.count < 2) e.triangle[e.count] = tri;
    ++e.count;
    edge_of_[tri][k] = static_cast<std::uint32_t>(edge_triangles_.size() - 1);
  }
  normals_.resize(n);
  edge_flat_.resize(edge_triangles_.size());
  vertex_flat_.resize(vertices.size());
  flat_.resize(n);
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
  mark_flat();
}

void ObstacleProximity::mark_flat() {
  const auto& tris = obstacles_.triangles;
  const auto at = [&](std::uint32_t i, int k) -> const Vec3& { return corners_[3 * i + k]; };
  for (std::size_t i = 0; i < tris.size(); ++i) {
    const auto j = static_cast<std::uint32_t>(i);
    const Vec3 c = (at(j, 1) - at(j, 0)).cross(at(j, 2) - at(j, 0));
    const double area2 = c.norm();
    // A degenerate triangle has no plane: NaN fails every comparison below.
    normals_[i] = area2 > 0.0 ? Vec3(c / area2) : Vec3::Constant(std::nan(""));
  }
  // Coplanar to ~1e-12: a ground built of coplanar vertices is flat up to rounding,
  // any ridge or valley a body can feel is far steeper.
  constexpr double kCoplanar = 1e-12;
  const auto parallel = [](const Vec3& a, const Vec3& b) { return a.cross(b).norm() <= kCoplanar; };
  for (std::size_t e = 0; e < edge_triangles_.size(); ++e) {
    const EdgeTriangles& et = edge_triangles_[e];
    bool flat = et.count == 2 && parallel(normals_[et.triangle[0]], normals_[et.triangle[1]]);
    if (flat) {
      // Coplanar normals also describe a fold flat onto itself (a knife edge): the
      // triangles' third corners must lie on opposite sides of the edge. Found
      // through the first triangle's corners, whatever either's winding.
      const std::uint32_t t0 = et.triangle[0], t1 = et.triangle[1];
      int k0 = 0, k1 = 0;
      while (edge_of_[t0][k0] != e) ++k0;
      while (edge_of_[t1][k1] != e) ++k1;
      const Vec3& a = at(t0, k0);
      const Vec3 edge = at(t0, (k0 + 1) % 3) - a;
      const Vec3 side0 = edge.cross(at(t0, (k0 + 2) % 3) - a);
      const Vec3 side1 = edge.cross(at(t1, (k1 + 2) % 3) - a);
      flat = side0.dot(side1) < 0.0;
    }
    edge_flat_[e] = flat;
  }
  // A flat vertex: every incident edge flat (so its fan is closed and unfolded) and
  // every incident triangle in one plane (a non-manifold vertex may join two fans).
  for (std::size_t v = 0; v + 1 < fan_start_.size(); ++v) {
    bool flat = true;
    const Vec3& first = normals_[fan_[fan_start_[v]]];
    for (std::uint32_t f = fan_start_[v]; f < fan_start_[v + 1] && flat; ++f) {
      const std::uint32_t i = fan_[f];
      int k = 0;
      while (vertex_of_[i][k] != v) ++k;
      flat = parallel(normals_[i], first) && edge_flat_[edge_of_[i][k]] && edge_flat_[edge_of_[i][(k + 2) % 3]];
    }
    vertex_flat_[v] = flat;
  }
  for (std::size_t i = 0; i < tris.size(); ++i) {
    std::uint8_t mask = 0;
    for (int k = 0; k < 3; ++k) {
      if (vertex_flat_[vertex_of_[i][k]]) mask |= std::uint8_t(1u << k);
      if (edge_flat_[edge_of_[i][k]]) mask |= std::uint8_t(8u << k);
    }
    flat_[i] = mask;
  }
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
  const std::uint8_t flat = flat_[j];
  // Flat obstacle vertices and edges bring no pair of their own (see the header).
  const std::uint8_t obstacle_owns = obstacles_.owns[j] & std::uint8_t(~flat);
  const Vec3* P = &corners_[3 * j];
  const auto velocity = [&](int k) { return s.velocity(obstacle[k]); };
  // Surface vertex – obstacle face.
  for (int k = 0; k < 3; ++k) {
    if (!(surface_owns & (1u << k))) continue;
    const Vec3 w = closest_point_triangle(x.col(k), P[0], P[1], P[2]);
    const Vec3 p = w[0] * P[0] + w[1] * P[1] + w[2] * P[2];
    const Vec3 d = x.col(k) - p;
    if (d.norm() > reach) continue;
    if (flat && clamped_to_flat(w, flat)) {
      // Clamped onto a flat edge or vertex: the point lies over a neighbouring
      // triangle, which answers it, unless it lies exactly over this edge or vertex
      // (the normal is then the face's, up to the rounding of p).
      const Vec3& m = normals_[j];
      const double tolerance = 1e-12 * d.norm() + 1e-14 * (x.col(k).norm() + p.norm());
      if ((d - d.dot(m) * m).norm() > tolerance) continue;
    }
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
