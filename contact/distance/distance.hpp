#pragma once
/// Closest points of contact primitives (DESIGN §2): vertex–triangle and edge–edge.
///
/// A pair is a 4-vertex stencil split into side A and side B:
///   vertex–triangle: x0 is the vertex (side A), x1 x2 x3 the triangle (side B);
///   edge–edge:       x0 x1 the first edge (side A), x2 x3 the second (side B).
/// The closest points are y_A = Σ_A w_i x_i and y_B = −Σ_B w_i x_i with weights
/// w_i >= 0 on side A summing to 1 and w_i <= 0 on side B summing to −1, so
///   y = Σ_i w_i x_i = y_A − y_B,  d = |y|,
/// and an impulse J n (n = y / d) applied as w_i J n to each vertex conserves linear
/// and angular momentum (Σ w_i = 0 and Σ w_i x_i ∥ n).
#include <cstdint>

#include "engine/types.hpp"

namespace clockwork {

enum class PairType : std::uint8_t { VertexTriangle, EdgeEdge };

struct PairClosest {
  Eigen::Vector4d w = Eigen::Vector4d::Zero();  ///< signed barycentric weights
  Vec3 y = Vec3::Zero();                        ///< y_A − y_B
  double distance = 0.0;                        ///< |y|
};

/// Closest point of triangle (a, b, c) to p, as barycentric coordinates (sum 1).
/// Degenerate triangles (collinear or coincident vertices) are handled through
/// their edges.
Vec3 closest_point_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

/// Closest points of segments p0p1 and q0q1 as parameters (s, t) in [0, 1]²:
/// y_p = p0 + s (p1 − p0), y_q = q0 + t (q1 − q0). Parallel segments get one of
/// their (non-unique) closest pairs; zero-length segments are points.
Eigen::Vector2d closest_segment_segment(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                        const Vec3& q1);

PairClosest pair_closest(PairType type, const StencilPositions<4>& x);

/// Distance of two triangles that do not intersect: columns 0–2 of x are triangle A,
/// 3–5 triangle B (a point is a triangle with three equal vertices). It is the least
/// of the 6 vertex–triangle and 9 edge–edge distances; y = y_A − y_B. For
/// intersecting triangles the result is not their distance (it may be positive):
/// callers certify separation on the vertices themselves (separation_slab).
struct TriangleGap {
  Vec3 y = Vec3::Zero();
  double distance = kNever;
};
TriangleGap triangle_pair_gap(const StencilPositions<6>& x);

}  // namespace clockwork
