// MultirateSolver's planes that act from a later substep of the large step
// (TickPlane::first_substep; docs/zhao.md "Contact inside the large step").
//
// Why: a plane held as a spring in all m substeps pulls a point that reaches it only in
// the step's later substeps towards it before it arrives; a pair plane's active set
// (SolidSource::process) then drops it, and the layers alone stop the bodies (issue 41:
// backward Euler at 5 ms against a 10 ms Zhao block at m = 4, 0.57 J -> 0.94 J). So such
// a plane is in the substeps r ≥ q only. Substep r of region S (conservative coupling,
// Zhao et al. eq. 20–22 with the plane's spring in K and f_int) then reads
//   [(1 + hα) M + (hβ + h²)(K + Kd_r)] u_r
//     = a − r k − shift_r − G_r P_{r−1} + M u_{r−1} − c_r K^SL Δv^L,
//   G_r = h² (K + Kd_r),  shift_r = h (f_d,r(x_0) + β Kd_r v_0) + r h² Kd_r v_0,
// u_r = Δv^S_{0,r}, Kd_r and f_d,r the stiffness and force at x_0 of the planes with
// q ≤ r (each exact: a plane is linear in x). The region's block of eq. 23 stays lower
// triangular with A_r on its diagonal; the γ of Algorithm 1 relates A_r and G_r as it
// relates A^S and G (RegionData::forward), and the adjoint substitution of factor()
// takes A_q, G_q in the reverse order. The planes touch only the region's vertices (and
// prescribed ones), so K^SL, the coupling blocks B_r, E_r and A^L are unchanged.
#include "engine/health.hpp"
#include "integrators/zhao/multirate_region.hpp"

namespace clockwork {

using namespace multirate_internal;

int MultirateSolver::delayed_region(const TickPlane& p) const {
  if (p.first_substep <= 1) return -1;
  int region = -1;
  for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
    if (p.weights[i] == 0.0) continue;
    const int g = group_[p.vertices[i]];
    if (g == -2) continue;  // prescribed: no unknown
    if (g == -1 || (region >= 0 && g != region)) return -1;
    region = g;
  }
  return region;
}

void MultirateSolver::linearise_delayed(const Vector& x0) {
  const std::size_t n3 = 3 * model_.vertex_count();
  std::vector<std::vector<const TickPlane*>> of(data_.size());
  for (const TickPlane& p : planes_) {
    const int g = delayed_region(p);
    if (g >= 0) of[static_cast<std::size_t>(g)].push_back(&p);
  }
  for (std::size_t i = 0; i < data_.size(); ++i) {
    RegionData& d = *data_[i];
    d.delayed = !of[i].empty();
    d.Kd_S.assign(static_cast<std::size_t>(d.m), Sparse());
    d.Kd_SS.assign(static_cast<std::size_t>(d.m), Sparse());
    if (!d.delayed) continue;
    // Substep r holds the planes with first_substep ≤ r: the sets grow with r, each is
    // assembled whole (m is small; a region's planes are a few hundred).
    for (int r = 2; r <= d.m; ++r) {
      Triplets t;
      for (const TickPlane* p : of[i]) {
        if (p->first_substep > r) continue;
        p->add_hessian(x0, [](Index) { return true; }, [&](Index a, Index b, const Mat3& block) {
          for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 3; ++col) t.emplace_back(3 * a + row, 3 * b + col, block(row, col));
        });
      }
      if (t.empty()) continue;
      Sparse Kd(static_cast<Eigen::Index>(n3), static_cast<Eigen::Index>(n3));
      Kd.setFromTriplets(t.begin(), t.end());
      const auto k = static_cast<std::size_t>(r - 1);
      d.Kd_S[k] = d.P * Kd;
      d.Kd_SS[k] = d.Kd_S[k] * d.P.transpose();
    }
  }
}

void MultirateSolver::factor_delayed(RegionData& d) const {
  d.chol_r.resize(static_cast<std::size_t>(d.m));
  if (!d.delayed) return;
  const double scale = d.h * settings_.rayleigh_beta + d.h * d.h;
  for (std::size_t k = 0; k < d.chol_r.size(); ++k) {
    if (d.Kd_SS[k].nonZeros() == 0) {
      d.chol_r[k].reset();
      continue;
    }
    const Sparse A = d.A + scale * d.Kd_SS[k];
    if (!d.chol_r[k]) d.chol_r[k] = std::make_unique<VertexBlockCholesky>();
    if (!d.chol_r[k]->compute(A))
      throw NumericalFailure("multirate: A^S with planes is not positive definite", "", 0.0,
                             NumericalFailure::kNoVertex, "multirate: A^S with planes is not positive definite");
  }
}

void MultirateSolver::delayed_rhs(const Vector& x0, const Vector& v0) {
  for (std::size_t i = 0; i < data_.size(); ++i) {
    RegionData& d = *data_[i];
    if (!d.delayed) continue;
    d.shift.assign(static_cast<std::size_t>(d.m), Vector::Zero(d.a.size()));
    Vector f(x0.size());
    for (int r = 2; r <= d.m; ++r) {
      const auto k = static_cast<std::size_t>(r - 1);
      if (d.Kd_S[k].nonZeros() == 0) continue;
      f.setZero();
      for (const TickPlane& p : planes_)
        if (delayed_region(p) == static_cast<int>(i) && p.first_substep <= r)
          p.add_gradient(x0, f, [](Index) { return true; });
      const Vector Kv = d.Kd_S[k] * v0;
      d.shift[k] = d.h * (d.P * f + settings_.rayleigh_beta * Kv) + (double(r) * d.h * d.h) * Kv;
    }
  }
}

void MultirateSolver::add_delayed_schur_rhs(RegionData& d) {
  if (large_.empty()) return;
  // H^LS (H^SS)⁻¹ shift = Σ_q e_q K^LS X_q with H^SS X = shift (one substitution).
  Vector sum = Vector::Zero(b_star_.size());
  const double beta = settings_.rayleigh_beta;
  d.forward(
      1, [&](int r, Vector& y) { y = d.shift[static_cast<std::size_t>(r - 1)]; },
      [&](int r, const Vector& X) { sum.noalias() += d.e(r, beta) * (d.K_LS * X); }, d.gsum, d.prev, d.rhs,
      d.x);
  b_star_ += sum;
}

}  // namespace clockwork
