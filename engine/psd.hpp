#pragma once
/// Projection of a symmetric matrix to the nearest positive semi-definite one
/// (clamp negative eigenvalues to zero), used by projected Newton
/// (lecture-implicit-euler-methods.md, "definiteness fix").
#include <Eigen/Eigenvalues>

namespace clockwork {

template <typename Derived>
void project_to_psd(Eigen::MatrixBase<Derived>& H) {
  using Matrix = typename Derived::PlainObject;
  Eigen::SelfAdjointEigenSolver<Matrix> eig(H.eval());
  auto lambda = eig.eigenvalues().cwiseMax(0.0).eval();
  H = eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
}

}  // namespace clockwork
