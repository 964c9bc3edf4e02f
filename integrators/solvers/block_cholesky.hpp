#pragma once
/// Sparse Cholesky A = Pᵀ L Lᵀ P of a symmetric positive definite matrix whose unknowns
/// come in vertex triples (3 DOFs per vertex), with L stored as dense 3 × 3 blocks.
///
/// Why: the multi-rate step (Zhao et al., eq. 37 / Algorithm 1) solves with the same
/// small factor m times in sequence, and the large solves of eq. 34 and of the phantom
/// ticks stream a big factor; Eigen's scalar simplicial triangular solves spend about a
/// nanosecond per non-zero on index chasing. Ordering by vertices (AMD on the vertex
/// graph, so a vertex's three DOFs stay together) and storing L by 3 × 3 blocks does
/// one index load per nine multiply-adds: ~3× faster per solve at 480 unknowns, ~2× at
/// 11 k (`bench_multirate table1`, docs/performance.md). The numeric factorisation works
/// on the same blocks (left-looking, George & Liu's column Cholesky with 3 × 3 entries):
/// each update L_IK L_JKᵀ is 27 multiply-adds per index load, where Eigen's scalar
/// SimplicialLLT, which it replaces, chased an index per multiply-add (the phantom
/// ticks' preconditioner refreshes were 43 % of the cape run).
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <vector>

namespace clockwork {

class VertexBlockCholesky {
 public:
  using Sparse = Eigen::SparseMatrix<double>;

  /// Orders and analyses the pattern of A (3n × 3n, full symmetric storage,
  /// compressed). False if its size is not a multiple of 3.
  bool analyze(const Sparse& A);
  /// Factorises A, which has the analysed pattern (same non-zeros in the same order).
  /// False if A is not numerically positive definite.
  bool factorize(const Sparse& A);
  /// analyze + factorize (of a compressed copy if A is not compressed).
  bool compute(const Sparse& A);
  /// x ← A⁻¹ x (3n). Const and allocation-free: concurrent solves are safe.
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const;
  Eigen::Index rows() const { return 3 * static_cast<Eigen::Index>(diag_.size()); }
  /// Stored 3 × 3 blocks of L below the diagonal.
  std::size_t off_diagonal_blocks() const { return row_.size(); }

 private:
  /// L's block pattern from permuted_'s (elimination tree of the vertex graph).
  void symbolic(int n);

  // Block column J of L is the vertex at position J of the elimination order; offsets
  // are that vertex's first DOF in A's numbering, so solves need no permuted copy
  // (and are safe to run concurrently on different right-hand sides).
  std::vector<int> diag_;                  ///< DOF offset of block column J
  std::vector<Eigen::Matrix3d> diag_inv_;  ///< (L_JJ)⁻¹, lower triangular
  std::vector<int> col_start_;  ///< block column J's blocks: [col_start_[J], col_start_[J+1])
  std::vector<int> row_;        ///< their block rows' DOF offsets (rows after J in the order)
  std::vector<Eigen::Matrix3d> block_;  ///< L_IJ
  std::vector<int> row_pos_;    ///< the same blocks' rows as positions in the order
  // Analysis, reused by factorize().
  Sparse permuted_;              ///< A in the vertex order
  std::vector<int> value_slot_;  ///< A's k-th stored value → permuted_'s
  // factorize()'s workspace: the column being formed (by block row), and for every
  // finished column K the next of its blocks still to be applied (next_[K]) and the
  // list of columns waiting on each block row (head_ → link_).
  std::vector<Eigen::Matrix3d> work_;
  std::vector<int> next_, head_, link_;
};

}  // namespace clockwork
