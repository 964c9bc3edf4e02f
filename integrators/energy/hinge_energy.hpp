#pragma once
/// Discrete Shells hinge bending (Grinspun et al. 2003):
///   V = k_b · 3 |ē|² / (Ā_A + Ā_B) · (θ − θ̄)²,
/// θ the signed dihedral angle of the hinge, bars at rest.
///
/// Vertex order: (x0, x1) the shared edge; x2 opposite in triangle A = (x0, x1, x2);
/// x3 opposite in triangle B = (x1, x0, x3). Both triangles are counter-clockwise
/// with consistent orientation, so a flat hinge has θ = 0; with normals
/// n_A = (x1 − x0) × (x2 − x0), n_B = (x0 − x1) × (x3 − x1) and ê the unit edge,
///   θ = atan2((n_A × n_B)·ê, n_A·n_B):
/// lifting x2 or x3 along the common normal makes θ negative.
#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

struct HingeBending {
  static constexpr int kVertices = 4;
  double stiffness = 0.0;   ///< k_b, N·m (J), >= 0
  double weight = 0.0;      ///< 3 |ē|² / (Ā_A + Ā_B), dimensionless
  double rest_angle = 0.0;  ///< θ̄, rad

  static HingeBending from_rest(const StencilPositions<4>& rest, double k_bending);
  /// Signed dihedral angle θ, in (−π, π].
  static double angle(const StencilPositions<4>& x);
  /// ∂θ/∂x (Bridson et al. 2003; Wardetzky et al. 2007).
  static StencilVector<4> angle_gradient(const StencilPositions<4>& x);
  /// angle(x), and angle_gradient(x) into g, bit for bit, in one pass (the edge, the
  /// normals and |e| shared): what gradient() and the implicit tick use.
  static double angle_and_gradient(const StencilPositions<4>& x, StencilVector<4>& g);

  double value(const StencilPositions<4>& x) const;
  StencilVector<4> gradient(const StencilPositions<4>& x) const;
  /// value(x), and gradient(x) into g, bit for bit, sharing the angle (one atan2).
  double value_and_gradient(const StencilPositions<4>& x, StencilVector<4>& g) const;
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool project_psd = false) const;
  /// The Gauss–Newton part 2 k w ∇θ ∇θᵀ: PSD, zero on rigid motions (θ is invariant).
  StencilMatrix<4> material_stiffness(const StencilPositions<4>& x) const;
};

static_assert(EnergyTerm<HingeBending>);

}  // namespace clockwork
