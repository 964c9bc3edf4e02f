#pragma once
/// Private to the multi-rate solver (multirate_solver.cpp, multirate_direct.cpp): the
/// per-region data of MultirateSolver and the small helpers both files use. Not a
/// public header: nothing outside the solver includes it.
#include <chrono>
#include <memory>
#include <vector>

#include "integrators/solvers/block_cholesky.hpp"
#include "integrators/zhao/multirate_solver.hpp"

namespace clockwork {

namespace multirate_internal {

using Clock = std::chrono::steady_clock;
inline double seconds_between(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double>(t1 - t0).count();
}
inline double seconds_since(Clock::time_point t0) { return seconds_between(t0, Clock::now()); }

using Triplets = std::vector<Eigen::Triplet<double>>;

/// Appends s · block at (row, col) of a larger matrix.
inline void add_block(Triplets& out, const Eigen::SparseMatrix<double>& block, Eigen::Index row,
                      Eigen::Index col, double s = 1.0) {
  for (int k = 0; k < block.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(block, k); it; ++it)
      out.emplace_back(row + it.row(), col + it.col(), s * it.value());
}

/// Selector of the DOFs of `vertices` (3|vertices| × 3n).
inline Eigen::SparseMatrix<double> selector(const std::vector<Index>& vertices, std::size_t n) {
  Eigen::SparseMatrix<double> P(3 * static_cast<Eigen::Index>(vertices.size()),
                                3 * static_cast<Eigen::Index>(n));
  Triplets t;
  t.reserve(3 * vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i)
    for (int c = 0; c < 3; ++c) t.emplace_back(3 * i + c, 3 * vertices[i] + c, 1.0);
  P.setFromTriplets(t.begin(), t.end());
  return P;
}

}  // namespace multirate_internal

struct MultirateSolver::RegionData {
  int m = 1;
  double h = 0.0;  // h_S
  Sparse P;        // selector of the region's DOFs
  Sparse K_SS, K_SL, K_LS, G, A;
  Sparse K_S;      // the region's rows of K, all columns (substep())
  std::vector<std::size_t> tets;  // the tets with a vertex in the region
  std::vector<Index> stencil;     // their vertices
  std::vector<Index> stencil_L;   // those of L (the interface neighbours)
  Sparse KF_L;     // conservative coupling: L rows of those tets' stiffness, all columns
  // Conservative coupling, m > 1: substep_change() moves S and stencil_L together.
  std::vector<Index> response;  // the region's vertices, then stencil_L
  Sparse KF_resp;               // the region tets' stiffness, rows of `response`
  VertexBlockCholesky resp_chol;  // (1 + h α) M + h (β + h) K_F on `response`
  bool resp_factored = false;
  Vector dxv, f_resp;           // substep_change() scratch
  Vector M;        // lumped masses per DOF
  VertexBlockCholesky chol;  // A^S: m solves in sequence per step (Algorithm 1)
  std::vector<Eigen::Index> J;  // interface DOFs of L (L numbering)
  std::vector<Eigen::Index> I;  // interface DOFs of S: the rows of K^SL with entries
  Eigen::MatrixXd W;            // K_SL[:, J]
  Sparse W_I;                   // K_SL[I, J]: W = (unit columns of I) W_I
  // H^LS (H^SS)⁻¹ is linear in W, so it is W_Iᵀ times the same rows for the unit
  // columns of I — |I| rows instead of |J| (rank(W) = |I|); eq. 36's J rows are
  // W_Iᵀ (S0t a − S1t k).
  Eigen::MatrixXd S0t, S1t;     // |I| × 3|S|
  Vector reduced;               // S0t a − S1t k
  // Scratch of the forward substitution of a step.
  Vector a, k, coupling, correction, gsum, prev, rhs, x, sub;
  MultirateCoupling scheme = MultirateCoupling::Conservative;
  // Planes that act from a later substep (TickPlane::first_substep > 1; multirate_planes.cpp):
  // per substep r (index r − 1), Kd_S the stiffness of the planes acting in it (the
  // region's rows, all columns; empty if none), Kd_SS its region columns, A_r =
  // A^S + (h β + h²) Kd_SS with its factor (null where A_r = A^S), and shift the
  // planes' share of b̄_r, b̄_r = a − r k − shift_r (eq. 29 with K + Kd_r, f_int + f_d).
  std::vector<Sparse> Kd_S, Kd_SS;
  std::vector<std::unique_ptr<VertexBlockCholesky>> chol_r;
  std::vector<Vector> shift;
  bool delayed = false;  ///< the region has such planes this step
  /// The factor of substep r's matrix A_r.
  const VertexBlockCholesky& solver(int r) const {
    return delayed && chol_r[static_cast<std::size_t>(r - 1)] ? *chol_r[static_cast<std::size_t>(r - 1)] : chol;
  }

  /// c_r of B_r = c_r K^SL (eq. 26 with M^SL = 0, D^SL = β K^SL; conservative: S sees
  /// u_r^L − u_0^L = r h_S v_m^L and D^SL v_m^L).
  double c(int r, double beta) const {
    if (scheme == MultirateCoupling::Paper) return (r * h * beta + double(r) * r * h * h) / m;
    return h * (beta + r * h);
  }
  /// e_i of E_i = e_i K^LS, the S block i of L's row (eq. 28: E for i < m, F for i = m;
  /// conservative: L takes h_S Σ_r K^LS (u_r^S − u_0^S) + β K^LS v_r^S).
  double e(int i, double beta) const {
    if (scheme == MultirateCoupling::Paper) return m * h * h + (i == m ? m * h * beta : 0.0);
    return h * (beta + (m - i + 1) * h);
  }
  /// Conservative coupling: L's share of its region tets' stiffness at h_L², the
  /// average of r/m over the substeps: A^L carries h_L² (K^LL − w K_F^LL), b^L adds
  /// h_L² w K_F v_0, with w = (m − 1)/(2m); 0 for the paper's coupling and for m = 1.
  double interface_weight() const {
    return scheme == MultirateCoupling::Paper ? 0.0 : (m - 1.0) / (2.0 * m);
  }

  /// Algorithm 1 on one right-hand-side column set: Y(r) gives Y_r; visit(r, X_r).
  /// G P_{r−1} is carried as a sum without products with G: A^S = (1 + h α) M +
  /// (h β + h²) K^SS and G = h² K^SS (eq. 24, 27) give
  ///   G X_r = γ (A^S X_r − (1 + h α) M X_r),   γ = h / (β + h),
  /// and A^S X_r is the right-hand side just solved. With delayed planes substep r has
  /// its own A_r and G_r = h² (K^SS + Kd_r), and the same γ relates them:
  /// γ (A_r X − (1 + h α) M X) = G_r X. Row r of the forward substitution holds
  /// G_r P_{r−1}: the sum carries G P_{r−1} (G_r X_r less h² Kd_r X_r) and the row adds
  /// h² Kd_r P_{r−1}. `reverse`: iteration k solves the adjoint's row q = m + 1 − k
  /// (factor()), whose sum is Σ_{r>q} G_r Q_r: the sum of G_q Q_q as solved.
  template <typename Mat, typename Rhs, typename Visit>
  void forward(Eigen::Index cols, Rhs&& Y, Visit&& visit, Mat& g_sum, Mat& prev_x, Mat& r_buf,
               Mat& x_buf, bool reverse = false) const {
    g_sum.setZero(A.rows(), cols);
    prev_x.setZero(A.rows(), cols);
    Mat p_sum;  // P_{r−1}, forward with delayed planes only
    if (delayed && !reverse) p_sum.setZero(A.rows(), cols);
    for (int r = 1; r <= m; ++r) {
      Y(r, r_buf);
      r_buf -= g_sum;
      r_buf += M.asDiagonal() * prev_x;
      const Sparse* Kd = delayed && !reverse && Kd_SS[static_cast<std::size_t>(r - 1)].nonZeros() > 0
                             ? &Kd_SS[static_cast<std::size_t>(r - 1)]
                             : nullptr;
      if (Kd) r_buf -= (h * h) * (*Kd * p_sum);
      x_buf = r_buf;
      const VertexBlockCholesky& s = solver(reverse ? m + 1 - r : r);
      for (Eigen::Index c = 0; c < cols; ++c) s.solve_in_place(x_buf.col(c));
      g_sum += gamma * (r_buf - mass_scale * (M.asDiagonal() * x_buf));
      if (Kd) g_sum -= (h * h) * (*Kd * x_buf);
      if (delayed && !reverse) p_sum += x_buf;
      visit(r, x_buf);
      prev_x.swap(x_buf);
    }
  }
  double gamma = 0.0, mass_scale = 1.0;  // h / (β + h), 1 + h α
};

}  // namespace clockwork
