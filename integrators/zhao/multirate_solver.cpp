#include "integrators/zhao/multirate_solver.hpp"

#include "engine/health.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "integrators/zhao/multirate_region.hpp"

namespace clockwork {

using namespace multirate_internal;

MultirateSolver::~MultirateSolver() = default;

MultirateSolver::MultirateSolver(const TetFemModel& model, std::vector<MultirateRegion> regions,
                                 const std::vector<bool>& fixed, MultirateSettings settings)
    : model_(model), regions_(std::move(regions)), settings_(settings) {
  const std::size_t n = model.vertex_count();
  if (!(settings_.h_L > 0.0))
    throw std::invalid_argument(fmt::format("h_L must be > 0, got {}", settings_.h_L));
  if (!(settings_.rayleigh_alpha >= 0.0 && settings_.rayleigh_beta >= 0.0))
    throw std::invalid_argument("Rayleigh coefficients must be >= 0");
  if (!fixed.empty() && fixed.size() != n)
    throw std::invalid_argument("fixed flags must cover every vertex");
  group_.assign(n, -1);
  for (std::size_t a = 0; a < fixed.size(); ++a)
    if (fixed[a]) group_[a] = -2;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    MultirateRegion& reg = regions_[i];
    if (reg.m < 1)
      throw std::invalid_argument(
          fmt::format("region '{}': m must be a positive integer, got {}", reg.name, reg.m));
    std::vector<Index> kept;
    for (Index a : reg.vertices) {
      if (a >= n)
        throw std::invalid_argument(fmt::format("region '{}': vertex {} out of range (0..{})",
                                                reg.name, a, n - 1));
      if (group_[a] == -2) continue;  // prescribed: not an unknown of any region
      if (group_[a] >= 0)
        throw std::invalid_argument(fmt::format("vertex {} is in two regions: '{}' and '{}'", a,
                                                regions_[group_[a]].name, reg.name));
      group_[a] = static_cast<int>(i);
      kept.push_back(a);
    }
    if (kept.empty())
      throw std::invalid_argument(fmt::format("region '{}' has no free vertex", reg.name));
    std::sort(kept.begin(), kept.end());
    reg.vertices = std::move(kept);
  }
  // Regions must not share a tet: their blocks of eq. 23 would couple at different
  // substep times, which the scheme does not define.
  const auto& tets = model.tets();
  for (std::size_t t = 0; t < tets.size(); ++t) {
    int seen = -1;
    for (Index a : tets[t]) {
      const int g = group_[a];
      if (g < 0) continue;
      if (seen >= 0 && g != seen)
        throw std::invalid_argument(fmt::format(
            "regions '{}' and '{}' share tet {}: regions must be separated by the large-step "
            "region",
            regions_[seen].name, regions_[g].name, t));
      seen = g;
    }
  }
  for (std::size_t a = 0; a < n; ++a)
    if (group_[a] == -1) large_.push_back(static_cast<Index>(a));

  mass3_.resize(3 * n);
  for (std::size_t a = 0; a < n; ++a) mass3_.segment<3>(3 * a).setConstant(model.lumped_mass()[a]);
  P_L_ = selector(large_, n);
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    auto d = std::make_unique<RegionData>();
    d->m = regions_[i].m;
    d->h = settings_.h_L / d->m;
    d->P = selector(regions_[i].vertices, n);
    d->M = d->P * mass3_;
    d->scheme = settings_.coupling;
    data_.push_back(std::move(d));
  }
  for (std::size_t t = 0; t < tets.size(); ++t)
    for (Index a : tets[t])
      if (group_[a] >= 0) {
        RegionData& d = *data_[group_[a]];
        d.tets.push_back(t);
        d.stencil.insert(d.stencil.end(), tets[t].begin(), tets[t].end());
        break;
      }
  for (std::size_t i = 0; i < data_.size(); ++i) {
    RegionData& d = *data_[i];
    std::sort(d.stencil.begin(), d.stencil.end());
    d.stencil.erase(std::unique(d.stencil.begin(), d.stencil.end()), d.stencil.end());
    for (Index a : d.stencil)
      if (group_[a] == -1) d.stencil_L.push_back(a);
    d.response = regions_[i].vertices;
    d.response.insert(d.response.end(), d.stencil_L.begin(), d.stencil_L.end());
  }
}

const std::vector<Index>& MultirateSolver::region_stencil(std::size_t region) const {
  return data_.at(region)->stencil;
}

std::size_t MultirateSolver::interface_dofs() const {
  std::size_t s = 0;
  for (const auto& d : data_) s += d->J.size();
  return s;
}

void MultirateSolver::linearise(const Vector& x0) {
  const auto t0 = Clock::now();
  // Linear FEM's K is PSD already: projecting it would only cost (both forms are one).
  const bool psd = model_.kind() == FemKind::Corotational &&
                   settings_.damping == MultirateDamping::Projected;
  model_.hessian(x0, K_, psd);
  had_planes_ = !planes_.empty();
  if (had_planes_) {
    Triplets t;
    for (const TickPlane& p : planes_)
      if (delayed_region(p) < 0) p.add_hessian(x0, [](Index) { return true; }, [&](Index i, Index j, const Mat3& block) {
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) t.emplace_back(3 * i + r, 3 * j + c, block(r, c));
      });
    Kc_.resize(K_.rows(), K_.cols());
    Kc_.setFromTriplets(t.begin(), t.end());
    K_ += Kc_;
  }
  const double hL = settings_.h_L, a = settings_.rayleigh_alpha, b = settings_.rayleigh_beta;
  // eq. 25: A^L = M^LL + h_L D^LL + h_L² K^LL with D = αM + βK.
  const Sparse K_LL = P_L_ * K_ * P_L_.transpose();
  const Vector M_L = P_L_ * mass3_;
  A_L_ = (hL * b + hL * hL) * K_LL;
  for (Eigen::Index i = 0; i < M_L.size(); ++i) A_L_.coeffRef(i, i) += (1.0 + hL * a) * M_L[i];
  for (auto& dp : data_) {
    RegionData& d = *dp;
    d.K_S = d.P * K_;
    d.K_SS = d.K_S * d.P.transpose();
    d.K_SL = d.P * K_ * P_L_.transpose();
    d.K_LS = d.K_SL.transpose();
    d.G = d.h * d.h * d.K_SS;  // eq. 27 (the direct solve's blocks)
    d.gamma = d.h / (b + d.h);
    d.mass_scale = 1.0 + d.h * a;
    // eq. 24: A^S = M^SS + h_S D^SS + h_S² K^SS.
    d.A = (d.h * b + d.h * d.h) * d.K_SS;
    for (Eigen::Index i = 0; i < d.M.size(); ++i) d.A.coeffRef(i, i) += (1.0 + d.h * a) * d.M[i];
    // Interface: the columns of K^SL with entries.
    d.J.clear();
    Eigen::SparseMatrix<double, Eigen::ColMajor> cols = d.K_SL;
    for (Eigen::Index c = 0; c < cols.outerSize(); ++c)
      if (cols.outerIndexPtr()[c + 1] > cols.outerIndexPtr()[c]) d.J.push_back(c);
    d.W.resize(d.K_SL.rows(), static_cast<Eigen::Index>(d.J.size()));
    for (Eigen::Index j = 0; j < d.W.cols(); ++j) d.W.col(j) = cols.col(d.J[j]);
    d.I.clear();
    for (Eigen::Index i = 0; i < d.W.rows(); ++i)
      if (d.W.row(i).any()) d.I.push_back(i);
    d.W_I = d.W(d.I, Eigen::all).sparseView();
    if (d.interface_weight() > 0.0) {
      Sparse KF;
      model_.stiffness_of(x0, d.tets, KF, psd);
      d.KF_L = P_L_ * KF;
      d.KF_resp = selector(d.response, model_.vertex_count()) * KF;
      d.resp_factored = false;
      A_L_ -= (d.interface_weight() * hL * hL) * Sparse(d.KF_L * P_L_.transpose());
    }
  }
  linearise_delayed(x0);
  timings_.linearise += seconds_since(t0);
  linearised_ = true;
}

void MultirateSolver::factor() {
  const auto t0 = Clock::now();
  const double beta = settings_.rayleigh_beta;
  Triplets t;
  t.reserve(A_L_.nonZeros());
  add_block(t, A_L_, 0, 0);
  for (auto& dp : data_) {
    RegionData& d = *dp;
    if (!d.chol.compute(d.A))
      throw NumericalFailure("multirate: A^S is not positive definite", "", 0.0, NumericalFailure::kNoVertex, "multirate: A^S is not positive definite");
    factor_delayed(d);
    const Eigen::Index nj = d.W.cols();
    if (nj == 0) continue;
    // The J rows of H^LS (H^SS)⁻¹, by the adjoint of Algorithm 1: the J rows of H^LS
    // are [e_1 Wᵀ … e_m Wᵀ] (eq. 28: e_i = h_L h_S, e_m = h_L β + h_L h_S), and H^SSᵀ is
    // block upper triangular with the same symmetric blocks, so Q_q = (H^SS)⁻ᵀ-block q
    // follows from the backward substitution
    //   A^S Q_q = Z_q − G Σ_{r>q} Q_r + M Q_{q+1},   q = m..1,
    // which is the forward recurrence run in reverse order. Q is linear in W = U W_I
    // (U: the unit columns of the S interface DOFs I), so it runs on U's |I| columns
    // (rank(W) = |I| < |J|) and W_Iᵀ is applied after. With b̄^S_q = a − q k (eq. 29)
    // and B_q = c_q K^SL (eq. 26) only three sums are needed:
    //   H^LS (H^SS)⁻¹ b̄^S   = W_Iᵀ (S0ᵀ a − S1ᵀ k)    (J rows of eq. 36),
    //   H^LS (H^SS)⁻¹ H^SL = W_Iᵀ Scᵀ W               (J × J block of eq. 35),
    // S0 = Σ_q Q_q(U), S1 = Σ_q q Q_q(U), Sc = Σ_q c_q Q_q(U). So a step needs no
    // substitution before the H^LL* solve.
    const Eigen::Index ni = static_cast<Eigen::Index>(d.I.size());
    Eigen::MatrixXd S0(d.W.rows(), ni), S1(d.W.rows(), ni), Sc(d.W.rows(), ni);
    constexpr Eigen::Index kChunk = 8;
    tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, (ni + kChunk - 1) / kChunk),
                      [&](const tbb::blocked_range<Eigen::Index>& range) {
                        for (Eigen::Index ch = range.begin(); ch != range.end(); ++ch) {
                          const Eigen::Index c0 = ch * kChunk,
                                             w = std::min(kChunk, ni - c0);
                          Eigen::MatrixXd Wc = Eigen::MatrixXd::Zero(d.W.rows(), w);
                          for (Eigen::Index c = 0; c < w; ++c) Wc(d.I[c0 + c], c) = 1.0;
                          Eigen::MatrixXd P(Wc.rows(), w), prev(Wc.rows(), w), r(Wc.rows(), w),
                              x(Wc.rows(), w), s0 = Eigen::MatrixXd::Zero(Wc.rows(), w),
                              s1 = s0, sc = s0;
                          d.forward(
                              w,
                              [&](int k, Eigen::MatrixXd& y) {
                                y = d.e(d.m + 1 - k, beta) * Wc;
                              },
                              [&](int k, const Eigen::MatrixXd& X) {
                                const int q = d.m + 1 - k;
                                s0 += X;
                                s1 += double(q) * X;
                                sc += d.c(q, beta) * X;
                              },
                              P, prev, r, x, true);
                          S0.middleCols(c0, w) = s0;
                          S1.middleCols(c0, w) = s1;
                          Sc.middleCols(c0, w) = sc;
                        }
                      });
    d.S0t = S0.transpose();
    d.S1t = S1.transpose();
    const Eigen::MatrixXd corr = d.W_I.transpose() * (Sc.transpose() * d.W);
    for (Eigen::Index j = 0; j < nj; ++j)
      for (Eigen::Index i = 0; i < nj; ++i) t.emplace_back(d.J[i], d.J[j], -corr(i, j));
  }
  if (!large_.empty()) {
    const Eigen::Index nl = 3 * static_cast<Eigen::Index>(large_.size());
    schur_.resize(nl, nl);
    schur_.setFromTriplets(t.begin(), t.end());  // duplicates summed: A^L − corrections
    if (settings_.symmetric_schur) {
      const Sparse sym = 0.5 * (schur_ + Sparse(schur_.transpose()));
      if (settings_.block_cholesky && !schur_block_)
        schur_block_ = std::make_unique<VertexBlockCholesky>();
      if (schur_block_ && !schur_block_->compute(sym)) schur_block_.reset();  // not SPD
      if (!schur_block_) {
        schur_ldlt_.compute(sym);
        if (schur_ldlt_.info() != Eigen::Success)
          throw NumericalFailure("multirate: symmetric H^LL* factorisation failed", "", 0.0, NumericalFailure::kNoVertex, "multirate: symmetric H^LL* factorisation failed");
      }
    } else {
      schur_.makeCompressed();
      schur_lu_.compute(schur_);
      if (schur_lu_.info() != Eigen::Success)
        throw NumericalFailure("multirate: H^LL* factorisation failed", "", 0.0, NumericalFailure::kNoVertex, "multirate: H^LL* factorisation failed");
    }
  }
  factored_ = true;
  timings_.factor += seconds_since(t0);
}

void MultirateSolver::rhs(const Vector& x0, const Vector& v0, const Vector& f_ext) {
  if (model_.kind() == FemKind::Linear) {
    // Linear FEM: f_int(x0) = K (x0 − X) exactly; one pass over K for both products.
    uv_.resize(x0.size(), 2);
    uv_.col(0) = x0 - model_.rest_positions();
    uv_.col(1) = v0;
    Kuv_.noalias() = K_ * uv_;
    f_int0_ = Kuv_.col(0);
    Kv_ = Kuv_.col(1);
    if (had_planes_) f_int0_.noalias() -= Kc_ * uv_.col(0);  // K_ holds the planes too
  } else {
    model_.gradient(x0, f_int0_);
    Kv_.noalias() = K_ * v0;
  }
  for (const TickPlane& p : planes_)
    if (delayed_region(p) < 0) p.add_gradient(x0, f_int0_, [](Index) { return true; });
  Dv_ = settings_.rayleigh_alpha * mass3_.cwiseProduct(v0) + settings_.rayleigh_beta * Kv_;
  x0_ = x0;
  const double hL = settings_.h_L;
  common_ = f_ext - f_int0_ - Dv_;
  b_L_.resize(3 * static_cast<Eigen::Index>(large_.size()));
  for (std::size_t j = 0; j < large_.size(); ++j)  // P_L (common − h_L K v0), gathered
    b_L_.segment<3>(3 * j) =
        hL * (common_.segment<3>(3 * large_[j]) - hL * Kv_.segment<3>(3 * large_[j]));
  for (std::size_t i = 0; i < data_.size(); ++i) {
    RegionData& d = *data_[i];
    const std::vector<Index>& verts = regions_[i].vertices;
    d.a.resize(3 * static_cast<Eigen::Index>(verts.size()));
    d.k.resize(d.a.size());
    for (std::size_t j = 0; j < verts.size(); ++j) {  // P common_, P Kv_ as gathers
      d.a.segment<3>(3 * j) = d.h * common_.segment<3>(3 * verts[j]);
      d.k.segment<3>(3 * j) = (d.h * d.h) * Kv_.segment<3>(3 * verts[j]);
    }
    if (d.interface_weight() > 0.0) {
      d.correction.noalias() = d.KF_L * v0;
      b_L_ += (d.interface_weight() * hL * hL) * d.correction;
    }
  }
  delayed_rhs(x0, v0);
}

void MultirateSolver::step(const Vector& x0, const Vector& v0, const Vector& f_ext,
                           MultirateStep& out) {
  const bool corotational = model_.kind() == FemKind::Corotational;
  // Planes change K: with planes, and once after them, linear FEM re-linearises too.
  const bool relinearise = !linearised_ || corotational || !planes_.empty() || had_planes_;
  if (relinearise) linearise(x0);
  if (!factored_ || relinearise) factor();
  const auto t0 = Clock::now();
  const double beta = settings_.rayleigh_beta;
  const std::size_t n3 = 3 * model_.vertex_count();
  rhs(x0, v0, f_ext);
  const auto t_rhs = Clock::now();
  timings_.rhs += seconds_between(t0, t_rhs);
  // eq. 36 on the interface rows (the only non-zero rows of H^LS).
  b_star_ = b_L_;
  for (auto& dp : data_) {
    RegionData& d = *dp;
    if (d.J.empty()) continue;
    d.reduced.noalias() = d.S0t * d.a;
    d.reduced.noalias() -= d.S1t * d.k;
    d.correction.noalias() = d.W_I.transpose() * d.reduced;
    for (std::size_t j = 0; j < d.J.size(); ++j) b_star_[d.J[j]] -= d.correction[j];
    if (d.delayed) add_delayed_schur_rhs(d);
  }
  const auto t1 = Clock::now();
  timings_.schur_rhs += seconds_between(t_rhs, t1);
  // eq. 34.
  if (!large_.empty()) {
    if (schur_block_) {
      dv_L_ = b_star_;
      schur_block_->solve_in_place(dv_L_);
    } else if (settings_.symmetric_schur) dv_L_ = schur_ldlt_.solve(b_star_);
    else dv_L_ = schur_lu_.solve(b_star_);
  }
  // Results: zero everything once per layout, then only the owned entries per step.
  const bool fresh = out.layout != this || out.dv_L.size() != Eigen::Index(n3);
  if (fresh) {
    out.dv_L.setZero(n3);
    out.dv_S.assign(data_.size(), {});
    for (std::size_t i = 0; i < data_.size(); ++i)
      out.dv_S[i].assign(data_[i]->m, Vector::Zero(Eigen::Index(n3)));
    out.layout = this;
  }
  for (std::size_t j = 0; j < large_.size(); ++j)
    out.dv_L.segment<3>(3 * large_[j]) = dv_L_.segment<3>(3 * j);
  timings_.schur_solve += seconds_since(t1);
  // eq. 37: Δv̄^S = (H^SS)⁻¹ (b̄^S − H^SL Δv^L).
  for (std::size_t i = 0; i < data_.size(); ++i) {
    RegionData& d = *data_[i];
    if (large_.empty()) d.coupling.setZero(d.a.size());
    else d.coupling.noalias() = d.K_LS.transpose() * dv_L_;  // row-wise: 3|S| dots
    d.forward(
        1,
        [&](int r, Vector& y) {
          y = d.a - double(r) * d.k - d.c(r, beta) * d.coupling;
          if (d.delayed) y -= d.shift[static_cast<std::size_t>(r - 1)];
        },
        [&](int r, const Vector& X) {
          Vector& o = out.dv_S[i][r - 1];
          const std::vector<Index>& verts = regions_[i].vertices;
          for (std::size_t j = 0; j < verts.size(); ++j)
            o.segment<3>(3 * verts[j]) = X.segment<3>(3 * j);
        },
        d.gsum, d.prev, d.rhs, d.x);
  }
  timings_.solve += seconds_since(t0);
}

void MultirateSolver::substep(std::size_t region, const Vector& x, const Vector& v,
                              const Vector& f_ext, Vector& dv) {
  assert(factored_ && x.size() == x0_.size() && v.size() == x0_.size());
  RegionData& d = *data_.at(region);
  const double h = d.h;
  const std::vector<Index>& verts = regions_[region].vertices;
  d.sub.resize(3 * static_cast<Eigen::Index>(verts.size()));
  for (std::size_t j = 0; j < verts.size(); ++j) {  // P (f_ext − f_int(x_0) − α M v), gathered
    const Eigen::Index o = 3 * static_cast<Eigen::Index>(verts[j]);
    d.sub.segment<3>(3 * j) = f_ext.segment<3>(o) - f_int0_.segment<3>(o) -
                              settings_.rayleigh_alpha * mass3_[o] * v.segment<3>(o);
  }
  uv_.resize(x.size(), 2);
  uv_.col(0) = x - x0_;
  uv_.col(1) = v;
  d.coupling.noalias() = d.K_S * uv_.col(0);
  d.sub -= d.coupling;
  d.coupling.noalias() = d.K_S * uv_.col(1);
  d.sub -= (settings_.rayleigh_beta + h) * d.coupling;
  d.sub *= h;
  d.chol.solve_in_place(d.sub);
  for (std::size_t j = 0; j < verts.size(); ++j) dv.segment<3>(3 * verts[j]) = d.sub.segment<3>(3 * j);
}

bool MultirateSolver::substep_change(std::size_t region, const Vector& dx, const Vector& dv,
                                     Vector& out) {
  assert(factored_ && dx.size() == x0_.size() && dv.size() == x0_.size());
  RegionData& d = *data_.at(region);
  const double h = d.h, alpha = settings_.rayleigh_alpha;
  d.dxv = dx;
  d.dxv += (settings_.rayleigh_beta + h) * dv;
  if (d.KF_resp.rows() > 0) {
    if (!d.resp_factored) {  // once per linearisation, on the first substep that needs it
      Sparse A = d.KF_resp * selector(d.response, model_.vertex_count()).transpose();
      A *= h * (settings_.rayleigh_beta + h);
      for (std::size_t j = 0; j < d.response.size(); ++j)
        for (int c = 0; c < 3; ++c) {
          const Eigen::Index i = 3 * static_cast<Eigen::Index>(j) + c;
          A.coeffRef(i, i) += (1.0 + h * alpha) * mass3_[3 * d.response[j] + c];
        }
      if (!d.resp_chol.compute(A))
        throw NumericalFailure("multirate: the substep response matrix is not positive definite", "", 0.0,
                               NumericalFailure::kNoVertex, "multirate: the substep response matrix is not positive definite");
      d.resp_factored = true;
    }
    d.f_resp.noalias() = d.KF_resp * d.dxv;
    for (std::size_t j = 0; j < d.response.size(); ++j) {
      const Eigen::Index o = 3 * static_cast<Eigen::Index>(d.response[j]);
      d.f_resp.segment<3>(3 * j) += alpha * mass3_[o] * dv.segment<3>(o);
    }
    d.f_resp *= -h;
    d.resp_chol.solve_in_place(d.f_resp);
    for (std::size_t j = 0; j < d.response.size(); ++j)
      out.segment<3>(3 * d.response[j]) = d.f_resp.segment<3>(3 * j);
    return true;
  }
  d.sub.noalias() = d.K_S * d.dxv;
  const std::vector<Index>& verts = regions_[region].vertices;
  for (std::size_t j = 0; j < verts.size(); ++j) {
    const Eigen::Index o = 3 * static_cast<Eigen::Index>(verts[j]);
    d.sub.segment<3>(3 * j) += settings_.rayleigh_alpha * mass3_[o] * dv.segment<3>(o);
  }
  d.sub *= -h;
  d.chol.solve_in_place(d.sub);
  for (std::size_t j = 0; j < verts.size(); ++j)
    out.segment<3>(3 * verts[j]) = d.sub.segment<3>(3 * j);
  return false;
}

const std::vector<Index>& MultirateSolver::region_interface(std::size_t region) const {
  return data_.at(region)->stencil_L;
}

}  // namespace clockwork
