#pragma once
/// An independent intersection checker for triangle meshes: exact orientation
/// predicates (a floating-point filter with an exact rational fallback), an exact
/// closed triangle–triangle test, and a sort-and-sweep broad phase. It shares no code
/// with the contact certificates it is meant to audit.
#include <array>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

/// Sign of det[a − d; b − d; c − d] (positive when d is below the plane of a, b, c
/// seen counter-clockwise), exactly.
int orient3d_sign(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);
/// Sign of det[a − c; b − c] for 2D points, exactly.
int orient2d_sign(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c);

/// True if the closed triangles share at least one point. Exact for any input,
/// coplanar and degenerate (collinear, coincident) triangles included.
bool triangles_intersect(const Vec3& p0, const Vec3& p1, const Vec3& p2, const Vec3& q0,
                         const Vec3& q1, const Vec3& q2);

struct IntersectingPair {
  std::size_t a, b;  ///< indices into the triangle list, a < b
};

/// All pairs of intersecting triangles that share no vertex index, sorted.
std::vector<IntersectingPair> find_intersections(
    const std::vector<Vec3>& positions, const std::vector<std::array<Index, 3>>& triangles);

}  // namespace clockwork
