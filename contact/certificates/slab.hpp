#pragma once
/// Separation-slab certificates (DESIGN §2, "Certificates"; phantom-mesh paper §4,
/// "Separation slab certificate events").
///
/// A slab is a plane with fixed unit normal n whose offset moves linearly,
///   m(t) = m0 + m_rate (t − t0),
/// with every side-A vertex at n·x ≤ m(t) − half_width and every side-B vertex at
/// n·x ≥ m(t) + half_width. Both sides are convex hulls of their vertices, so
/// while this holds their distance is at least 2·half_width = the certified
/// threshold. Under linear vertex trajectories each inequality is linear in t, so
/// the failure time is the earliest root of at most N linear functions: exact,
/// and never later than the first time the distance drops below the threshold.
///
/// The same slab serves an element pair (N = 4: vertex–triangle or edge–edge) and a
/// pair of triangles (N = 6: the paper's slab, certifying all 15 element pairs).
#include <algorithm>
#include <optional>

#include "contact/distance/distance.hpp"

namespace clockwork {

struct Slab {
  Vec3 normal = Vec3::UnitX();  ///< from side A to side B
  double m0 = 0.0;              ///< plane offset at t0, m
  double m_rate = 0.0;          ///< m/s
  double t0 = 0.0;
  double half_width = 0.0;      ///< threshold / 2
};

/// Per-vertex velocity-envelope slacks (Contingency::velocity_slack) or position-envelope radii
/// (Contingency::envelope_radius) of a stencil.
template <int N>
using StencilSlack = Eigen::Matrix<double, 1, N>;

/// The slab with unit normal n (side A to side B) through the middle of the gap the
/// vertices leave along n; nothing unless that gap exceeds `threshold`. Columns
/// [0, split) of x are side A, the rest side B. The gap is measured on the vertices
/// themselves, so rounding in n cannot make the certificate claim more than holds.
/// The plane moves at the mean of the fastest approach speeds of the two sides
/// (max over A, min over B of n·v): if those two vertices are the extreme ones, both
/// reach the slab at once, when the gap has closed to the threshold — the longest
/// life any slab with this normal can have.
///
/// With radii ρ_i > 0 a vertex is a ball of that radius around x_i (a position
/// envelope, Contingency::enable_position_envelopes; its v_i is then 0): the slab keeps
/// the whole ball on its side.
template <int N>
std::optional<Slab> separation_slab(const StencilPositions<N>& x, int split, const Vec3& n,
                                    const StencilPositions<N>& v, double t0, double threshold,
                                    const StencilSlack<N>& radius = StencilSlack<N>::Zero()) {
  double a_max = -kNever, b_min = kNever, va_max = -kNever, vb_min = kNever;
  for (int i = 0; i < N; ++i) {
    const double s = n.dot(x.col(i)), r = n.dot(v.col(i));
    if (i < split) {
      a_max = std::max(a_max, s + radius[i]);
      va_max = std::max(va_max, r);
    } else {
      b_min = std::min(b_min, s - radius[i]);
      vb_min = std::min(vb_min, r);
    }
  }
  if (!(b_min - a_max > threshold)) return std::nullopt;
  Slab slab;
  slab.normal = n;
  slab.t0 = t0;
  slab.half_width = 0.5 * threshold;
  slab.m0 = 0.5 * (a_max + b_min);
  slab.m_rate = 0.5 * (va_max + vb_min);
  return slab;
}

/// Earliest time >= t_now at which a vertex leaves its side of the slab, given
/// positions x at t_now and constant velocities v; kNever if none does. If the slab
/// is already violated at t_now, returns t_now. With slacks δ_i > 0 the time holds for
/// every velocity history with |v_i(t) − v_i| ≤ δ_i (velocity envelopes): each margin
/// then shrinks at most δ_i faster. A radius ρ_i > 0 makes vertex i a ball around x_i
/// (its v_i and δ_i 0: a position envelope), whose margin is ρ_i less.
template <int N>
double slab_failure_time(const Slab& slab, int split, const StencilPositions<N>& x,
                         const StencilPositions<N>& v, double t_now, const StencilSlack<N>& slack,
                         const StencilSlack<N>& radius = StencilSlack<N>::Zero()) {
  const double m_now = slab.m0 + slab.m_rate * (t_now - slab.t0);
  double tf = kNever;
  for (int i = 0; i < N; ++i) {
    // Margin g(t) = g0 + g_rate (t − t_now) must stay >= 0.
    double g0, g_rate;
    if (i < split) {
      g0 = (m_now - slab.half_width) - slab.normal.dot(x.col(i)) - radius[i];
      g_rate = slab.m_rate - slab.normal.dot(v.col(i)) - slack[i];
    } else {
      g0 = slab.normal.dot(x.col(i)) - (m_now + slab.half_width) - radius[i];
      g_rate = slab.normal.dot(v.col(i)) - slab.m_rate - slack[i];
    }
    if (g0 <= 0.0) return t_now;
    // Shortened by a few ulps so that rounding never moves the root past the
    // true one.
    if (g_rate < 0.0) tf = std::min(tf, t_now + (g0 / -g_rate) * (1.0 - 1e-12));
  }
  return tf;
}

/// The same with one slack δ for every vertex.
template <int N>
double slab_failure_time(const Slab& slab, int split, const StencilPositions<N>& x,
                         const StencilPositions<N>& v, double t_now, double slack = 0.0) {
  return slab_failure_time<N>(slab, split, x, v, t_now, StencilSlack<N>::Constant(slack));
}

/// Number of side-A vertices of an element pair's stencil.
inline int side_a_count(PairType type) { return type == PairType::VertexTriangle ? 1 : 2; }

/// A slab certifying distance > threshold at t0 with normal along the closest-point
/// direction, or nothing if the pair is not farther than `threshold` (or touches).
std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x,
                              const StencilPositions<4>& v, double t0, double threshold);
/// The same from the pair's closest points `c` at x, already known.
std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x, const PairClosest& c,
                              const StencilPositions<4>& v, double t0, double threshold);

inline double slab_failure_time(const Slab& slab, PairType type, const StencilPositions<4>& x,
                                const StencilPositions<4>& v, double t_now,
                                const StencilSlack<4>& slack = StencilSlack<4>::Zero()) {
  return slab_failure_time<4>(slab, side_a_count(type), x, v, t_now, slack);
}

}  // namespace clockwork
