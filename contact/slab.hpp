#pragma once
/// Separation-slab certificates (DESIGN §2, "Certificates").
///
/// A slab is a plane with fixed unit normal n whose offset moves linearly,
///   m(t) = m0 + m_rate (t − t0),
/// with every side-A vertex at n·x ≤ m(t) − half_width and every side-B vertex at
/// n·x ≥ m(t) + half_width. Both primitives are convex hulls of their vertices, so
/// while this holds their distance is at least 2·half_width = the certified
/// threshold. Under linear vertex trajectories each inequality is linear in t, so
/// the failure time is the earliest root of at most four linear functions: exact,
/// and never later than the first time the distance drops below the threshold.
#include <optional>

#include "contact/distance.hpp"

namespace clockwork {

struct Slab {
  Vec3 normal = Vec3::UnitX();  ///< from side A to side B
  double m0 = 0.0;              ///< plane offset at t0, m
  double m_rate = 0.0;          ///< m/s
  double t0 = 0.0;
  double half_width = 0.0;      ///< threshold / 2
};

/// A slab certifying distance > threshold at t0 with normal along the closest-point
/// direction, or nothing if the pair is not farther than `threshold` (or touches).
/// The plane moves with the mean normal velocity of the two closest points, which
/// splits the approach speed evenly between both sides.
std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x,
                              const StencilPositions<4>& v, double t0, double threshold);

/// Earliest time >= t_now at which a vertex leaves its side of the slab, given
/// positions x at t_now and constant velocities v; kNever if none does. If the slab
/// is already violated at t_now, returns t_now.
double slab_failure_time(const Slab& slab, PairType type, const StencilPositions<4>& x,
                         const StencilPositions<4>& v, double t_now);

}  // namespace clockwork
