#include "integrators/block_cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <cassert>

namespace clockwork {

bool VertexBlockCholesky::compute(const Sparse& A) {
  if (A.rows() != A.cols() || A.rows() % 3 != 0) return false;
  const Eigen::Index n = A.rows() / 3;
  // Fill-reducing order of the vertex graph: a vertex's DOFs stay adjacent.
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(A.nonZeros()));
  for (Eigen::Index c = 0; c < A.outerSize(); ++c)
    for (Sparse::InnerIterator it(A, c); it; ++it) t.emplace_back(it.row() / 3, it.col() / 3, 1.0);
  Sparse graph(n, n);
  graph.setFromTriplets(t.begin(), t.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> new_to_old;
  Eigen::AMDOrdering<int>()(graph, new_to_old);
  std::vector<int> position(static_cast<std::size_t>(n));
  for (Eigen::Index k = 0; k < n; ++k) position[new_to_old.indices()[k]] = static_cast<int>(k);
  // A in that order, factorised by Eigen without further reordering.
  t.clear();
  for (Eigen::Index c = 0; c < A.outerSize(); ++c)
    for (Sparse::InnerIterator it(A, c); it; ++it)
      t.emplace_back(3 * position[it.row() / 3] + it.row() % 3,
                     3 * position[it.col() / 3] + it.col() % 3, it.value());
  Sparse permuted(A.rows(), A.cols());
  permuted.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLLT<Sparse, Eigen::Lower, Eigen::NaturalOrdering<int>> llt(permuted);
  if (llt.info() != Eigen::Success) return false;
  const Sparse L = llt.matrixL();
  // Regroup L's columns 3J..3J+2 into 3 × 3 blocks.
  diag_.resize(static_cast<std::size_t>(n));
  diag_inv_.resize(static_cast<std::size_t>(n));
  col_start_.assign(1, 0);
  row_.clear();
  block_.clear();
  std::vector<int> slot(static_cast<std::size_t>(n), -1);  // block of row I in column J
  for (Eigen::Index J = 0; J < n; ++J) {
    Eigen::Matrix3d d = Eigen::Matrix3d::Zero();
    const int first = static_cast<int>(row_.size());
    for (int c = 0; c < 3; ++c)
      for (Sparse::InnerIterator it(L, 3 * J + c); it; ++it) {
        const Eigen::Index I = it.row() / 3;
        if (I == J) {
          d(it.row() % 3, c) = it.value();
          continue;
        }
        int& s = slot[static_cast<std::size_t>(I)];
        if (s < first) {
          s = static_cast<int>(row_.size());
          row_.push_back(3 * new_to_old.indices()[I]);
          block_.push_back(Eigen::Matrix3d::Zero());
        }
        block_[static_cast<std::size_t>(s)](it.row() % 3, c) = it.value();
      }
    col_start_.push_back(static_cast<int>(row_.size()));
    diag_[static_cast<std::size_t>(J)] = 3 * new_to_old.indices()[J];
    diag_inv_[static_cast<std::size_t>(J)] =
        d.triangularView<Eigen::Lower>().solve(Eigen::Matrix3d::Identity());
  }
  return true;
}

void VertexBlockCholesky::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
  assert(x.size() == rows());
  const std::size_t n = diag_.size();
  // L y = x, column by column.
  for (std::size_t J = 0; J < n; ++J) {
    const Eigen::Vector3d y = diag_inv_[J] * x.segment<3>(diag_[J]);
    x.segment<3>(diag_[J]) = y;
    for (int k = col_start_[J]; k < col_start_[J + 1]; ++k)
      x.segment<3>(row_[static_cast<std::size_t>(k)]).noalias() -=
          block_[static_cast<std::size_t>(k)] * y;
  }
  // Lᵀ z = y, row by row of Lᵀ (column J of L).
  for (std::size_t J = n; J-- > 0;) {
    Eigen::Vector3d s = x.segment<3>(diag_[J]);
    for (int k = col_start_[J]; k < col_start_[J + 1]; ++k)
      s.noalias() -= block_[static_cast<std::size_t>(k)].transpose() *
                     x.segment<3>(row_[static_cast<std::size_t>(k)]);
    x.segment<3>(diag_[J]) = diag_inv_[J].transpose() * s;
  }
}

}  // namespace clockwork
