#pragma once
/// Wind on a triangle: a velocity-dependent force, not a potential.
///
/// Model: with area vector N = ½ (x1 − x0) × (x2 − x0) (|N| = area, n = N / |N|) and
/// the wind relative to the triangle u = w − v̄ (v̄ the mean vertex velocity), the
/// triangle receives the normal drag force
///     F = c · (u·N) · n   (N),  c = `drag` in kg/(m²·s),
/// i.e. proportional to the flux of relative wind through the triangle, along its
/// normal; each vertex receives F / 3. It vanishes for wind along the surface and
/// for a degenerate triangle. Explicit events apply the impulse h F; implicit solves
/// use the Jacobians.
#include "engine/types.hpp"

namespace clockwork {

struct WindForce {
  static constexpr int kVertices = 3;
  Vec3 wind_velocity = Vec3::Zero();  ///< w, m/s
  double drag = 0.0;                  ///< c, kg/(m²·s), >= 0

  using Vector9 = Eigen::Matrix<double, 9, 1>;
  using Matrix9 = Eigen::Matrix<double, 9, 9>;

  Vector9 force(const StencilPositions<3>& x, const StencilPositions<3>& v) const;
  /// ∂F/∂x (exact, forward-mode differentiation of `force`).
  Matrix9 force_jacobian_x(const StencilPositions<3>& x, const StencilPositions<3>& v) const;
  /// ∂F/∂v = −(c/9) N Nᵀ / |N| in every 3×3 block.
  Matrix9 force_jacobian_v(const StencilPositions<3>& x, const StencilPositions<3>& v) const;
};

}  // namespace clockwork
