#include "contact/slab.hpp"

#include <algorithm>

namespace clockwork {

namespace {
int side_a_count(PairType type) { return type == PairType::VertexTriangle ? 1 : 2; }
}  // namespace

std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x,
                              const StencilPositions<4>& v, double t0, double threshold) {
  const PairClosest c = pair_closest(type, x);
  if (!(c.distance > threshold) || c.distance == 0.0) return std::nullopt;
  const Vec3 n = (-c.y / c.distance).normalized();
  // The gap is measured on the vertices themselves, so rounding in n or in the
  // closest points cannot make the certificate claim more than holds.
  const int split = side_a_count(type);
  double a_max = -kNever, b_min = kNever;
  for (int i = 0; i < 4; ++i) {
    const double s = n.dot(x.col(i));
    if (i < split) a_max = std::max(a_max, s);
    else b_min = std::min(b_min, s);
  }
  if (!(b_min - a_max > threshold)) return std::nullopt;
  Slab slab;
  slab.normal = n;
  slab.t0 = t0;
  slab.half_width = 0.5 * threshold;
  slab.m0 = 0.5 * (a_max + b_min);
  Vec3 va = Vec3::Zero(), vb = Vec3::Zero();
  for (int i = 0; i < 4; ++i) (i < split ? va : vb) += std::abs(c.w[i]) * v.col(i);
  slab.m_rate = 0.5 * n.dot(va + vb);
  return slab;
}

double slab_failure_time(const Slab& slab, PairType type, const StencilPositions<4>& x,
                         const StencilPositions<4>& v, double t_now) {
  const int split = side_a_count(type);
  const double m_now = slab.m0 + slab.m_rate * (t_now - slab.t0);
  double tf = kNever;
  for (int i = 0; i < 4; ++i) {
    // Margin g(t) = g0 + g_rate (t − t_now) must stay >= 0.
    double g0, g_rate;
    if (i < split) {
      g0 = (m_now - slab.half_width) - slab.normal.dot(x.col(i));
      g_rate = slab.m_rate - slab.normal.dot(v.col(i));
    } else {
      g0 = slab.normal.dot(x.col(i)) - (m_now + slab.half_width);
      g_rate = slab.normal.dot(v.col(i)) - slab.m_rate;
    }
    if (g0 <= 0.0) return t_now;
    // Shortened by a few ulps so that rounding never moves the root past the
    // true one.
    if (g_rate < 0.0) tf = std::min(tf, t_now + (g0 / -g_rate) * (1.0 - 1e-12));
  }
  return tf;
}

}  // namespace clockwork
