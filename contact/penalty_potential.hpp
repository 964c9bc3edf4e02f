#pragma once
/// One discrete penalty layer (Harmon et al. 2009; DESIGN §2) on a contact pair:
///   V_l = ½ r(l) (d − η(l))²  for d < η(l), else 0,
/// with η(l) = η1 l^(−1/4), r(l) = r1 l³, d the pair's distance (contact/distance.hpp).
/// By the envelope theorem ∂d/∂x_i = w_i n (the closest-point weights are optimal),
/// so ∇_i V = r (d − η) w_i n. The Hessian differentiates that gradient with the
/// weights as smooth functions of x inside the current closest-feature region
/// (face, edge, vertex; interior or clamped edge parameters).
#include <cmath>

#include "contact/distance.hpp"

namespace clockwork {

/// η(l) = η1 l^(−1/4).
inline double layer_thickness(double eta1, int l) { return eta1 * std::pow(double(l), -0.25); }
/// r(l) = r1 l³.
inline double layer_stiffness(double r1, int l) { return r1 * double(l) * double(l) * double(l); }

struct PenaltyLayer {
  static constexpr int kVertices = 4;
  PairType type = PairType::VertexTriangle;
  double stiffness = 0.0;  ///< r(l), N/m
  double thickness = 0.0;  ///< η(l), m

  double value(const StencilPositions<4>& x) const;
  StencilVector<4> gradient(const StencilPositions<4>& x) const;
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool project_psd = false) const;
};

}  // namespace clockwork
