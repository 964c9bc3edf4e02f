#pragma once
/// Constant-strain triangle with the St. Venant–Kirchhoff material (the membrane of
/// the phantom-mesh paper §4, [ZTZ05]):
///   F = [x1 − x0, x2 − x0] D_m^{-1}  (3×2),  E = ½ (FᵀF − I),
///   Ψ = μ E:E + ½ λ (tr E)²,  V = A Ψ,
/// with D_m the rest edges in a 2D frame of the rest triangle and A its rest area.
/// μ, λ are 2D Lamé parameters in N/m.
#include <utility>

#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

struct MembraneStVK {
  static constexpr int kVertices = 3;
  Eigen::Matrix2d Dm_inv = Eigen::Matrix2d::Identity();
  double area = 0.0;    ///< rest area, m²
  double mu = 0.0;      ///< N/m
  double lambda = 0.0;  ///< N/m

  /// Rest data from rest positions; the rest triangle must not be degenerate.
  static MembraneStVK from_rest(const StencilPositions<3>& rest, double mu, double lambda);
  /// Plane-stress Lamé parameters from a 2D Young's modulus (N/m) and Poisson ratio:
  /// μ = E / (2 (1 + ν)), λ = E ν / (1 − ν²).
  static std::pair<double, double> lame_plane_stress(double young, double poisson);
  /// Zero or tiny area relative to the longest edge squared (1e-12).
  static bool is_degenerate(const StencilPositions<3>& rest);

  double value(const StencilPositions<3>& x) const;
  StencilVector<3> gradient(const StencilPositions<3>& x) const;
  /// value(x), and gradient(x) into g, bit for bit, sharing F and E.
  double value_and_gradient(const StencilPositions<3>& x, StencilVector<3>& g) const;
  StencilMatrix<3> hessian(const StencilPositions<3>& x, bool project_psd = false) const;
  /// The material (Gauss–Newton) part of the Hessian, A ∂Eᵀ C ∂E, without the stress
  /// term: PSD, and zero on rigid motions of x (a rotation leaves E's rate at 0) —
  /// the stiffness of strain-rate (Rayleigh) damping that does not brake rotations.
  StencilMatrix<3> material_stiffness(const StencilPositions<3>& x) const;

 private:
  StencilMatrix<3> second_derivative(const StencilPositions<3>& x, bool with_stress) const;
};

static_assert(EnergyTerm<MembraneStVK>);

}  // namespace clockwork
