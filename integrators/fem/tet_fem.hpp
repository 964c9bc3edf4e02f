#pragma once
/// Tetrahedral finite elements for elastic solids (issue 6; Zhao et al. §3 use linear
/// and corotational linear FEM [ZTZ05, MG04]). Each element gives value, gradient and
/// Hessian from the same local data (DESIGN §5); TetFemModel assembles them over a
/// mesh for implicit solves.
///
/// Linear FEM: V = ½ (x − X)ᵀ K_e (x − X), K_e = vol Bᵀ C B for the isotropic C.
/// Corotational: F = R S (polar decomposition, det F > 0), strain ε = S − I,
///   Ψ = μ ε:ε + ½ λ (tr ε)²,  V = vol Ψ;
/// its gradient equals the warped force R K_e (Rᵀ x − X) of [MG04] (the dR terms
/// vanish because the stress is symmetric); the Hessian includes dR (exact tangent).
#include <Eigen/Sparse>
#include <array>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

enum class FemKind { Linear, Corotational };

/// Isotropic material of a tet: Young's modulus (Pa, > 0), Poisson ratio (in
/// [0, 0.5)), density (kg/m³, > 0).
struct TetMaterial {
  double young = 0.0;
  double poisson = 0.0;
  double density = 0.0;
};

/// 3D Lamé parameters: μ = E / (2 (1 + ν)), λ = E ν / ((1 + ν)(1 − 2ν)).
std::pair<double, double> lame_3d(double young, double poisson);

/// det[x1 − x0, x2 − x0, x3 − x0] / 6, m³ (positive for a positively oriented tet).
double signed_volume(const StencilPositions<4>& x);

/// Rotation R of the polar decomposition F = R S, from the signed SVD F = U Σ Vᵀ with U,
/// V rotations (a reflection goes into the sign of the smallest σ): R = U Vᵀ is a
/// rotation, also for an inverted element (det F < 0).
Mat3 polar_rotation(const Mat3& F);

struct LinearTet {
  static constexpr int kVertices = 4;
  StencilPositions<4> rest;
  StencilMatrix<4> K;  ///< 12 × 12 element stiffness, vertex-major

  static LinearTet from_rest(const StencilPositions<4>& rest, double young, double poisson);
  double value(const StencilPositions<4>& x) const;
  StencilVector<4> gradient(const StencilPositions<4>& x) const;
  /// Constant; PSD already.
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool project_psd = false) const;
  StencilVector<4> hessian_product(const StencilPositions<4>&, const StencilVector<4>& u) const {
    return K * u;
  }
};

struct CorotationalTet {
  static constexpr int kVertices = 4;
  Mat3 Dm_inv = Mat3::Identity();  ///< inverse rest edge matrix [X1−X0, X2−X0, X3−X0]⁻¹
  double volume = 0.0;             ///< rest volume, m³
  double mu = 0.0, lambda = 0.0;   ///< Pa
  /// The shape-gradient matrix (rows b_aᵀ, 4 × 3) = Q R, Q with orthonormal columns:
  /// dF = [dx_0 … dx_3] Q R, so the Hessian acts on the 9 coordinates [dx_a] Q only (the
  /// other 3 are translations), where its PSD projection is computed (tet_fem.cpp).
  Eigen::Matrix<double, 4, 3> Q = Eigen::Matrix<double, 4, 3>::Zero();
  Mat3 R = Mat3::Zero();

  static CorotationalTet from_rest(const StencilPositions<4>& rest, double young, double poisson);
  double value(const StencilPositions<4>& x) const;
  StencilVector<4> gradient(const StencilPositions<4>& x) const;
  /// Exact tangent (with the derivative of R); projected to PSD on request (its
  /// negative eigenvalues clamped to 0, to rounding the same matrix as project_to_psd).
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool project_psd = false) const;
  /// hessian(x) · u (unprojected), without forming the Hessian: one directional
  /// derivative of the stress.
  StencilVector<4> hessian_product(const StencilPositions<4>& x, const StencilVector<4>& u) const;
};

/// A whole mesh: lumped masses, energy, internal force and stiffness, assembled in
/// parallel (TBB) and summed in a fixed order (results independent of thread count);
/// an AssembledEnergy (engine/energy_term.hpp).
/// Element results go through scratch buffers inside the model: one model must not be
/// evaluated from two threads at once (copies share the buffers).
class TetFemModel {
 public:
  using Vector = Eigen::VectorXd;
  using Sparse = Eigen::SparseMatrix<double>;

  /// `materials` has one entry per tet. Rest tets must be positively oriented (the
  /// caller validated the mesh).
  TetFemModel(std::vector<Vec3> rest, std::vector<std::array<Index, 4>> tets,
              const std::vector<TetMaterial>& materials, FemKind kind);

  /// One model of several meshes side by side (vertices and tets of each part in turn,
  /// its indices offset by the vertices before it): the same elements and lumped masses,
  /// one stiffness pattern. All parts linear or all corotational (std::invalid_argument).
  /// The joint step of solids in contact (integrators/implicit/joint_solids.hpp).
  static TetFemModel joined(std::span<const TetFemModel* const> parts);

  FemKind kind() const;
  std::size_t vertex_count() const;
  std::size_t tet_count() const;
  const std::vector<std::array<Index, 4>>& tets() const;
  /// Rest positions stacked (3n).
  const Vector& rest_positions() const;
  /// Lumped mass per vertex (ρ vol / 4 from each of its tets), kg.
  const std::vector<double>& lumped_mass() const;

  /// Elastic energy E at stacked positions x (3n), J.
  double value(const Vector& x) const;
  /// ∇E(x) (3n): Zhao et al.'s internal force f_int (the force on the vertices is −f_int).
  void gradient(const Vector& x, Vector& out) const;
  /// The stiffness K = ∇²E(x), element blocks projected to PSD on request; the sparsity
  /// pattern is the same for every call (all 3×3 vertex-pair blocks of the mesh, and
  /// every vertex's diagonal block), compressed; `out` (empty or from a previous call)
  /// is reused without allocation.
  void hessian(const Vector& x, Sparse& out, bool project_psd = false) const;
  /// K(x) u (3n) with the unprojected K(x), element by element without assembling K
  /// (Rayleigh damping at the iterate, backward_euler.hpp); for linear FEM K u.
  void stiffness_product(const Vector& x, const Vector& u, Vector& out) const;
  /// The same for the listed tets alone (3n × 3n, compressed; allocates): the split of
  /// K into a region's interface tets and the rest that the conservative multi-rate
  /// coupling needs.
  void stiffness_of(const Vector& x, const std::vector<std::size_t>& tets, Sparse& out,
                    bool project_psd = false) const;

 private:
  TetFemModel() = default;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

static_assert(EnergyTerm<LinearTet>);
static_assert(EnergyTerm<CorotationalTet>);
static_assert(AssembledEnergy<TetFemModel>);

}  // namespace clockwork
