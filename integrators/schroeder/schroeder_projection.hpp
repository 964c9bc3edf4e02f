#pragma once
/// Schroeder, Kwatra, Zheng and Fedkiw's force-distributing projection (§5).
///
/// A subset of the particles (those of the fully-implicit elements) is treated as one
/// rigid body: m̂ = Σ m_i, c = m̂⁻¹ Σ m_i x_i, r_i = x_i − c, Î = Σ m_i r*_i r*_iᵀ
/// (r* the cross-product matrix). A force field f on the subset has net force
/// f̂ = Σ f_i and torque τ̂ = Σ r_i × f_i; the rigid body's accelerations
/// Δv̂ = f̂ / m̂, Δω̂ = Î⁻¹ τ̂ give each particle Δv_i = Δv̂ + Δω̂ × r_i, and the
/// distributed force is f̄_i = m_i Δv_i. With J(v̂, ω̂)_i = v̂ + ω̂ × r_i this is
///
///   P = M J (Jᵀ M J)⁻¹ Jᵀ,   Jᵀ M J = diag(m̂ I, Î)  (r about the centre of mass),
///
/// a rank-6 projection (P² = P), mass-symmetric (M⁻¹ P = Pᵀ M⁻¹), with Jᵀ P = Jᵀ:
/// net force and net torque are preserved. The partial version
/// P_ε = (1 − ε) I + ε P keeps the bulk (rigid) part of the forces and scales the rest by
/// (1 − ε) (ε = ½: "removing half of the non-bulk forces"); Jᵀ P_ε = Jᵀ still holds.
/// Particles outside the subset are left alone.
///
/// In mass-scaled coordinates y = M^{-1/2} f (or y = M^{1/2} v) the same operator is
/// Π = M^{1/2} J (Jᵀ M J)⁻¹ Jᵀ M^{1/2} = M^{-1/2} P M^{1/2}: symmetric, the form the
/// conjugate-gradient solver uses (integrators/schroeder/schroeder_scheme.hpp).
///
/// A subset with fewer than three non-collinear particles has a singular Î; its
/// pseudo-inverse is used (the projection then has rank < 6 but keeps its properties).
#include <Eigen/Dense>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

class ForceDistribution {
 public:
  using Vector = Eigen::VectorXd;

  ForceDistribution() = default;
  /// `subset`: particle indices (each < mass.size(), no repeats); `mass`: per particle,
  /// kg, > 0 on the subset. Throws std::invalid_argument otherwise.
  ForceDistribution(std::vector<Index> subset, const std::vector<double>& mass);

  bool empty() const { return subset_.empty(); }
  const std::vector<Index>& subset() const { return subset_; }

  /// Centre of mass, r_i and Î⁻¹ at stacked positions x (3n). Allocation-free.
  void update(const Vector& x);

  /// f ← P_ε f on the subset (forces, 3n), ε in [0, 1] (asserted; checked by callers).
  void apply_force(Vector& f, double epsilon) const;
  /// y ← Π_ε y on the subset, y mass-scaled (M^{-1/2} f or M^{1/2} v), 3n.
  void apply_scaled(Vector& y, double epsilon) const;

  /// The subset's centre of mass at the last update.
  const Vec3& center() const { return c_; }
  double total_mass() const { return total_mass_; }
  /// ½ Σ m_i |v_i − v̂ − ω̂ × r_i|² over the subset (velocities v, 3n; r_i of the last
  /// update): the kinetic energy of its motion relative to the rigid motion with its
  /// momentum and angular momentum. Allocation-free.
  double deformation_kinetic_energy(const Vector& v) const;

 private:
  /// (f̂, τ̂) of the force field w_i = s_i y_i, and the rigid accelerations from them.
  void rigid_response(const Vector& y, const std::vector<double>& weight, Vec3& dv, Vec3& dw) const;

  std::vector<Index> subset_;
  std::vector<double> mass_;       ///< per subset particle
  std::vector<double> sqrt_mass_;  ///< per subset particle
  std::vector<double> ones_;       ///< per subset particle: 1
  std::vector<Vec3> r_;            ///< per subset particle: x_i − c
  double total_mass_ = 0.0;
  Vec3 c_ = Vec3::Zero();
  Mat3 inertia_inv_ = Mat3::Zero();
};

}  // namespace clockwork
