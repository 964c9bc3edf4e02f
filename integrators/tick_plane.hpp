#pragma once
/// Contact seen by an implicit tick (docs/phantom.md "Obstacles in the tick", "Near
/// pairs in the tick"): a combination of the body's vertices, y(x) = Σ_i w_i x_i at the
/// tick's landing positions x, must stay on the outer side of a plane,
///   n · y(x) ≥ offset.
/// Obstacles: y a point of the body's surface (a vertex, a point of an edge or of a
/// face, weights ≥ 0 summing to 1), offset = n · p(t + h) + clearance, n the direction
/// from the obstacle's closest point p to y at the tick's start, p(t + h) that point
/// carried with the obstacle to the tick's end. Self-contact: y = y_A − y_B the
/// difference of a near element pair's closest points (distance.hpp; signed weights
/// summing to 0), so the plane bounds the pair's gap along its normal. Up to four
/// vertices; a zero weight marks an unused entry. It enters the tick's energy as the
/// one-sided quadratic penalty
///   P(x) = (k/2) max(0, offset − n · y(x))²,
/// value, gradient and Hessian below from the same violation; C¹, piecewise quadratic.
#include <algorithm>
#include <array>

#include "engine/types.hpp"

namespace clockwork {

struct TickPlane {
  static constexpr int kMaxVertices = 4;
  std::array<Index, kMaxVertices> vertices{};  ///< local indices; entries with zero weight unused
  Eigen::Vector4d weights = Eigen::Vector4d(1.0, 0.0, 0.0, 0.0);
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
  double stiffness = 0.0;  ///< k, N/m
  /// Held as a two-sided spring k/2 (offset − n·y)² (it may pull): a linearised step's
  /// one solve cannot switch a plane on or off, so it takes the planes its prediction
  /// lands behind as springs (backward_euler.hpp, max_newton = 1).
  bool two_sided = false;
  /// A tangential anchor of an obstacle contact's friction (SolveContact::add_friction):
  /// two-sided, along a tangent of its contact plane, never a normal load.
  bool friction = false;

  double violation(const Eigen::VectorXd& x) const {
    double height = 0.0;
    for (int i = 0; i < kMaxVertices; ++i)
      if (weights[i] != 0.0) height += weights[i] * normal.dot(x.segment<3>(3 * vertices[i]));
    return two_sided ? offset - height : std::max(0.0, offset - height);
  }
  double value(const Eigen::VectorXd& x) const {
    const double v = violation(x);
    return 0.5 * stiffness * v * v;
  }
  /// Adds ∂P/∂x_i = −k v w_i n to g, for the vertices with `take(vertex)`.
  template <typename Take>
  void add_gradient(const Eigen::VectorXd& x, Eigen::VectorXd& g, Take take) const {
    const double v = violation(x);
    if (v == 0.0) return;  // (a two-sided plane at exactly its offset: no force either)
    for (int i = 0; i < kMaxVertices; ++i)
      if (weights[i] != 0.0 && take(vertices[i]))
        g.segment<3>(3 * vertices[i]) -= stiffness * v * weights[i] * normal;
  }
  /// Adds the Hessian blocks k w_i w_j n nᵀ where the plane pushes (v > 0) through
  /// add(i, j, block) for the vertex pairs with `take` on both.
  template <typename Take, typename Add>
  void add_hessian(const Eigen::VectorXd& x, Take take, Add add) const {
    if (!two_sided && violation(x) == 0.0) return;
    const Mat3 nn = stiffness * normal * normal.transpose();
    for (int i = 0; i < kMaxVertices; ++i)
      for (int j = 0; j < kMaxVertices; ++j)
        if (weights[i] != 0.0 && weights[j] != 0.0 && take(vertices[i]) && take(vertices[j]))
          add(vertices[i], vertices[j], Mat3(weights[i] * weights[j] * nn));
  }
};

}  // namespace clockwork
