#include "contact/intersections/intersection_check.hpp"

#include <boost/multiprecision/cpp_int.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace clockwork {

namespace {

using Integer = boost::multiprecision::cpp_int;
using Vec2 = Eigen::Vector2d;

template <typename T>
int sign_of(const T& x) {
  return x > 0 ? 1 : (x < 0 ? -1 : 0);
}

// Filter constants: a relative bound well above Shewchuk's (1997) first-stage error
// bounds for orient2d (3.3e-16) and orient3d (7.8e-16); results inside it are
// recomputed exactly.
constexpr double kFilter = 1e-14;

/// The doubles v as exact integers v · 2^s, one shift s for all: a finite double is an
/// integer (its 53-bit mantissa) times a power of two. Signs of polynomials with equal
/// degree in every term (determinants) are unchanged by the common positive scale, and
/// integer arithmetic needs none of the rationals' gcds.
template <std::size_t N>
std::array<Integer, N> as_integers(const std::array<double, N>& v) {
  int lowest = std::numeric_limits<int>::max();
  for (const double x : v) {
    if (x == 0.0) continue;
    int e = 0;
    std::frexp(x, &e);
    lowest = std::min(lowest, e - 53);
  }
  std::array<Integer, N> out;
  for (std::size_t i = 0; i < N; ++i) {
    if (v[i] == 0.0) continue;
    int e = 0;
    const double m = std::frexp(v[i], &e);  // v = m 2^e, |m| in [0.5, 1): m 2^53 is an integer
    out[i] = Integer(static_cast<long long>(std::ldexp(m, 53)));
    out[i] <<= static_cast<unsigned>(e - 53 - lowest);
  }
  return out;
}

int orient3d_exact(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const auto n = as_integers<12>({a.x(), a.y(), a.z(), b.x(), b.y(), b.z(), c.x(), c.y(), c.z(),
                                  d.x(), d.y(), d.z()});
  Integer m[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = n[3 * i + j] - n[9 + j];
  const Integer det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                      m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                      m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  return sign_of(det);
}

int orient2d_exact(const Vec2& a, const Vec2& b, const Vec2& c) {
  const auto n = as_integers<6>({a.x(), a.y(), b.x(), b.y(), c.x(), c.y()});
  const Integer det = (n[0] - n[4]) * (n[3] - n[5]) - (n[1] - n[5]) * (n[2] - n[4]);
  return sign_of(det);
}

/// Coordinates dropping axis `drop` (0, 1 or 2).
Vec2 project(const Vec3& p, int drop) {
  return drop == 0 ? Vec2(p.y(), p.z()) : drop == 1 ? Vec2(p.x(), p.z()) : Vec2(p.x(), p.y());
}

/// Closed 2D segments pq and ab share a point (either may be a single point).
bool segments_intersect_2d(const Vec2& p, const Vec2& q, const Vec2& a, const Vec2& b) {
  const int o1 = orient2d_sign(p, q, a), o2 = orient2d_sign(p, q, b);
  const int o3 = orient2d_sign(a, b, p), o4 = orient2d_sign(a, b, q);
  const auto within = [](const Vec2& s, const Vec2& t, const Vec2& x) {  // x on line st
    return std::min(s.x(), t.x()) <= x.x() && x.x() <= std::max(s.x(), t.x()) &&
           std::min(s.y(), t.y()) <= x.y() && x.y() <= std::max(s.y(), t.y());
  };
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  if (o1 == 0 && within(p, q, a)) return true;
  if (o2 == 0 && within(p, q, b)) return true;
  if (o3 == 0 && within(a, b, p)) return true;
  if (o4 == 0 && within(a, b, q)) return true;
  return false;
}

/// Closed 2D segment pq meets the closed (possibly degenerate) triangle abc.
bool segment_triangle_2d(const Vec2& p, const Vec2& q, const Vec2& a, const Vec2& b,
                         const Vec2& c) {
  if (segments_intersect_2d(p, q, a, b) || segments_intersect_2d(p, q, b, c) ||
      segments_intersect_2d(p, q, c, a))
    return true;
  // Otherwise the segment is inside the triangle or disjoint from it; a degenerate
  // triangle has no inside beyond its edges.
  const int o = orient2d_sign(a, b, c);
  if (o == 0) return false;
  return orient2d_sign(a, b, p) == o && orient2d_sign(b, c, p) == o &&
         orient2d_sign(c, a, p) == o;
}

/// Coplanar (or collinear) closed 3D figures intersect iff their projections onto all
/// three coordinate planes do: one of the projections is injective on their common
/// plane (or line), and projecting never separates what intersects.
bool coplanar_segment_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b,
                               const Vec3& c) {
  for (int drop = 0; drop < 3; ++drop)
    if (!segment_triangle_2d(project(p, drop), project(q, drop), project(a, drop),
                             project(b, drop), project(c, drop)))
      return false;
  return true;
}

bool segments_intersect_3d(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b) {
  if (orient3d_sign(p, q, a, b) != 0) return false;  // skew lines never meet
  for (int drop = 0; drop < 3; ++drop)
    if (!segments_intersect_2d(project(p, drop), project(q, drop), project(a, drop),
                               project(b, drop)))
      return false;
  return true;
}

bool collinear(const Vec3& a, const Vec3& b, const Vec3& c) {
  for (int drop = 0; drop < 3; ++drop)
    if (orient2d_sign(project(a, drop), project(b, drop), project(c, drop)) != 0) return false;
  return true;
}

/// Closed segment pq meets closed triangle abc.
bool segment_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c) {
  if (collinear(a, b, c))
    return segments_intersect_3d(p, q, a, b) || segments_intersect_3d(p, q, b, c) ||
           segments_intersect_3d(p, q, c, a);
  const int op = orient3d_sign(a, b, c, p), oq = orient3d_sign(a, b, c, q);
  if (op * oq > 0) return false;
  if (op == 0 && oq == 0) return coplanar_segment_triangle(p, q, a, b, c);
  // The segment meets the plane in one point; it is in the closed triangle iff the
  // line pq passes on the same side of (or through) all three edges.
  const int s1 = orient3d_sign(p, q, a, b), s2 = orient3d_sign(p, q, b, c),
            s3 = orient3d_sign(p, q, c, a);
  const bool has_pos = s1 > 0 || s2 > 0 || s3 > 0, has_neg = s1 < 0 || s2 < 0 || s3 < 0;
  return !(has_pos && has_neg);
}

struct Box {
  Vec3 lo, hi;
};

}  // namespace

int orient3d_sign(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 ad = a - d, bd = b - d, cd = c - d;
  // Four points with one coordinate equal (a flat sheet in a coordinate plane, as
  // generated): a zero column, the determinant is exactly 0 (differences of doubles
  // vanish only for equal values) — no need for the rationals.
  for (int k = 0; k < 3; ++k)
    if (ad[k] == 0.0 && bd[k] == 0.0 && cd[k] == 0.0) return 0;
  const double t1 = bd.y() * cd.z(), t2 = bd.z() * cd.y();
  const double t3 = bd.z() * cd.x(), t4 = bd.x() * cd.z();
  const double t5 = bd.x() * cd.y(), t6 = bd.y() * cd.x();
  const double det = ad.x() * (t1 - t2) + ad.y() * (t3 - t4) + ad.z() * (t5 - t6);
  const double permanent = std::abs(ad.x()) * (std::abs(t1) + std::abs(t2)) +
                           std::abs(ad.y()) * (std::abs(t3) + std::abs(t4)) +
                           std::abs(ad.z()) * (std::abs(t5) + std::abs(t6));
  if (std::abs(det) > kFilter * permanent) return sign_of(det);
  return orient3d_exact(a, b, c, d);
}

int orient2d_sign(const Vec2& a, const Vec2& b, const Vec2& c) {
  const double l = (a.x() - c.x()) * (b.y() - c.y()), r = (a.y() - c.y()) * (b.x() - c.x());
  const double det = l - r;
  if (std::abs(det) > kFilter * (std::abs(l) + std::abs(r))) return sign_of(det);
  return orient2d_exact(a, b, c);
}

bool triangles_intersect(const Vec3& p0, const Vec3& p1, const Vec3& p2, const Vec3& q0,
                         const Vec3& q1, const Vec3& q2) {
  // Two closed triangles meet iff an edge of one meets the other: the intersection
  // of non-coplanar triangles is a segment whose ends lie on edges, and coplanar
  // overlap either crosses edges or contains a whole edge.
  return segment_triangle(p0, p1, q0, q1, q2) || segment_triangle(p1, p2, q0, q1, q2) ||
         segment_triangle(p2, p0, q0, q1, q2) || segment_triangle(q0, q1, p0, p1, p2) ||
         segment_triangle(q1, q2, p0, p1, p2) || segment_triangle(q2, q0, p0, p1, p2);
}

std::vector<IntersectingPair> find_intersections(
    const std::vector<Vec3>& x, const std::vector<std::array<Index, 3>>& triangles) {
  // Broad phase: sort-and-sweep of closed bounding boxes along the axis on which they
  // spread most (a flat sheet in a coordinate plane, swept across that plane, would
  // keep every box active at once: quadratic).
  const std::size_t n = triangles.size();
  std::vector<Box> boxes(n);
  std::vector<std::size_t> order(n);
  Vec3 lowest = Vec3::Constant(kNever), highest = Vec3::Constant(-kNever);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = triangles[i];
    boxes[i].lo = x[t[0]].cwiseMin(x[t[1]]).cwiseMin(x[t[2]]);
    boxes[i].hi = x[t[0]].cwiseMax(x[t[1]]).cwiseMax(x[t[2]]);
    lowest = lowest.cwiseMin(boxes[i].lo);
    highest = highest.cwiseMax(boxes[i].lo);
    order[i] = i;
  }
  int axis = 0;
  (highest - lowest).maxCoeff(&axis);
  const int u = (axis + 1) % 3, w = (axis + 2) % 3;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return boxes[a].lo[axis] < boxes[b].lo[axis]; });
  std::vector<IntersectingPair> out;
  std::vector<std::size_t> active;
  for (std::size_t i : order) {
    const Box& bi = boxes[i];
    std::erase_if(active, [&](std::size_t j) { return boxes[j].hi[axis] < bi.lo[axis]; });
    for (std::size_t j : active) {
      const Box& bj = boxes[j];
      if (bj.hi[u] < bi.lo[u] || bi.hi[u] < bj.lo[u] || bj.hi[w] < bi.lo[w] || bi.hi[w] < bj.lo[w])
        continue;
      const auto& ti = triangles[i];
      const auto& tj = triangles[j];
      bool shared = false;
      for (Index a : ti)
        for (Index b : tj) shared = shared || a == b;
      if (shared) continue;
      if (triangles_intersect(x[ti[0]], x[ti[1]], x[ti[2]], x[tj[0]], x[tj[1]], x[tj[2]]))
        out.push_back({std::min(i, j), std::max(i, j)});
    }
    active.push_back(i);
  }
  std::sort(out.begin(), out.end(), [](const IntersectingPair& a, const IntersectingPair& b) {
    return a.a != b.a ? a.a < b.a : a.b < b.b;
  });
  return out;
}

}  // namespace clockwork
