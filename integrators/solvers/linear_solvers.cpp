#include "integrators/solvers/linear_solvers.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "integrators/solvers/block_cholesky.hpp"
#include "integrators/solvers/nonlinear.hpp"

namespace clockwork {

struct SparseSpdSolver::Impl {
  // Sparse Cholesky: by 3 × 3 vertex blocks when the unknowns come in vertex triples
  // (every implicit step here), else Eigen's scalar SimplicialLLT.
  VertexBlockCholesky block;
  bool use_block = false;
  Eigen::SimplicialLLT<Sparse> llt;
  bool llt_analyzed = false;
  // The iterative kinds: nonlinear.hpp's pcg() under Eigen's rule, on the matrix of the
  // last factorize() (held by address, as Eigen's ConjugateGradient holds it by
  // reference: it must outlive the solves), preconditioned by its diagonal or by an
  // incomplete Cholesky factor that may be an earlier matrix's.
  const Sparse* matrix = nullptr;
  int max_iterations = 0;
  Eigen::DiagonalPreconditioner<double> jacobi;
  Eigen::IncompleteCholesky<double> ic;
  bool ic_analyzed = false, ic_ready = false;
  PcgWorkspace work;  ///< pcg()'s vectors, kept between solves
};

SparseSpdSolver::SparseSpdSolver(LinearSolverKind kind, double tolerance, int max_iterations,
                                 bool vertex_blocks)
    : kind_(kind), tolerance_(tolerance), vertex_blocks_(vertex_blocks), impl_(std::make_unique<Impl>()) {
  impl_->max_iterations = max_iterations;
}

SparseSpdSolver::~SparseSpdSolver() = default;
SparseSpdSolver::SparseSpdSolver(SparseSpdSolver&&) noexcept = default;
SparseSpdSolver& SparseSpdSolver::operator=(SparseSpdSolver&&) noexcept = default;

void SparseSpdSolver::reset_pattern() {
  impl_->llt_analyzed = false;
  impl_->ic_analyzed = false;
  impl_->ic_ready = false;
}

bool SparseSpdSolver::try_cholesky(const Sparse& A) {
  if (!impl_->llt_analyzed) {
    impl_->use_block = vertex_blocks_ && A.rows() % 3 == 0 && A.isCompressed() && impl_->block.analyze(A);
    if (!impl_->use_block) impl_->llt.analyzePattern(A);
    impl_->llt_analyzed = true;
  }
  if (impl_->use_block) return impl_->block.factorize(A);
  impl_->llt.factorize(A);
  return impl_->llt.info() == Eigen::Success;
}

bool SparseSpdSolver::factorize(const Sparse& A, bool refresh_preconditioner) {
  switch (kind_) {
    case LinearSolverKind::Cholesky:
      return try_cholesky(A);
    case LinearSolverKind::CG:
      break;
    case LinearSolverKind::PcgJacobi:
      impl_->jacobi.factorize(A);
      break;
    case LinearSolverKind::PcgIncompleteCholesky:
      if (refresh_preconditioner || !impl_->ic_ready) {
        if (!impl_->ic_analyzed) {
          impl_->ic.analyzePattern(A);
          impl_->ic_analyzed = true;
        }
        impl_->ic.factorize(A);
        impl_->ic_ready = impl_->ic.info() == Eigen::Success;
        if (!impl_->ic_ready) return false;
      }
      break;
  }
  impl_->matrix = &A;
  return true;
}

int SparseSpdSolver::solve(const Vector& b, Vector& x) { return solve(b, x, tolerance_, false); }

int SparseSpdSolver::solve(const Vector& b, Vector& x, double tolerance, bool guess) {
  if (kind_ == LinearSolverKind::Cholesky) {
    if (impl_->use_block) {
      x = b;
      impl_->block.solve_in_place(x);
    } else {
      x = impl_->llt.solve(b);
    }
    return 0;
  }
  if (!guess) x.setZero(b.size());
  const Sparse& A = *impl_->matrix;
  // A is symmetric in full storage; Aᵀ p is the product Eigen's ConjugateGradient<…,
  // Lower | Upper> takes (row by row over the column-major storage), with its sums'
  // order, so that these solves keep the last bits they had with it.
  const auto apply_a = [&](const Vector& in, Vector& out) { out.noalias() = A.transpose() * in; };
  const auto no_filter = [](Vector&) {};
  const PcgSettings settings{tolerance, impl_->max_iterations, PcgRule::Eigen};
  PcgReport report;
  switch (kind_) {
    case LinearSolverKind::CG:
      report = pcg(
          apply_a, [](const Vector& r, Vector& z) { z = r; }, no_filter, b, x, settings,
          impl_->work);
      break;
    case LinearSolverKind::PcgJacobi:
      report = pcg(
          apply_a, [&](const Vector& r, Vector& z) { z = impl_->jacobi.solve(r); }, no_filter, b, x,
          settings, impl_->work);
      break;
    case LinearSolverKind::PcgIncompleteCholesky:
      report = pcg(
          apply_a, [&](const Vector& r, Vector& z) { z = impl_->ic.solve(r); }, no_filter, b, x,
          settings, impl_->work);
      break;
    case LinearSolverKind::Cholesky:
      break;
  }
  // Eigen's count, which the CG columns of bench/results/backward_euler_bunny.txt hold:
  // the product of the iteration that converged not counted.
  return report.converged && report.iterations > 0 ? report.iterations - 1 : report.iterations;
}

}  // namespace clockwork
