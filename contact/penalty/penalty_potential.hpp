#pragma once
/// One discrete penalty layer (Harmon et al. 2009; DESIGN §2) on a contact pair:
///   V_l = ½ r(l) (d − η(l))²  for d < η(l), else 0,
/// with η(l) = η1 l^(−1/4), r(l) = r1 l³, d the pair's distance (contact/distance/distance.hpp).
/// By the envelope theorem ∂d/∂x_i = w_i n (the closest-point weights are optimal),
/// so ∇_i V = r (d − η) w_i n. The Hessian differentiates that gradient with the
/// weights as smooth functions of x inside the current closest-feature region
/// (face, edge, vertex; interior or clamped edge parameters).
///
/// ContactSystem's layer events run this term: their impulse is `impulse`, their
/// energy `energy` (contact/contact_layers.cpp).
#include <algorithm>
#include <cmath>

#include "contact/distance/distance.hpp"
#include "engine/energy_term.hpp"

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

  /// Layer l of a pair of this type: η(l) and r(l) from η1 (m) and r1 (N/m).
  static PenaltyLayer of(PairType type, double eta1, double r1, int l) {
    return PenaltyLayer{type, layer_stiffness(r1, l), layer_thickness(eta1, l)};
  }
  /// Whether the layer pushes at distance d: inside it.
  bool pushes(double d) const { return d < thickness; }
  /// V at distance d: ½ r (d − η)² inside the layer, 0 outside.
  double energy(double d) const {
    return pushes(d) ? 0.5 * stiffness * (d - thickness) * (d - thickness) : 0.0;
  }
  /// J = h r (η − d), in that order: the impulse −h ∇_i V = J w_i n of an interval h
  /// (the layer event's kick, J w_i n on vertex i; ∇_i V = −J w_i n with h = 1).
  template <typename S>
  S impulse(const S& d, double h) const {
    return h * stiffness * (thickness - d);
  }

  /// The layer event's kick J = r ∫ (η − d(s))₊ ds over its window s ∈ [−h/2, h/2],
  /// d(s) = d + ḋ s (the pair's motion at the tick, linear as the AVI's drift). A window
  /// wholly inside or outside the layer gives h r (η − d) or 0, the kick above: only
  /// a window that the layer's edge d = η cuts differs. There the force r (η − d)₊ has
  /// a kink, and sampling it at the tick is a first-order quadrature error whose sign
  /// is the tick's phase against the crossing: an energy error of order (h ω)² per
  /// entry and exit (1D bounce at h ω = 0.42: ±4.5 % of the normal kinetic energy;
  /// with this kick ±0.17 %). docs/contact.md "Layer edges".
  double window_impulse(double d, double ddot, double h) const {
    const double g0 = thickness - d;         // penetration at the tick
    const double ga = g0 + 0.5 * h * ddot;   // at s = −h/2
    const double gb = g0 - 0.5 * h * ddot;   // at s = +h/2
    if (ga >= 0.0 && gb >= 0.0) return h * stiffness * g0;
    if (ga <= 0.0 && gb <= 0.0) return 0.0;
    // The edge cuts the window: a triangle of height gp over the part inside.
    const double gp = std::max(ga, gb);
    const double inside = h * gp / std::abs(ga - gb);
    return 0.5 * stiffness * gp * inside;
  }

  double value(const StencilPositions<4>& x) const;
  StencilVector<4> gradient(const StencilPositions<4>& x) const;
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool project_psd = false) const;
};

static_assert(EnergyTerm<PenaltyLayer>);

}  // namespace clockwork
