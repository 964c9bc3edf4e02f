#pragma once
/// The one derivative-check harness (STYLE practice 6), for both levels of the energy
/// interface (engine/energy_term.hpp): central differences of the value against
/// the gradient and of the gradient against the Hessian, relative errors with a floor,
/// the Hessian's symmetry, and its PSD projection — PSD, and equal to the Hessian where
/// that one is PSD already. The errors are computed apart from the checks, so that a
/// test can show a wrong derivative is caught (test_energy_derivatives "self-check").
#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Sparse>
#include <algorithm>
#include <random>

#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork::test {

/// Random perturbation of `rest` by `scale` (uniform per coordinate), seeded.
template <int N>
StencilPositions<N> perturbed(const StencilPositions<N>& rest, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  StencilPositions<N> x = rest;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < 3; ++i) x(i, j) += scale * u(rng);
  return x;
}

/// Relative error |a − b| / max(|a|, |b|, floor).
template <typename A, typename B>
double relative_error(const A& a, const B& b, double floor) {
  return (a - b).norm() / std::max({a.norm(), b.norm(), floor});
}

/// What the harness measures at one state; all relative.
struct DerivativeErrors {
  double gradient = 0.0;    ///< ∇V against central differences of V
  double hessian = 0.0;     ///< ∇²V against central differences of ∇V
  double asymmetry = 0.0;   ///< |H − Hᵀ| / |H|
  double negativity = 0.0;  ///< max(0, −λ_min(projected H)) / |H|: 0 for a PSD projection
  bool hessian_psd = false;  ///< the unprojected H is PSD (λ_min ≥ −1e-10 |H|)
  double projection_change = 0.0;  ///< |projected H − H| / |H|, where H is PSD
};

/// The errors from the function values: V(x ± h e_k) and ∇V(x ± h e_k) for every
/// coordinate k of x, through `at(k, ±h)` returning {V, ∇V}.
template <typename Vector, typename Matrix, typename At>
DerivativeErrors errors_from(double value, const Vector& g, const Matrix& H, const Matrix& H_psd,
                             double size, double h, At at) {
  const Eigen::Index n = g.size();
  Vector g_fd = g;
  Matrix H_fd = H;
  for (Eigen::Index k = 0; k < n; ++k) {
    const auto [vp, gp] = at(k, h);
    const auto [vm, gm] = at(k, -h);
    g_fd[k] = (vp - vm) / (2 * h);
    H_fd.col(k) = (gp - gm) / (2 * h);
  }
  DerivativeErrors e;
  const double floor_g = 1e-8 * (std::abs(value) / size + g.norm()) + 1e-300;
  const double scale = std::max(H.norm(), 1e-300);
  e.gradient = relative_error(g, g_fd, floor_g);
  e.hessian = relative_error(H, H_fd, 1e-8 * H.norm() + 1e-300);
  e.asymmetry = (H - H.transpose()).norm() / scale;
  const Matrix Hp_sym = 0.5 * (H_psd + H_psd.transpose());
  const double min_projected = Eigen::SelfAdjointEigenSolver<Matrix>(Hp_sym).eigenvalues().minCoeff();
  e.negativity = std::max(0.0, -min_projected) / scale;
  const Matrix H_sym = 0.5 * (H + H.transpose());
  e.hessian_psd = Eigen::SelfAdjointEigenSolver<Matrix>(H_sym).eigenvalues().minCoeff() >= -1e-10 * scale;
  if (e.hessian_psd) e.projection_change = (H_psd - H).norm() / scale;
  return e;
}

/// The largest distance of a stencil's vertices from its first: the step's scale.
template <int N>
double stencil_size(const StencilPositions<N>& x) {
  double size = 0.0;
  for (int j = 1; j < N; ++j) size = std::max(size, (x.col(j) - x.col(0)).norm());
  return size == 0.0 ? std::max(1.0, x.norm()) : size;
}

/// Per stencil: step h = 1e-6 × the stencil's size.
template <EnergyTerm Term>
DerivativeErrors derivative_errors(const Term& term, const StencilPositions<Term::kVertices>& x) {
  constexpr int N = Term::kVertices;
  const double size = stencil_size(x);
  const StencilMatrix<N> H = term.hessian(x, false), H_psd = term.hessian(x, true);
  return errors_from(term.value(x), StencilVector<N>(term.gradient(x)), H, H_psd, size, 1e-6 * size,
                     [&](Eigen::Index k, double h) {
                       StencilPositions<N> y = x;
                       y(k % 3, k / 3) += h;
                       return std::pair{term.value(y), StencilVector<N>(term.gradient(y))};
                     });
}

/// Assembled over a body: step h = 1e-6 × `size` (the body's element size).
template <AssembledEnergy Energy>
DerivativeErrors derivative_errors(const Energy& energy, const Eigen::VectorXd& X, double size) {
  Eigen::VectorXd g;
  energy.gradient(X, g);
  Eigen::SparseMatrix<double> H, H_psd;
  energy.hessian(X, H, false);
  energy.hessian(X, H_psd, true);
  return errors_from(energy.value(X), g, Eigen::MatrixXd(H), Eigen::MatrixXd(H_psd), size, 1e-6 * size,
                     [&](Eigen::Index k, double h) {
                       Eigen::VectorXd Y = X, gy;
                       Y[k] += h;
                       energy.gradient(Y, gy);
                       return std::pair{energy.value(Y), gy};
                     });
}

/// The checks on those errors: derivatives within `tolerance`, H symmetric, its
/// projection PSD and, where H is PSD, H itself (both to 1e-9).
inline void check_errors(const DerivativeErrors& e, double tolerance) {
  CAPTURE(e.gradient);
  CAPTURE(e.hessian);
  CAPTURE(e.asymmetry);
  CAPTURE(e.negativity);
  CAPTURE(e.hessian_psd);
  CAPTURE(e.projection_change);
  CHECK(e.gradient < tolerance);
  CHECK(e.hessian < tolerance);
  CHECK(e.asymmetry <= 1e-10);
  CHECK(e.negativity <= 1e-9);
  CHECK(e.projection_change <= 1e-9);
}

template <EnergyTerm Term>
DerivativeErrors check_derivatives(const Term& term, const StencilPositions<Term::kVertices>& x,
                                   double tolerance = 1e-6) {
  CAPTURE(x);
  const DerivativeErrors e = derivative_errors(term, x);
  check_errors(e, tolerance);
  return e;
}

template <AssembledEnergy Energy>
DerivativeErrors check_derivatives(const Energy& energy, const Eigen::VectorXd& X, double size,
                                   double tolerance = 1e-6) {
  const DerivativeErrors e = derivative_errors(energy, X, size);
  check_errors(e, tolerance);
  return e;
}

/// Force-vs-Jacobian check for velocity-dependent forces (wind).
template <typename Term>
void check_force_jacobians(const Term& term, const StencilPositions<Term::kVertices>& x,
                           const StencilPositions<Term::kVertices>& v, double tolerance = 1e-6) {
  constexpr int N = Term::kVertices;
  const double hx = 1e-6 * std::max((x.col(1) - x.col(0)).norm(), 1e-12);
  const double hv = 1e-6 * std::max(v.norm(), 1.0);
  const auto Jx = term.force_jacobian_x(x, v);
  const auto Jv = term.force_jacobian_v(x, v);
  auto Jx_fd = Jx, Jv_fd = Jv;
  for (int k = 0; k < 3 * N; ++k) {
    StencilPositions<N> p = x, m = x;
    p(k % 3, k / 3) += hx;
    m(k % 3, k / 3) -= hx;
    Jx_fd.col(k) = (term.force(p, v) - term.force(m, v)) / (2 * hx);
    p = v;
    m = v;
    p(k % 3, k / 3) += hv;
    m(k % 3, k / 3) -= hv;
    Jv_fd.col(k) = (term.force(x, p) - term.force(x, m)) / (2 * hv);
  }
  const double ex = relative_error(Jx, Jx_fd, 1e-8 * Jx.norm() + 1e-300);
  const double ev = relative_error(Jv, Jv_fd, 1e-8 * Jv.norm() + 1e-300);
  CAPTURE(ex);
  CAPTURE(ev);
  CHECK(ex < tolerance);
  CHECK(ev < tolerance);
}

}  // namespace clockwork::test
