#include "contact/distance/distance.hpp"

#include <algorithm>
#include <cmath>

namespace clockwork {

namespace {

/// Parameter of the closest point of segment a + s (b − a), s in [0, 1], to p.
double closest_on_segment(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double len2 = ab.squaredNorm();
  if (len2 == 0.0) return 0.0;
  return std::clamp((p - a).dot(ab) / len2, 0.0, 1.0);
}

/// Closest point on a degenerate triangle: the best of its three edges.
Vec3 closest_point_degenerate(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 v[3] = {a, b, c};
  Vec3 best(1.0, 0.0, 0.0);
  double best_d2 = kNever;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3;
    const double s = closest_on_segment(p, v[i], v[j]);
    const double d2 = (p - (v[i] + s * (v[j] - v[i]))).squaredNorm();
    if (d2 < best_d2) {
      best_d2 = d2;
      best.setZero();
      best[i] = 1.0 - s;
      best[j] = s;
    }
  }
  return best;
}

}  // namespace

Vec3 closest_point_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Voronoi-region walk (Ericson, Real-Time Collision Detection §5.1.5): vertex
  // regions, then edge regions, then the face; each region's test reuses the dot
  // products of the previous ones.
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double area2 = ab.cross(ac).squaredNorm();
  const double scale = std::max({ab.squaredNorm(), ac.squaredNorm(), (c - b).squaredNorm()});
  if (!(area2 > 1e-24 * scale * scale)) return closest_point_degenerate(p, a, b, c);

  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return {1.0, 0.0, 0.0};
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return {0.0, 1.0, 0.0};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return {1.0 - v, v, 0.0};
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return {0.0, 0.0, 1.0};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return {1.0 - w, 0.0, w};
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return {0.0, 1.0 - w, w};
  }
  const double denom = 1.0 / (va + vb + vc);
  const double v = vb * denom, w = vc * denom;
  return {1.0 - v - w, v, w};
}

Eigen::Vector2d closest_segment_segment(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                        const Vec3& q1) {
  // Ericson §5.1.9: minimise over s, clamp, re-solve t, clamp, re-solve s.
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  if (a == 0.0 && e == 0.0) return {0.0, 0.0};
  if (a == 0.0) return {0.0, std::clamp(f / e, 0.0, 1.0)};
  const double c = d1.dot(r);
  if (e == 0.0) return {std::clamp(-c / a, 0.0, 1.0), 0.0};
  const double b = d1.dot(d2);
  const double denom = a * e - b * b;  // >= 0; zero (relative) when parallel
  // Parallel segments: any s works for the infinite lines; take s = 0 and let the
  // clamping below find the closest pair of the finite segments.
  double s = denom > 1e-14 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1.0) {
    t = 1.0;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return {s, t};
}

PairClosest pair_closest(PairType type, const StencilPositions<4>& x) {
  PairClosest out;
  if (type == PairType::VertexTriangle) {
    const Vec3 b = closest_point_triangle(x.col(0), x.col(1), x.col(2), x.col(3));
    out.w = Eigen::Vector4d(1.0, -b[0], -b[1], -b[2]);
  } else {
    const Eigen::Vector2d st = closest_segment_segment(x.col(0), x.col(1), x.col(2), x.col(3));
    out.w = Eigen::Vector4d(1.0 - st[0], st[0], -(1.0 - st[1]), -st[1]);
  }
  out.y = x * out.w;
  out.distance = out.y.norm();
  return out;
}

TriangleGap triangle_pair_gap(const StencilPositions<6>& x) {
  TriangleGap out;
  const auto keep = [&](const Vec3& y) {
    const double d = y.norm();
    if (d < out.distance) {
      out.distance = d;
      out.y = y;
    }
  };
  for (int i = 0; i < 3; ++i) {
    // Vertex of A against B, and vertex of B against A (sign flipped to y_A − y_B).
    const Vec3 b = closest_point_triangle(x.col(i), x.col(3), x.col(4), x.col(5));
    keep(x.col(i) - (b[0] * x.col(3) + b[1] * x.col(4) + b[2] * x.col(5)));
    const Vec3 a = closest_point_triangle(x.col(3 + i), x.col(0), x.col(1), x.col(2));
    keep(a[0] * x.col(0) + a[1] * x.col(1) + a[2] * x.col(2) - x.col(3 + i));
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Vec3 &p0 = x.col(i), &p1 = x.col((i + 1) % 3);
      const Vec3 &q0 = x.col(3 + j), &q1 = x.col(3 + (j + 1) % 3);
      const Eigen::Vector2d st = closest_segment_segment(p0, p1, q0, q1);
      keep((p0 + st[0] * (p1 - p0)) - (q0 + st[1] * (q1 - q0)));
    }
  return out;
}

}  // namespace clockwork
