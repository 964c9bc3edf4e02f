// MultirateSolver::step_direct: eq. 23 assembled whole and solved by sparse LU, the
// reference the Schur-complement path of multirate_solver.cpp is tested against.
#include <Eigen/SparseLU>

#include "engine/health.hpp"
#include "integrators/zhao/multirate_region.hpp"

namespace clockwork {

using namespace multirate_internal;


void MultirateSolver::step_direct(const Vector& x0, const Vector& v0, const Vector& f_ext,
                                  MultirateStep& out, double* factor_seconds,
                                  double* solve_seconds) {
  if (!linearised_ || model_.kind() == FemKind::Corotational || !planes_.empty() || had_planes_)
    linearise(x0);
  const auto t0 = Clock::now();
  const double beta = settings_.rayleigh_beta;
  // Unknowns: region 0's m_0 blocks, region 1's, ..., then L (eq. 23).
  std::vector<Eigen::Index> offset(data_.size());
  Eigen::Index size = 0;
  for (std::size_t i = 0; i < data_.size(); ++i) {
    offset[i] = size;
    size += data_[i]->m * data_[i]->A.rows();
  }
  const Eigen::Index oL = size;
  size += A_L_.rows();
  Triplets t;
  add_block(t, A_L_, oL, oL);
  for (std::size_t i = 0; i < data_.size(); ++i) {
    const RegionData& d = *data_[i];
    const Eigen::Index s = d.A.rows();
    Sparse Mdiag(s, s);
    Mdiag.setIdentity();
    Mdiag = d.M.asDiagonal() * Mdiag;
    const Sparse C = d.G - Mdiag;  // eq. 27
    const double hd = d.h * beta + d.h * d.h;
    for (int r = 1; r <= d.m; ++r) {
      const Eigen::Index row = offset[i] + (r - 1) * s;
      add_block(t, d.A, row, offset[i] + (r - 1) * s);
      if (r >= 2) add_block(t, C, row, offset[i] + (r - 2) * s);
      for (int q = 1; q <= r - 2; ++q) add_block(t, d.G, row, offset[i] + (q - 1) * s);
      // Planes acting from a later substep (multirate_planes.cpp): A_r = A + (hβ + h²) Kd_r
      // and G_r = G + h² Kd_r in substep r's row.
      if (d.delayed && d.Kd_SS[static_cast<std::size_t>(r - 1)].nonZeros() > 0) {
        const Sparse& Kd = d.Kd_SS[static_cast<std::size_t>(r - 1)];
        add_block(t, Kd, row, offset[i] + (r - 1) * s, hd);
        for (int q = 1; q <= r - 1; ++q) add_block(t, Kd, row, offset[i] + (q - 1) * s, d.h * d.h);
      }
      add_block(t, d.K_SL, row, oL, d.c(r, beta));                                // eq. 26
      add_block(t, d.K_LS, oL, offset[i] + (r - 1) * s, d.e(r, beta));            // eq. 28
    }
  }
  Sparse H(size, size);
  H.setFromTriplets(t.begin(), t.end());
  H.makeCompressed();
  Eigen::SparseLU<Sparse> lu;
  lu.compute(H);
  if (lu.info() != Eigen::Success) throw NumericalFailure("multirate: eq. 23 LU failed", "", 0.0, NumericalFailure::kNoVertex, "multirate: eq. 23 LU failed");
  if (factor_seconds) *factor_seconds = seconds_since(t0);
  const auto t1 = Clock::now();
  rhs(x0, v0, f_ext);
  Vector b(size);
  b.tail(A_L_.rows()) = b_L_;
  for (std::size_t i = 0; i < data_.size(); ++i) {
    const RegionData& d = *data_[i];
    for (int r = 1; r <= d.m; ++r) {
      auto block = b.segment(offset[i] + (r - 1) * d.A.rows(), d.A.rows());
      block = d.a - double(r) * d.k;
      if (d.delayed) block -= d.shift[static_cast<std::size_t>(r - 1)];
    }
  }
  const Vector x = lu.solve(b);
  if (solve_seconds) *solve_seconds = seconds_since(t1);
  out.dv_L = P_L_.transpose() * x.tail(A_L_.rows());
  out.layout = nullptr;  // whole vectors written here; step() re-zeroes on first use
  out.dv_S.resize(data_.size());
  for (std::size_t i = 0; i < data_.size(); ++i) {
    const RegionData& d = *data_[i];
    out.dv_S[i].resize(d.m);
    for (int r = 1; r <= d.m; ++r)
      out.dv_S[i][r - 1] = d.P.transpose() * x.segment(offset[i] + (r - 1) * d.A.rows(), d.A.rows());
  }
}

}  // namespace clockwork
