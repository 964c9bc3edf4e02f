#include "contact/obstacles/mesh_collider.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace clockwork {

namespace {

constexpr std::uint32_t kLeafSize = 4;
constexpr int kMaxDepth = 48;  // the query's stack holds one sibling per level

/// Directed edge a → b of triangle t (its edge k), keyed by the unordered pair.
struct EdgeUse {
  Index lo, hi;
  std::uint32_t t;
  int k;
  bool forward;  ///< a < b
};

}  // namespace

MeshCollider::MeshCollider(std::vector<Vec3> vertices, const std::vector<std::array<Index, 3>>& triangles,
                           double band) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (triangles.empty()) bad("mesh collider: no triangle");
  for (std::size_t i = 0; i < vertices.size(); ++i)
    if (!vertices[i].allFinite()) bad(fmt::format("mesh collider: vertex {} has a non-finite coordinate", i));
  // Weld vertices at identical coordinates (an OBJ's split corners): the sign needs
  // the triangles' adjacency.
  std::map<std::array<double, 3>, Index> welded;
  std::vector<Index> weld(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto [it, fresh] = welded.try_emplace({vertices[i].x(), vertices[i].y(), vertices[i].z()},
                                                static_cast<Index>(x_.size()));
    if (fresh) x_.push_back(vertices[i]);
    weld[i] = it->second;
  }
  Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    std::array<Index, 3> v{};
    for (int k = 0; k < 3; ++k) {
      if (triangles[t][k] >= vertices.size())
        bad(fmt::format("mesh collider: triangle {} holds vertex {}, out of range (0..{})", t, triangles[t][k],
                        vertices.size()));
      v[k] = weld[triangles[t][k]];
    }
    const Vec3 &a = x_[v[0]], &b = x_[v[1]], &c = x_[v[2]];
    const double longest = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
    if (!((b - a).cross(c - a).norm() > 1e-14 * longest)) continue;  // no normal: left out
    Tri tri;
    tri.v = v;
    tris_.push_back(tri);
    for (Index i : v) {
      lo = lo.cwiseMin(x_[i]);
      hi = hi.cwiseMax(x_[i]);
    }
  }
  if (tris_.empty()) bad("mesh collider: every triangle is degenerate (zero area)");
  tiny_ = 1e-12 * (hi - lo).norm();

  // Adjacency: an edge used once is a boundary; twice in opposite directions, an
  // interior edge of a consistently oriented surface; anything else is non-manifold.
  std::vector<std::array<std::uint32_t, 2>> interior;  // (3 t + k) of both sides
  const auto adjacency = [&] {
    std::vector<EdgeUse> uses;
    for (std::uint32_t t = 0; t < tris_.size(); ++t)
      for (int k = 0; k < 3; ++k) {
        const Index a = tris_[t].v[k], b = tris_[t].v[(k + 1) % 3];
        uses.push_back({std::min(a, b), std::max(a, b), t, k, a < b});
        tris_[t].boundary_edge[k] = false;
      }
    std::sort(uses.begin(), uses.end(), [](const EdgeUse& p, const EdgeUse& q) {
      return p.lo != q.lo ? p.lo < q.lo : p.hi < q.hi;
    });
    closed_ = true;
    interior.clear();
    for (std::size_t i = 0; i < uses.size();) {
      std::size_t j = i;
      while (j < uses.size() && uses[j].lo == uses[i].lo && uses[j].hi == uses[i].hi) ++j;
      if (j - i == 2 && uses[i].forward != uses[i + 1].forward) {
        interior.push_back({3 * uses[i].t + uses[i].k, 3 * uses[i + 1].t + uses[i + 1].k});
      } else {
        closed_ = false;  // a boundary, or a non-manifold edge: each use counts as a boundary
        for (std::size_t u = i; u < j; ++u) tris_[uses[u].t].boundary_edge[uses[u].k] = true;
      }
      i = j;
    }
  };
  adjacency();
  // A closed surface facing inward is turned outward (the enclosed volume is positive
  // for counter-clockwise triangles seen from outside).
  if (closed_) {
    double volume = 0.0;
    for (const Tri& t : tris_) volume += x_[t.v[0]].dot(x_[t.v[1]].cross(x_[t.v[2]])) / 6.0;
    if (volume < 0.0) {
      for (Tri& t : tris_) std::swap(t.v[1], t.v[2]);
      adjacency();
    }
  }
  // Pseudo-normals (Bærentzen & Aanæs): faces, edges (sum of the two face normals),
  // vertices (the incident face normals weighted by their angles at the vertex).
  vertex_normal_.assign(x_.size(), Vec3::Zero());
  boundary_vertex_.assign(x_.size(), false);
  for (Tri& t : tris_) {
    const Vec3 &a = x_[t.v[0]], &b = x_[t.v[1]], &c = x_[t.v[2]];
    t.normal = (b - a).cross(c - a).normalized();
    for (int k = 0; k < 3; ++k) {
      const Vec3& p = x_[t.v[k]];
      const Vec3 e1 = (x_[t.v[(k + 1) % 3]] - p).normalized(), e2 = (x_[t.v[(k + 2) % 3]] - p).normalized();
      vertex_normal_[t.v[k]] += std::acos(std::clamp(e1.dot(e2), -1.0, 1.0)) * t.normal;
      t.edge_normal[k] = t.normal;
    }
  }
  for (const auto& [s, r] : interior) {
    const Vec3 sum = tris_[s / 3].normal + tris_[r / 3].normal;
    tris_[s / 3].edge_normal[s % 3] = tris_[r / 3].edge_normal[r % 3] = sum;
  }
  for (const Tri& t : tris_)
    for (int k = 0; k < 3; ++k)
      if (t.boundary_edge[k]) boundary_vertex_[t.v[k]] = boundary_vertex_[t.v[(k + 1) % 3]] = true;

  band_ = band > 0.0 ? band : 0.5 * (hi - lo).maxCoeff();
  if (!closed_ && !(band_ > 0.0 && std::isfinite(band_)))
    bad(fmt::format("mesh collider: band {} of an open mesh must be positive", band_));

  order_.resize(tris_.size());
  for (std::uint32_t t = 0; t < tris_.size(); ++t) order_[t] = t;
  nodes_.reserve(2 * tris_.size() / kLeafSize + 2);
  build(0, static_cast<std::uint32_t>(tris_.size()), 0);
}

std::uint32_t MeshCollider::build(std::uint32_t first, std::uint32_t count, int depth) {
  const std::uint32_t id = static_cast<std::uint32_t>(nodes_.size());
  nodes_.emplace_back();
  Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
  Vec3 clo = lo, chi = hi;  // of the centroids
  for (std::uint32_t i = first; i < first + count; ++i) {
    const Tri& t = tris_[order_[i]];
    Vec3 centroid = Vec3::Zero();
    for (Index v : t.v) {
      lo = lo.cwiseMin(x_[v]);
      hi = hi.cwiseMax(x_[v]);
      centroid += x_[v] / 3.0;
    }
    clo = clo.cwiseMin(centroid);
    chi = chi.cwiseMax(centroid);
  }
  nodes_[id].lo = lo;
  nodes_[id].hi = hi;
  if (count <= kLeafSize || depth >= kMaxDepth) {
    nodes_[id].first = first;
    nodes_[id].count = count;
    return id;
  }
  int axis = 0;
  (chi - clo).maxCoeff(&axis);
  const std::uint32_t half = count / 2;
  const auto centre = [&](std::uint32_t t) {
    const Tri& tri = tris_[t];
    return x_[tri.v[0]][axis] + x_[tri.v[1]][axis] + x_[tri.v[2]][axis];
  };
  std::nth_element(order_.begin() + first, order_.begin() + first + half, order_.begin() + first + count,
                   [&](std::uint32_t p, std::uint32_t q) { return centre(p) < centre(q); });
  const std::uint32_t left = build(first, half, depth + 1);
  const std::uint32_t right = build(first + half, count - half, depth + 1);
  nodes_[id].left = left;
  nodes_[id].right = right;
  return id;
}

double MeshCollider::box_distance2(const Node& n, const Vec3& x) {
  return (x.cwiseMax(n.lo).cwiseMin(n.hi) - x).squaredNorm();
}

/// Closest point of triangle t to x by its Voronoi regions (Ericson, Real-Time
/// Collision Detection, §5.1.5), with the region it falls in; kept if nearer than best.
void MeshCollider::triangle_closest(std::uint32_t t, const Vec3& x, Hit& best) const {
  const Tri& tri = tris_[t];
  const Vec3 &a = x_[tri.v[0]], &b = x_[tri.v[1]], &c = x_[tri.v[2]];
  Hit h;
  h.triangle = t;
  const Vec3 ab = b - a, ac = c - a, ap = x - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  const Vec3 bp = x - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  const Vec3 cp = x - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  const double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
  const auto corner = [&](int k, const Vec3& p) {
    h.feature = Feature::Vertex;
    h.k = k;
    h.point = p;
  };
  const auto edge = [&](int k, const Vec3& p) {
    h.feature = Feature::Edge;
    h.k = k;
    h.point = p;
  };
  if (d1 <= 0.0 && d2 <= 0.0) corner(0, a);
  else if (d3 >= 0.0 && d4 <= d3) corner(1, b);
  else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) edge(0, a + d1 / (d1 - d3) * ab);
  else if (d6 >= 0.0 && d5 <= d6) corner(2, c);
  else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) edge(2, a + d2 / (d2 - d6) * ac);
  else if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0)
    edge(1, b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b));
  else {
    // Inside the face: the projection on its plane (more accurate than barycentrics).
    h.feature = Feature::Face;
    h.point = x - tri.normal.dot(ap) * tri.normal;
  }
  h.d2 = (x - h.point).squaredNorm();
  if (h.d2 < best.d2) best = h;
}

StaticCollider::Closest MeshCollider::answer(const Vec3& x, const Hit& h) const {
  const Tri& t = tris_[h.triangle];
  const Vec3 pseudo = h.feature == Feature::Face   ? t.normal
                      : h.feature == Feature::Edge ? t.edge_normal[h.k]
                                                   : vertex_normal_[t.v[h.k]];
  const Vec3 diff = x - h.point;
  const double d = std::sqrt(h.d2);
  const bool behind = diff.dot(pseudo) < 0.0;
  const bool on_boundary = h.feature == Feature::Edge     ? t.boundary_edge[h.k]
                           : h.feature == Feature::Vertex ? bool(boundary_vertex_[t.v[h.k]])
                                                          : false;
  const bool inside = behind && (closed_ || (!on_boundary && d <= band_));
  StaticCollider::Closest out;
  out.point = h.point;
  out.distance = inside ? -d : d;
  if (h.feature == Feature::Face) {
    // x − p is along the face normal: take it exactly.
    out.normal = inside || !behind ? t.normal : Vec3(-t.normal);
  } else if (d > tiny_) {
    out.normal = inside ? Vec3(-diff / d) : Vec3(diff / d);
  } else {
    out.normal = pseudo.normalized();  // on the surface: its outward direction
  }
  return out;
}

StaticCollider::Closest MeshCollider::closest(const Vec3& x) const {
  Hit best;
  std::uint32_t stack[kMaxDepth + 2];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& n = nodes_[stack[--top]];
    if (box_distance2(n, x) >= best.d2) continue;
    if (n.count > 0) {
      for (std::uint32_t i = n.first; i < n.first + n.count; ++i) triangle_closest(order_[i], x, best);
      continue;
    }
    const double dl = box_distance2(nodes_[n.left], x), dr = box_distance2(nodes_[n.right], x);
    // The nearer child is searched first (pushed last).
    const std::uint32_t near = dl <= dr ? n.left : n.right, far = dl <= dr ? n.right : n.left;
    if (std::max(dl, dr) < best.d2) stack[top++] = far;
    if (std::min(dl, dr) < best.d2) stack[top++] = near;
  }
  return answer(x, best);
}

StaticCollider::Closest MeshCollider::closest_brute_force(const Vec3& x) const {
  Hit best;
  for (std::uint32_t t = 0; t < tris_.size(); ++t) triangle_closest(t, x, best);
  return answer(x, best);
}

}  // namespace clockwork
