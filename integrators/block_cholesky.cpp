#include "integrators/block_cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <algorithm>
#include <cassert>

namespace clockwork {

bool VertexBlockCholesky::analyze(const Sparse& A) {
  if (A.rows() != A.cols() || A.rows() % 3 != 0 || !A.isCompressed()) return false;
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
  const auto moved = [&](Eigen::Index i) { return 3 * position[i / 3] + i % 3; };
  // The permuted pattern, with each of A's values' place in it.
  t.clear();
  for (Eigen::Index c = 0; c < A.outerSize(); ++c)
    for (Sparse::InnerIterator it(A, c); it; ++it) t.emplace_back(moved(it.row()), moved(it.col()), 1.0);
  permuted_.resize(A.rows(), A.cols());
  permuted_.setFromTriplets(t.begin(), t.end());
  permuted_.makeCompressed();
  value_slot_.resize(static_cast<std::size_t>(A.nonZeros()));
  std::size_t k = 0;
  for (Eigen::Index c = 0; c < A.outerSize(); ++c)
    for (Sparse::InnerIterator it(A, c); it; ++it, ++k) {
      const Eigen::Index r = moved(it.row()), cc = moved(it.col());
      const int* begin = permuted_.innerIndexPtr() + permuted_.outerIndexPtr()[cc];
      const int* end = permuted_.innerIndexPtr() + permuted_.outerIndexPtr()[cc + 1];
      value_slot_[k] = static_cast<int>(std::lower_bound(begin, end, r) - permuted_.innerIndexPtr());
    }
  llt_.analyzePattern(permuted_);
  diag_.resize(static_cast<std::size_t>(n));
  for (Eigen::Index J = 0; J < n; ++J) diag_[static_cast<std::size_t>(J)] = 3 * new_to_old.indices()[J];
  blocks_known_ = false;
  return true;
}

bool VertexBlockCholesky::compute(const Sparse& A) {
  if (A.isCompressed()) return analyze(A) && factorize(A);
  Sparse compressed = A;
  compressed.makeCompressed();
  return analyze(compressed) && factorize(compressed);
}

bool VertexBlockCholesky::factorize(const Sparse& A) {
  assert(static_cast<std::size_t>(A.nonZeros()) == value_slot_.size());
  double* p = permuted_.valuePtr();
  std::fill(p, p + permuted_.nonZeros(), 0.0);
  for (std::size_t k = 0; k < value_slot_.size(); ++k) p[value_slot_[k]] += A.valuePtr()[k];
  llt_.factorize(permuted_);
  if (llt_.info() != Eigen::Success) return false;
  const Sparse& L = llt_.matrixL().nestedExpression();
  const std::size_t n = diag_.size();
  if (!blocks_known_) {
    // Group L's columns 3J..3J+2 into 3 × 3 blocks once: L's pattern is fixed by the
    // analysis, so later factorisations only scatter values through l_slot_.
    col_start_.assign(1, 0);
    row_.clear();
    l_slot_.clear();
    std::vector<int> slot(n, -1);  // block of row I in the current column
    for (std::size_t J = 0; J < n; ++J) {
      const int first = static_cast<int>(row_.size());
      for (int c = 0; c < 3; ++c)
        for (Sparse::InnerIterator it(L, static_cast<Eigen::Index>(3 * J + c)); it; ++it) {
          const std::size_t I = static_cast<std::size_t>(it.row() / 3);
          const int rc = static_cast<int>(it.row() % 3) + 3 * c;
          if (I == J) {
            l_slot_.push_back(-1 - (9 * static_cast<int>(J) + rc));
            continue;
          }
          if (slot[I] < first) {
            slot[I] = static_cast<int>(row_.size());
            row_.push_back(diag_[I]);
          }
          l_slot_.push_back(9 * slot[I] + rc);
        }
      col_start_.push_back(static_cast<int>(row_.size()));
    }
    block_.resize(row_.size());
    diag_raw_.resize(n);
    diag_inv_.resize(n);
    blocks_known_ = true;
  }
  assert(static_cast<std::size_t>(L.nonZeros()) == l_slot_.size());
  for (auto& b : block_) b.setZero();
  for (auto& d : diag_raw_) d.setZero();
  double* blocks = block_.empty() ? nullptr : block_.front().data();
  double* diags = diag_raw_.front().data();
  for (std::size_t k = 0; k < l_slot_.size(); ++k) {
    const int s = l_slot_[k];
    if (s >= 0) blocks[s] = L.valuePtr()[k];
    else diags[-1 - s] = L.valuePtr()[k];
  }
  for (std::size_t J = 0; J < n; ++J)
    diag_inv_[J] = diag_raw_[J].triangularView<Eigen::Lower>().solve(Eigen::Matrix3d::Identity());
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
