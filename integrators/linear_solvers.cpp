#include "integrators/linear_solvers.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "integrators/block_cholesky.hpp"

namespace clockwork {

namespace {
template <typename Preconditioner>
using Cg =
    Eigen::ConjugateGradient<SparseSpdSolver::Sparse, Eigen::Lower | Eigen::Upper, Preconditioner>;
}  // namespace

struct SparseSpdSolver::Impl {
  // Sparse Cholesky: by 3 × 3 vertex blocks when the unknowns come in vertex triples
  // (every implicit step here), else Eigen's scalar SimplicialLLT.
  VertexBlockCholesky block;
  bool use_block = false;
  Eigen::SimplicialLLT<Sparse> llt;
  Cg<Eigen::IdentityPreconditioner> cg;
  Cg<Eigen::DiagonalPreconditioner<double>> jacobi;
  Cg<Eigen::IncompleteCholesky<double>> ichol;
  Vector guess;  ///< the starting point of a solve from a guess
  bool llt_analyzed = false;
  bool cg_analyzed = false;
};

SparseSpdSolver::SparseSpdSolver(LinearSolverKind kind, double tolerance, int max_iterations)
    : kind_(kind), tolerance_(tolerance), impl_(std::make_unique<Impl>()) {
  const auto setup = [&](auto& cg) {
    cg.setTolerance(tolerance);
    cg.setMaxIterations(max_iterations);
  };
  setup(impl_->cg);
  setup(impl_->jacobi);
  setup(impl_->ichol);
}

SparseSpdSolver::~SparseSpdSolver() = default;
SparseSpdSolver::SparseSpdSolver(SparseSpdSolver&&) noexcept = default;
SparseSpdSolver& SparseSpdSolver::operator=(SparseSpdSolver&&) noexcept = default;

void SparseSpdSolver::reset_pattern() {
  impl_->llt_analyzed = false;
  impl_->cg_analyzed = false;
}

bool SparseSpdSolver::try_cholesky(const Sparse& A) {
  if (!impl_->llt_analyzed) {
    impl_->use_block = A.rows() % 3 == 0 && A.isCompressed() && impl_->block.analyze(A);
    if (!impl_->use_block) impl_->llt.analyzePattern(A);
    impl_->llt_analyzed = true;
  }
  if (impl_->use_block) return impl_->block.factorize(A);
  impl_->llt.factorize(A);
  return impl_->llt.info() == Eigen::Success;
}

bool SparseSpdSolver::factorize(const Sparse& A) {
  const auto prepare = [&](auto& cg) {
    if (!impl_->cg_analyzed) {
      cg.analyzePattern(A);
      impl_->cg_analyzed = true;
    }
    cg.factorize(A);
    return cg.info() == Eigen::Success;
  };
  switch (kind_) {
    case LinearSolverKind::Cholesky:
      return try_cholesky(A);
    case LinearSolverKind::CG:
      return prepare(impl_->cg);
    case LinearSolverKind::PcgJacobi:
      return prepare(impl_->jacobi);
    case LinearSolverKind::PcgIncompleteCholesky:
      return prepare(impl_->ichol);
  }
  return false;
}

int SparseSpdSolver::solve(const Vector& b, Vector& x) { return solve(b, x, tolerance_, false); }

int SparseSpdSolver::solve(const Vector& b, Vector& x, double tolerance, bool guess) {
  const auto run = [&](auto& cg) {
    cg.setTolerance(tolerance);
    if (guess) {
      impl_->guess = x;
      x = cg.solveWithGuess(b, impl_->guess);
    } else {
      x = cg.solve(b);
    }
    return static_cast<int>(cg.iterations());
  };
  switch (kind_) {
    case LinearSolverKind::Cholesky:
      if (impl_->use_block) {
        x = b;
        impl_->block.solve_in_place(x);
      } else {
        x = impl_->llt.solve(b);
      }
      return 0;
    case LinearSolverKind::CG:
      return run(impl_->cg);
    case LinearSolverKind::PcgJacobi:
      return run(impl_->jacobi);
    case LinearSolverKind::PcgIncompleteCholesky:
      return run(impl_->ichol);
  }
  return 0;
}

}  // namespace clockwork
