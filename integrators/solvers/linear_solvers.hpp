#pragma once
/// The sparse symmetric solvers of the implicit steps (lecture-implicit-euler-methods.md,
/// "Linear Solvers"): sparse Cholesky (by 3 × 3 vertex blocks, block_cholesky.hpp, when
/// the size is a multiple of 3 — ~3× faster to factor the bunny's step matrix than Eigen's
/// scalar SimplicialLLT, used otherwise), conjugate gradients, and
/// CG preconditioned by Jacobi (the diagonal) or an incomplete Cholesky factor (Eigen
/// IncompleteCholesky); the three iterative kinds run nonlinear.hpp's pcg() under the
/// stopping rule of Eigen's ConjugateGradient (PcgRule::Eigen). The symbolic analysis
/// (Cholesky ordering and elimination tree, incomplete-Cholesky ordering) is done once
/// per sparsity pattern and reused.
#include <Eigen/Sparse>
#include <memory>

namespace clockwork {

enum class LinearSolverKind { Cholesky, CG, PcgJacobi, PcgIncompleteCholesky };

class SparseSpdSolver {
 public:
  using Sparse = Eigen::SparseMatrix<double>;
  using Vector = Eigen::VectorXd;

  /// `tolerance`: relative residual ||A x − b|| / ||b|| of the iterative solvers.
  /// `vertex_blocks` false: the sparse Cholesky is Eigen's scalar one even where the
  /// vertex-block one applies (the phantom ticks' default: the two agree to round-off,
  /// and the phantom contact demos are sensitive to it, implicit_tick.hpp).
  SparseSpdSolver(LinearSolverKind kind, double tolerance, int max_iterations,
                  bool vertex_blocks = true);
  ~SparseSpdSolver();
  SparseSpdSolver(SparseSpdSolver&&) noexcept;
  SparseSpdSolver& operator=(SparseSpdSolver&&) noexcept;

  LinearSolverKind kind() const { return kind_; }
  /// Forget the analysed pattern (call when the matrix's pattern changes).
  void reset_pattern();
  /// Prepares solves with A (full symmetric storage, compressed; same pattern as the
  /// previous call unless reset_pattern): Cholesky factorises, PCG builds the
  /// preconditioner and keeps A's address for its products (A must outlive the
  /// solves). False if a Cholesky factorisation fails (A not numerically SPD).
  /// `refresh_preconditioner` false: the incomplete-Cholesky PCG keeps the factor of an
  /// earlier matrix as its preconditioner (any SPD one preconditions CG; a Newton
  /// step's matrices differ little, and the factor costs more than a solve).
  bool factorize(const Sparse& A, bool refresh_preconditioner = true);
  /// Whether the sparse Cholesky of A succeeds (the definiteness test of global
  /// regularisation); for the Cholesky kind the factor is kept for solve().
  bool try_cholesky(const Sparse& A);
  /// x = A⁻¹ b for the last factorised A; returns the iterations taken (0: Cholesky;
  /// CG counts as Eigen's ConjugateGradient does, the product that converged not counted).
  int solve(const Vector& b, Vector& x);
  /// The same, the iterative solvers to the relative residual `tolerance` (instead of
  /// the constructor's) and, if `guess`, starting from x's value instead of 0 (inexact
  /// Newton, backward_euler.cpp). Cholesky ignores both.
  int solve(const Vector& b, Vector& x, double tolerance, bool guess);

 private:
  struct Impl;
  LinearSolverKind kind_;
  double tolerance_;
  bool vertex_blocks_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clockwork
