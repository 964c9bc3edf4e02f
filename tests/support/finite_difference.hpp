#pragma once
/// The one derivative-check harness (STYLE practice 6): central differences of the
/// value against the gradient and of the gradient against the Hessian, at a given
/// state, with relative tolerances; both sides printed on failure.
#include <doctest/doctest.h>

#include <random>

#include "engine/types.hpp"

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

/// Checks gradient against central differences of value, and Hessian against
/// central differences of gradient, with step h = 1e-6 × the stencil's size.
template <typename Term>
void check_derivatives(const Term& term, const StencilPositions<Term::kVertices>& x,
                       double tolerance = 1e-6) {
  constexpr int N = Term::kVertices;
  double size = 0.0;
  for (int j = 1; j < N; ++j) size = std::max(size, (x.col(j) - x.col(0)).norm());
  if (size == 0.0) size = std::max(1.0, x.norm());
  const double h = 1e-6 * size;
  const StencilVector<N> g = term.gradient(x);
  const StencilMatrix<N> H = term.hessian(x);
  StencilVector<N> g_fd;
  StencilMatrix<N> H_fd;
  for (int k = 0; k < 3 * N; ++k) {
    StencilPositions<N> xp = x, xm = x;
    xp(k % 3, k / 3) += h;
    xm(k % 3, k / 3) -= h;
    g_fd[k] = (term.value(xp) - term.value(xm)) / (2 * h);
    H_fd.col(k) = (term.gradient(xp) - term.gradient(xm)) / (2 * h);
  }
  const double floor_g = 1e-8 * (std::abs(term.value(x)) / size + g.norm()) + 1e-300;
  const double floor_H = 1e-8 * H.norm() + 1e-300;
  const double eg = relative_error(g, g_fd, floor_g);
  const double eH = relative_error(H, H_fd, floor_H);
  CAPTURE(g.transpose());
  CAPTURE(g_fd.transpose());
  CAPTURE(eg);
  CAPTURE(eH);
  CHECK(eg < tolerance);
  CHECK(eH < tolerance);
  CHECK((H - H.transpose()).norm() <= 1e-10 * std::max(H.norm(), 1e-300));
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
