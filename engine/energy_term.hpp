#pragma once
/// The one energy interface of Clockwork, at its two levels (issue 43; STYLE practice 3).
///
/// Per stencil (`EnergyTerm`): a potential V(x) over the N = kVertices positions of a
/// stencil, x a 3 × N matrix, with
///   value(x)                 V, J
///   gradient(x)              ∇V, vertex-major (3N)
///   hessian(x, project_psd)  ∇²V (3N × 3N), symmetric; with project_psd its negative
///                            eigenvalues clamped to 0 (projected Newton), a no-op where
///                            ∇²V is PSD already.
/// Explicit AVI events (ForceSource) kick with −h ∇V, implicit solves assemble the
/// Hessians. Membranes, hinges, springs, gravity, the tet elements, the penalty layers
/// and the implicit ticks' contact planes are such terms.
///
/// Assembled over a body (`AssembledEnergy`): the same three quantities of the body's
/// stacked positions X (3n):
///   value(X)                      E(X)
///   gradient(X, out)              out = ∇E(X), resized to 3n
///   hessian(X, out, project_psd)  out = ∇²E(X) (3n × 3n, sparse, compressed), the element
///                                 blocks projected to PSD on request
/// BodyPotential (a phantom cloth), TetFemModel (a solid) and one TickPlane are such.
///
/// Adding a term: write a struct with kVertices and the three functions above (the
/// Hessian exact, from the same local quantities as the gradient), add
/// `static_assert(EnergyTerm<YourTerm>)` next to it, and add one case to
/// tests/integrators/energy/test_energy_derivatives.cpp, which checks the gradient and the
/// Hessian by central differences and the projection's definiteness (README "Energies").
#include <Eigen/Sparse>
#include <concepts>

#include "engine/types.hpp"

namespace clockwork {

template <typename Term>
concept EnergyTerm = requires(const Term& e, const StencilPositions<Term::kVertices>& x,
                              bool project_psd) {
  requires Term::kVertices >= 1;
  { e.value(x) } -> std::convertible_to<double>;
  { e.gradient(x) } -> std::convertible_to<StencilVector<Term::kVertices>>;
  { e.hessian(x, project_psd) } -> std::convertible_to<StencilMatrix<Term::kVertices>>;
};

template <typename Energy>
concept AssembledEnergy = requires(const Energy& e, const Eigen::VectorXd& X, Eigen::VectorXd& g,
                                   Eigen::SparseMatrix<double>& H, bool project_psd) {
  { e.value(X) } -> std::convertible_to<double>;
  e.gradient(X, g);
  e.hessian(X, H, project_psd);
};

}  // namespace clockwork
