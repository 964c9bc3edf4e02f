#include "integrators/solvers/linear_solvers.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "integrators/solvers/block_cholesky.hpp"

namespace clockwork {

namespace {
template <typename Preconditioner>
using Cg =
    Eigen::ConjugateGradient<SparseSpdSolver::Sparse, Eigen::Lower | Eigen::Upper, Preconditioner>;

/// CG's preconditioner slot for an incomplete Cholesky factor that SparseSpdSolver
/// holds and refreshes when asked: CG's own factorize() then only takes the matrix.
class HeldIncompleteCholesky {
 public:
  void hold(const Eigen::IncompleteCholesky<double>* ic) { ic_ = ic; }
  template <typename M>
  HeldIncompleteCholesky& analyzePattern(const M&) { return *this; }
  template <typename M>
  HeldIncompleteCholesky& factorize(const M&) { return *this; }
  template <typename M>
  HeldIncompleteCholesky& compute(const M&) { return *this; }
  template <typename Rhs>
  auto solve(const Rhs& b) const { return ic_->solve(b); }
  Eigen::ComputationInfo info() const { return Eigen::Success; }

 private:
  const Eigen::IncompleteCholesky<double>* ic_ = nullptr;
};
}  // namespace

struct SparseSpdSolver::Impl {
  // Sparse Cholesky: by 3 × 3 vertex blocks when the unknowns come in vertex triples
  // (every implicit step here), else Eigen's scalar SimplicialLLT.
  VertexBlockCholesky block;
  bool use_block = false;
  Eigen::SimplicialLLT<Sparse> llt;
  Cg<Eigen::IdentityPreconditioner> cg;
  Cg<Eigen::DiagonalPreconditioner<double>> jacobi;
  Cg<HeldIncompleteCholesky> ichol;
  Eigen::IncompleteCholesky<double> ic;  ///< ichol's preconditioner
  bool ic_analyzed = false, ic_ready = false;
  Vector guess;  ///< the starting point of a solve from a guess
  bool llt_analyzed = false;
  bool cg_analyzed = false;
};

SparseSpdSolver::SparseSpdSolver(LinearSolverKind kind, double tolerance, int max_iterations,
                                 bool vertex_blocks)
    : kind_(kind), tolerance_(tolerance), vertex_blocks_(vertex_blocks), impl_(std::make_unique<Impl>()) {
  const auto setup = [&](auto& cg) {
    cg.setTolerance(tolerance);
    cg.setMaxIterations(max_iterations);
  };
  setup(impl_->cg);
  setup(impl_->jacobi);
  setup(impl_->ichol);
  impl_->ichol.preconditioner().hold(&impl_->ic);
}

SparseSpdSolver::~SparseSpdSolver() = default;
SparseSpdSolver::SparseSpdSolver(SparseSpdSolver&&) noexcept = default;
SparseSpdSolver& SparseSpdSolver::operator=(SparseSpdSolver&&) noexcept = default;

void SparseSpdSolver::reset_pattern() {
  impl_->llt_analyzed = false;
  impl_->cg_analyzed = false;
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
      if (refresh_preconditioner || !impl_->ic_ready) {
        if (!impl_->ic_analyzed) {
          impl_->ic.analyzePattern(A);
          impl_->ic_analyzed = true;
        }
        impl_->ic.factorize(A);
        impl_->ic_ready = impl_->ic.info() == Eigen::Success;
        if (!impl_->ic_ready) return false;
      }
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
