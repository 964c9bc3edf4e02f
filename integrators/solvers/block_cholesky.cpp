#include "integrators/solvers/block_cholesky.hpp"

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
  diag_.resize(static_cast<std::size_t>(n));
  for (Eigen::Index J = 0; J < n; ++J) diag_[static_cast<std::size_t>(J)] = 3 * new_to_old.indices()[J];
  symbolic(static_cast<int>(n));
  return true;
}

void VertexBlockCholesky::symbolic(int n) {
  // The block pattern below the diagonal of the (symmetrised) vertex graph, by column.
  std::vector<std::vector<int>> below(static_cast<std::size_t>(n));
  for (Eigen::Index c = 0; c < permuted_.outerSize(); ++c)
    for (Sparse::InnerIterator it(permuted_, c); it; ++it) {
      const int I = static_cast<int>(it.row() / 3), J = static_cast<int>(c / 3);
      if (I > J) below[static_cast<std::size_t>(J)].push_back(I);
      if (I < J) below[static_cast<std::size_t>(I)].push_back(J);
    }
  // Column J of L: A's column J joined with the columns of its children in the
  // elimination tree (minus J itself); its parent is its first row.
  std::vector<int> mark(static_cast<std::size_t>(n), -1), first_child(static_cast<std::size_t>(n), -1),
      sibling(static_cast<std::size_t>(n), -1);
  col_start_.assign(1, 0);
  row_pos_.clear();
  for (int J = 0; J < n; ++J) {
    const auto begin = row_pos_.size();
    const auto add = [&](int I) {
      if (mark[static_cast<std::size_t>(I)] == J) return;
      mark[static_cast<std::size_t>(I)] = J;
      row_pos_.push_back(I);
    };
    for (const int I : below[static_cast<std::size_t>(J)]) add(I);
    for (int K = first_child[static_cast<std::size_t>(J)]; K >= 0; K = sibling[static_cast<std::size_t>(K)])
      for (int k = col_start_[static_cast<std::size_t>(K)]; k < col_start_[static_cast<std::size_t>(K) + 1]; ++k)
        if (row_pos_[static_cast<std::size_t>(k)] != J) add(row_pos_[static_cast<std::size_t>(k)]);
    std::sort(row_pos_.begin() + static_cast<std::ptrdiff_t>(begin), row_pos_.end());
    col_start_.push_back(static_cast<int>(row_pos_.size()));
    if (row_pos_.size() > begin) {
      const auto parent = static_cast<std::size_t>(row_pos_[begin]);
      sibling[static_cast<std::size_t>(J)] = first_child[parent];
      first_child[parent] = J;
    }
  }
  row_.resize(row_pos_.size());
  for (std::size_t k = 0; k < row_pos_.size(); ++k) row_[k] = diag_[static_cast<std::size_t>(row_pos_[k])];
  block_.resize(row_pos_.size());
  diag_inv_.resize(static_cast<std::size_t>(n));
  work_.resize(static_cast<std::size_t>(n));
  next_.resize(static_cast<std::size_t>(n));
  head_.resize(static_cast<std::size_t>(n));
  link_.resize(static_cast<std::size_t>(n));
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
  const int n = static_cast<int>(diag_.size());
  std::fill(head_.begin(), head_.end(), -1);
  const auto wait = [&](int K) {  // column K's next block row waits for K
    const int k = next_[static_cast<std::size_t>(K)];
    if (k == col_start_[static_cast<std::size_t>(K) + 1]) return;
    const auto I = static_cast<std::size_t>(row_pos_[static_cast<std::size_t>(k)]);
    link_[static_cast<std::size_t>(K)] = head_[I];
    head_[I] = K;
  };
  for (int J = 0; J < n; ++J) {
    const auto j = static_cast<std::size_t>(J);
    const int begin = col_start_[j], end = col_start_[j + 1];
    // W = A's block column J (the diagonal block and below) ...
    work_[j].setZero();
    for (int k = begin; k < end; ++k) work_[static_cast<std::size_t>(row_pos_[static_cast<std::size_t>(k)])].setZero();
    for (int c = 0; c < 3; ++c)
      for (Sparse::InnerIterator it(permuted_, 3 * J + c); it; ++it)
        if (it.row() >= 3 * J) work_[static_cast<std::size_t>(it.row() / 3)](it.row() % 3, c) += it.value();
    // ... minus L_{:,K} L_JKᵀ for every finished column K with a block in row J.
    for (int K = head_[j]; K >= 0;) {
      const auto kk = static_cast<std::size_t>(K);
      const int next_K = link_[kk];
      const int first = next_[kk];
      const Eigen::Matrix3d LJKt = block_[static_cast<std::size_t>(first)].transpose();
      work_[j].noalias() -= block_[static_cast<std::size_t>(first)] * LJKt;
      for (int k = first + 1; k < col_start_[kk + 1]; ++k)
        work_[static_cast<std::size_t>(row_pos_[static_cast<std::size_t>(k)])].noalias() -=
            block_[static_cast<std::size_t>(k)] * LJKt;
      next_[kk] = first + 1;
      wait(K);
      K = next_K;
    }
    // L_JJ L_JJᵀ = W_JJ; L_IJ = W_IJ L_JJ⁻ᵀ.
    const Eigen::LLT<Eigen::Matrix3d> llt(work_[j]);
    if (llt.info() != Eigen::Success || !work_[j].allFinite()) return false;
    diag_inv_[j] = llt.matrixL().solve(Eigen::Matrix3d::Identity());
    const Eigen::Matrix3d inv_t = diag_inv_[j].transpose();
    for (int k = begin; k < end; ++k)
      block_[static_cast<std::size_t>(k)].noalias() = work_[static_cast<std::size_t>(row_pos_[static_cast<std::size_t>(k)])] * inv_t;
    next_[j] = begin;
    wait(J);
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
